"""A rejected CSV names every bad line it has (up to the cap), from the CLI, the admin's page
and the page's import job, and still imports nothing."""

from __future__ import annotations

import html
import io
import uuid

import pytest
from sqlalchemy import select

from extensions import db
from models.jobs import Job
from models.stock import ImportLog, Loja
from services.stock import import_csv, importer
from tests.factories import make_user
from tests.stock.test_import import PRODUCTS, STORES, days_ago, ok, run_import, snapshot
from tests.test_pages_remanejamento import hx, sign_in, text

STOCK_HEADER = "loja,sku,tamanho,qtd\n"
# Line 3: a field error; line 5: a duplicate of line 2; line 6: an unknown sku;
# line 7: an unknown store; line 8: a row with a field missing. Lines 2 and 4 are good.
STOCK_WITH_FIVE_BAD_LINES = STOCK_HEADER + (
    "LJ001,TEN-001-PRT,38,4\n"
    "LJ001,TEN-001-PRT,39,muitos\n"
    "LJ001,TEN-001-PRT,40,2\n"
    "LJ001,TEN-001-PRT,38,5\n"
    "LJ001,TEN-999,38,1\n"
    "LJ404,TEN-001-PRT,41,1\n"
    "LJ001,CAM-002-BCO,M\n"
)
STOCK_ERRORS = [
    "line 3: qtd must be a whole number >= 0, got 'muitos'",
    "line 5: stock of LJ001 / TEN-001-PRT / 38 already given on line 2",
    "line 6: unknown sku 'TEN-999'",
    "line 7: unknown store loja 'LJ404'",
    "line 8: expected 4 fields, found 3",
]


@pytest.fixture
def stores_and_products(runner, tmp_path):
    ok(run_import(runner, tmp_path, "stores", STORES))
    ok(run_import(runner, tmp_path, "products", PRODUCTS))


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(("line ", "... and"))]


def test_the_cli_lists_every_bad_line_and_imports_nothing(app, runner, tmp_path, stores_and_products):
    before = snapshot(app)
    result = run_import(runner, tmp_path, "stock", STOCK_WITH_FIVE_BAD_LINES)
    assert result.exit_code == 1
    assert "stock.csv rejected, nothing was imported:" in result.output
    assert error_lines(result.output) == STOCK_ERRORS
    assert snapshot(app) == before
    with app.app_context():
        log = db.session.scalars(select(ImportLog).where(ImportLog.ok.is_(False))).one()
        assert (log.error_line, log.more_errors) == (3, 0)
        assert [f"line {e['line']}: {e['reason']}" for e in log.error_list] == STOCK_ERRORS


def test_sales_collect_errors_while_streaming(app, runner, tmp_path, stores_and_products):
    d1, future = days_ago(app, 2), days_ago(app, -3)
    rows = [
        f"{d1},LJ001,TEN-001-PRT,38,7",
        f"{future},LJ001,TEN-001-PRT,38,1",
        f"{d1},LJ001,TEN-001-PRT,38,2",
        f"{d1},LJ001,TEN-001-PRT,44,1",
        "2026-02-30,LJ001,TEN-001-PRT,39,1",
        f"{d1},LJ001,TEN-001-PRT,40,-1",
    ]
    before = snapshot(app)
    result = run_import(runner, tmp_path, "sales", "data,loja,sku,tamanho,qtd\n" + "\n".join(rows) + "\n")
    assert result.exit_code == 1
    found = error_lines(result.output)
    assert [line.split(":")[0] for line in found] == ["line 3", "line 4", "line 5", "line 6", "line 7"]
    assert "is in the future" in found[0] and "already given on line 2" in found[1]
    assert "size '44' is not in the grid" in found[2] and "is not a calendar date" in found[3]
    assert "qtd must be a whole number" in found[4]
    assert snapshot(app) == before


def test_every_kind_reports_more_than_one_line(app, runner, tmp_path, stores_and_products):
    cases = {
        "stores": (
            "codigo,nome,cidade,lat,lng,is_cd,bloqueada\nLJ010,A,B,,,talvez,false\nLJ011,A,B,95,10,false,false\n",
            ["line 2: is_cd must be true or false", "line 3: lat 95 is outside"],
        ),
        "products": (
            "sku,nome,marca,categoria,colecao,cor,tamanhos,imagem\n"
            "NEW-1,,M,C,K,Azul,P|M,\nNEW-2,N,M,C,K,Azul,P|P,\nNEW-2,N,M,C,K,Azul,P|M,\n",
            ["line 2: nome is empty", "line 3: tamanhos repeats P", "line 4: sku 'NEW-2' already appears"],
        ),
        "campaigns": (
            "sku,loja,inicio,fim\nTEN-404,,2026-01-01,2026-01-31\nTEN-001-PRT,,2026-02-10,2026-02-01\n",
            ["line 2: unknown sku 'TEN-404'", "line 3: fim 2026-02-01 is before inicio 2026-02-10"],
        ),
    }
    before = snapshot(app)
    for kind, (content, expected) in cases.items():
        result = run_import(runner, tmp_path, kind, content)
        assert result.exit_code == 1, result.output
        found = error_lines(result.output)
        assert len(found) == len(expected), result.output
        for line, start in zip(found, expected, strict=True):
            assert line.startswith(start), (kind, line)
    assert snapshot(app) == before


def test_a_grid_refused_for_held_stock_is_one_line_among_the_others(
    app, runner, tmp_path, stores_and_products
):
    ok(
        run_import(
            runner, tmp_path, "stock", STOCK_HEADER + "LJ001,TEN-001-PRT,40,2\nLJ001,TEN-001-PRT,41,1\n"
        )
    )
    before = snapshot(app)
    content = (
        "sku,nome,marca,categoria,colecao,cor,tamanhos,imagem\n"
        "TEN-001-PRT,Tênis,Passo Firme,Tênis,Verão 2026,Preto,38|39,\n"
        "NEW-1,,M,C,K,Azul,P|M,\n"
    )
    result = run_import(runner, tmp_path, "products", content)
    assert result.exit_code == 1
    found = error_lines(result.output)
    assert len(found) == 2, result.output
    assert found[0].startswith("line 2: the new grid of TEN-001-PRT drops size")
    assert found[1] == "line 3: nome is empty"
    assert snapshot(app) == before


def test_broken_quoting_stops_the_reading_but_keeps_the_errors_before_it(
    app, runner, tmp_path, stores_and_products
):
    content = STOCK_HEADER + 'LJ001,TEN-404,38,1\nLJ001,"TEN-001-PRT"x,38,1\nLJ001,TEN-405,38,1\n'
    result = run_import(runner, tmp_path, "stock", content)
    assert result.exit_code == 1
    found = error_lines(result.output)
    assert found[0] == "line 2: unknown sku 'TEN-404'"
    assert found[1].startswith("line 3: malformed CSV") and "were not read" in found[1]
    assert len(found) == 2


def test_the_list_stops_at_the_cap_and_counts_the_rest(app, runner, tmp_path, stores_and_products):
    cap = importer.MAX_REPORTED_ERRORS
    rows = [f"LJ001,SKU-{n},38,1" for n in range(cap + 7)]
    before = snapshot(app)
    result = run_import(runner, tmp_path, "stock", STOCK_HEADER + "\n".join(rows) + "\n")
    assert result.exit_code == 1
    found = error_lines(result.output)
    assert len(found) == cap + 1
    assert found[0] == "line 2: unknown sku 'SKU-0'"
    assert found[cap - 1] == f"line {cap + 1}: unknown sku 'SKU-{cap - 1}'"
    assert found[-1] == "... and 7 more line(s) with errors"
    assert snapshot(app) == before
    with app.app_context():
        log = db.session.scalars(select(ImportLog).where(ImportLog.ok.is_(False))).one()
        assert len(log.error_list) == cap and log.more_errors == 7


def test_a_good_file_still_imports_after_a_rejected_one(app, runner, tmp_path, stores_and_products):
    assert run_import(runner, tmp_path, "stock", STOCK_WITH_FIVE_BAD_LINES).exit_code == 1
    output = ok(run_import(runner, tmp_path, "stock", STOCK_HEADER + "LJ001,TEN-001-PRT,38,4\n"))
    assert "1 inserted" in output


# --------------------------------------------------------------------------- pages


def _upload(client, csrf, kind, name, content: str):
    return client.post(
        "/administracao/importacoes",
        data={"csrf_token": csrf, "kind": kind, "arquivo": (io.BytesIO(content.encode()), name)},
        headers=hx(csrf),
        content_type="multipart/form-data",
    )


STORES_HEADER = "codigo,nome,cidade,lat,lng,is_cd,bloqueada\n"
# Line 3: a field error; line 4: a duplicate of line 2; line 5: lat without lng.
STORES_WITH_THREE_BAD_LINES = STORES_HEADER + (
    "SP02,Loja Moema,São Paulo,,,false,false\n"
    "SP03,Loja Ruim,Santos,,,talvez,false\n"
    "SP02,Loja Moema,São Paulo,,,false,false\n"
    "SP04,Loja Sul,Santos,-23.9,,false,false\n"
)


def test_the_page_lists_every_bad_line_and_the_log_keeps_them(client, ctx):
    admin = make_user(papel="admin", name="Artur Admin")
    csrf = sign_in(client, admin)
    answer = _upload(client, csrf, "stores", "lojas.csv", STORES_WITH_THREE_BAD_LINES)
    assert answer.status_code == 200
    body = html.unescape(text(answer))
    assert "lojas.csv recusado; nada foi importado." in body and "3 linhas com erro:" in body
    assert "Linha 3: is_cd must be true or false, got 'talvez'" in body
    assert "Linha 4: store 'SP02' already appears on line 2" in body
    assert "Linha 5: lat and lng must both be given or both be empty" in body
    assert db.session.scalar(select(Loja).where(Loja.codigo.in_(["SP02", "SP03", "SP04"]))) is None
    log = db.session.scalars(select(ImportLog)).one()
    assert [e["line"] for e in log.error_list] == [3, 4, 5] and log.more_errors == 0
    # The list of last imports shows the first error and every line on demand.
    page = html.unescape(text(client.get("/administracao/importacoes")))
    assert "Todas as linhas com erro" in page and "Linha 5: lat and lng" in page


def test_the_page_shows_the_cap_and_how_many_more(client, ctx):
    admin = make_user(papel="admin")
    csrf = sign_in(client, admin)
    cap = importer.MAX_REPORTED_ERRORS
    rows = "".join(f"SP{n:03d},Loja,Cidade,,,nao,false\n" for n in range(cap + 3))
    body = html.unescape(text(_upload(client, csrf, "stores", "muitas.csv", STORES_HEADER + rows)))
    assert f"{cap + 3} linhas com erro:" in body
    assert f"Linha {cap + 1}: is_cd" in body and f"Linha {cap + 2}: is_cd" not in body
    assert "… e mais 3 linhas com erro." in body


def test_the_import_job_lists_every_bad_line(client, ctx):
    admin = make_user(papel="admin")
    csrf = sign_in(client, admin)
    answer = client.post(
        "/remanejamento/tarefas/importar",
        data={"tipo": "stores", "arquivo": (io.BytesIO(STORES_WITH_THREE_BAD_LINES.encode()), "lojas.csv")},
        headers={"X-CSRF-TOKEN": csrf},
        content_type="multipart/form-data",
    )
    job = db.session.get(Job, uuid.UUID(answer.headers["Location"].rsplit("/", 1)[1]))
    assert job.state == "failed"
    lines = job.error.splitlines()
    assert lines[0] == "Arquivo recusado, nada foi importado:"
    assert [line.split(":")[0] for line in lines[1:]] == ["linha 3", "linha 4", "linha 5"]
    page = html.unescape(text(client.get(answer.headers["Location"])))
    assert "<li>linha 4: store 'SP02' already appears on line 2</li>" in page
    assert db.session.scalar(select(Loja).where(Loja.codigo == "SP02")) is None


def test_bad_bytes_deep_in_a_file_are_reported_on_their_line_once(
    app, runner, tmp_path, monkeypatch, stores_and_products
):
    """The file is read and decoded a block of lines at a time: a line that is not UTF-8 is still
    reported on its own line, once, among the other errors in line order, and a BOM is skipped."""
    monkeypatch.setattr(import_csv, "_PROGRESS_STEP", 64)  # blocks of two lines
    d1 = days_ago(app, 2)
    body = (
        "\ufeffdata,loja,sku,tamanho,qtd\n"
        f"{d1},LJ001,TEN-001-PRT,38,1\n{d1},LJ001,TEN-001-PRT,39,1\n"
        f"{d1},LJ001,TEN-001-PRT,99,1\n"
        f"{d1},LJé,TEN-001-PRT,40,1\n"
        f"{d1},LJ001,TEN-001-PRT,40,1\n{d1},LJ001,TEN-404,41,1\n"
    )
    path = tmp_path / "sales.csv"
    path.write_bytes(body.encode("utf-8").replace("LJé".encode(), "LJé".encode("latin-1")))
    before = snapshot(app)
    result = runner.invoke(args=["import", "sales", str(path)])
    assert result.exit_code == 1
    assert error_lines(result.output) == [
        "line 4: size '99' is not in the grid of TEN-001-PRT (38|39|40|41)",
        "line 5: the file is not valid UTF-8",
        "line 7: unknown sku 'TEN-404'",
    ]
    assert snapshot(app) == before
