"""``flask import stores|products|stock|sales|campaigns FILE.csv``: happy paths, idempotency, atomicity."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from types import SimpleNamespace

import pytest
from sqlalchemy import select

from blueprints.stock import cli_data
from extensions import db
from models.stock import Campanha, Estoque, Loja, Produto, Venda
from services.clock import today
from services.stock import importer
from tests.factories import bearer, login, make_user

STORES = """codigo,nome,cidade,lat,lng,is_cd,bloqueada
CD-CAJ,CD Cajamar,Cajamar - SP,-23.3556,-46.8769,true,false
LJ001,São Paulo Paulista,São Paulo - SP,-23.5614,-46.6559,false,false
LJ002,Recife Boa Viagem,Recife - PE,-8.119,-34.903,false,true
"""

PRODUCTS = """sku,nome,marca,categoria,colecao,cor,tamanhos,imagem
TEN-001-PRT,Tênis Corrida Aurora,Passo Firme,Tênis,Verão 2026,Preto,38|39|40|41,
CAM-002-BCO,Camiseta Básica Brisa,Ventura,Camisetas,Essenciais,Branco,PP|P|M|G|GG,https://img.example/cam.jpg
"""


def write(tmp_path, name: str, text: str, encoding: str = "utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def run_import(runner, tmp_path, kind: str, text: str, name: str | None = None):
    path = write(tmp_path, name or f"{kind}.csv", text)
    return runner.invoke(args=["import", kind, str(path)])


def ok(result):
    assert result.exit_code == 0, result.output
    return result.output


def days_ago(app, n: int) -> str:
    with app.app_context():
        return (today() - timedelta(days=n)).isoformat()


def snapshot(app) -> dict:
    """Every row of the catalogue tables, by value, in a stable order."""
    with app.app_context():
        tables = [Loja.__table__, Produto.__table__, Estoque.__table__, Venda.__table__, Campanha.__table__]
        return {
            table.name: sorted(tuple(str(v) for v in row) for row in db.session.execute(table.select()))
            for table in tables
        }


@pytest.fixture
def catalogue(runner, tmp_path):
    """Stores and products imported through the CLI."""
    ok(run_import(runner, tmp_path, "stores", STORES))
    ok(run_import(runner, tmp_path, "products", PRODUCTS))


@pytest.fixture
def headers(client, app):
    """A planner's bearer header; the account is committed so every request sees it."""
    with app.app_context():
        user = make_user(papel="planejador")
        account = SimpleNamespace(email=user.email)
        db.session.commit()
    return bearer(login(client, account)["accessToken"])


def ids(client, headers) -> tuple[dict, dict]:
    stores = {s["codigo"]: s["id"] for s in client.get("/api/v1/stores", headers=headers).get_json()}
    products = {p["sku"]: p["id"] for p in client.get("/api/v1/produtos", headers=headers).get_json()}
    return stores, products


def stock_of(client, headers, loja_id: str, produto_id: str) -> dict[str, int]:
    items = client.get("/api/v1/estoque", query_string={"lojaId": loja_id}, headers=headers).get_json()
    for item in items:
        if item["produtoId"] == produto_id:
            return {c["tamanho"]: c["qtd"] for c in item["porTamanho"]}
    return {}


def sales_rows(app) -> set[tuple[str, str, str, str, int]]:
    with app.app_context():
        rows = db.session.execute(
            select(Venda.data, Loja.codigo, Produto.sku, Venda.tamanho, Venda.qtd)
            .join(Loja, Loja.id == Venda.loja_id)
            .join(Produto, Produto.id == Venda.produto_id)
        )
        return {(d.isoformat(), loja, sku, t, q) for d, loja, sku, t, q in rows}


# --------------------------------------------------------------------------- happy paths


def test_import_stores_creates_stores_and_cds(runner, tmp_path, client, headers):
    output = ok(run_import(runner, tmp_path, "stores", STORES))
    assert "3 rows read" in output and "3 inserted, 0 updated, 0 unchanged" in output
    stores = {s["codigo"]: s for s in client.get("/api/v1/stores", headers=headers).get_json()}
    assert stores["CD-CAJ"]["isCd"] is True and stores["LJ001"]["isCd"] is False
    assert stores["LJ002"]["bloqueada"] is True
    assert stores["LJ001"]["nome"] == "São Paulo Paulista"
    assert stores["LJ001"]["cidade"] == "São Paulo - SP"
    assert stores["LJ001"]["lat"] == pytest.approx(-23.5614)
    assert stores["LJ001"]["lng"] == pytest.approx(-46.6559)


def test_import_stores_is_an_upsert_by_codigo(runner, tmp_path, client, headers):
    ok(run_import(runner, tmp_path, "stores", STORES))
    before = {s["codigo"]: s["id"] for s in client.get("/api/v1/stores", headers=headers).get_json()}
    changed = STORES.replace(
        "Recife Boa Viagem,Recife - PE,-8.119,-34.903,false,true", "Recife RioMar,Recife - PE,,,false,false"
    )
    changed += "LJ003,Manaus Adrianópolis,Manaus - AM,-3.1019,-60.01,false,false\n"
    output = ok(run_import(runner, tmp_path, "stores", changed, name="stores2.csv"))
    assert "4 rows read" in output and "1 inserted, 1 updated, 2 unchanged" in output
    stores = {s["codigo"]: s for s in client.get("/api/v1/stores", headers=headers).get_json()}
    assert len(stores) == 4
    assert stores["LJ002"]["id"] == before["LJ002"]
    assert stores["LJ002"]["nome"] == "Recife RioMar"
    assert stores["LJ002"]["bloqueada"] is False
    assert stores["LJ002"]["lat"] is None and stores["LJ002"]["lng"] is None


def test_import_products_keeps_the_size_grid_in_order(runner, tmp_path, client, headers, catalogue):
    products = {p["sku"]: p for p in client.get("/api/v1/produtos", headers=headers).get_json()}
    assert set(products) == {"TEN-001-PRT", "CAM-002-BCO"}
    assert products["CAM-002-BCO"]["tamanhos"] == ["PP", "P", "M", "G", "GG"]
    assert products["TEN-001-PRT"]["tamanhos"] == ["38", "39", "40", "41"]
    assert products["TEN-001-PRT"]["imagem"] is None
    assert products["CAM-002-BCO"]["imagem"] == "https://img.example/cam.jpg"
    assert products["CAM-002-BCO"]["marca"] == "Ventura"
    assert products["CAM-002-BCO"]["cor"] == "Branco"
    assert products["TEN-001-PRT"]["colecao"] == "Verão 2026"


def test_columns_may_come_in_any_order(runner, tmp_path, client, headers, catalogue):
    text = "qtd,tamanho,sku,loja\n5,39,TEN-001-PRT,LJ001\n"
    ok(run_import(runner, tmp_path, "stock", text))
    stores, products = ids(client, headers)
    assert stock_of(client, headers, stores["LJ001"], products["TEN-001-PRT"])["39"] == 5


def test_import_stock_writes_the_snapshot(runner, tmp_path, client, headers, catalogue):
    text = "loja,sku,tamanho,qtd\nLJ001,TEN-001-PRT,38,4\nLJ001,TEN-001-PRT,39,0\nCD-CAJ,CAM-002-BCO,M,120\n"
    output = ok(run_import(runner, tmp_path, "stock", text))
    assert "3 rows read" in output and "2 store(s) replaced: 3 inserted, 0 updated" in output
    stores, products = ids(client, headers)
    assert stock_of(client, headers, stores["LJ001"], products["TEN-001-PRT"]) == {
        "38": 4,
        "39": 0,
        "40": 0,
        "41": 0,
    }
    assert stock_of(client, headers, stores["CD-CAJ"], products["CAM-002-BCO"])["M"] == 120


def test_stock_snapshot_replaces_only_the_stores_named(runner, tmp_path, client, headers, catalogue):
    first = (
        "loja,sku,tamanho,qtd\n"
        "LJ001,TEN-001-PRT,38,4\nLJ001,CAM-002-BCO,P,7\n"
        "LJ002,TEN-001-PRT,40,9\nLJ002,CAM-002-BCO,G,3\n"
    )
    ok(run_import(runner, tmp_path, "stock", first))
    second = "loja,sku,tamanho,qtd\nLJ001,TEN-001-PRT,39,2\n"
    output = ok(run_import(runner, tmp_path, "stock", second, name="stock2.csv"))
    assert "1 store(s) replaced: 1 inserted, 0 updated, 0 unchanged, 2 removed" in output
    stores, products = ids(client, headers)
    # LJ001 holds exactly what the new file says: the shirts it no longer lists are gone.
    assert stock_of(client, headers, stores["LJ001"], products["TEN-001-PRT"]) == {
        "38": 0,
        "39": 2,
        "40": 0,
        "41": 0,
    }
    assert stock_of(client, headers, stores["LJ001"], products["CAM-002-BCO"]) == {}
    # LJ002 is not in the file: untouched.
    assert stock_of(client, headers, stores["LJ002"], products["TEN-001-PRT"])["40"] == 9
    assert stock_of(client, headers, stores["LJ002"], products["CAM-002-BCO"])["G"] == 3


def test_sales_replace_each_day_and_store_pair(app, runner, tmp_path, catalogue):
    d1, d2 = days_ago(app, 3), days_ago(app, 2)
    first = (
        "data,loja,sku,tamanho,qtd\n"
        f"{d1},LJ001,TEN-001-PRT,38,2\n{d1},LJ001,TEN-001-PRT,39,1\n"
        f"{d2},LJ001,TEN-001-PRT,38,5\n"
        f"{d1},LJ002,CAM-002-BCO,M,3\n"
    )
    output = ok(run_import(runner, tmp_path, "sales", first))
    assert "4 rows read" in output and "3 (day, store) pair(s) replaced: 4 inserted" in output
    # A correction for (d1, LJ001) only: its old rows go, the other pairs stay.
    second = f"data,loja,sku,tamanho,qtd\n{d1},LJ001,TEN-001-PRT,40,6\n"
    output = ok(run_import(runner, tmp_path, "sales", second, name="sales2.csv"))
    assert "1 (day, store) pair(s) replaced: 1 inserted, 0 updated, 0 unchanged, 2 removed" in output
    third = f"data,loja,sku,tamanho,qtd\n{d1},LJ001,TEN-001-PRT,40,9\n"
    output = ok(run_import(runner, tmp_path, "sales", third, name="sales3.csv"))
    assert "1 (day, store) pair(s) replaced: 0 inserted, 1 updated, 0 unchanged, 0 removed" in output
    assert sales_rows(app) == {
        (d1, "LJ001", "TEN-001-PRT", "40", 9),
        (d2, "LJ001", "TEN-001-PRT", "38", 5),
        (d1, "LJ002", "CAM-002-BCO", "M", 3),
    }


def test_sales_show_in_the_cell_detail(app, runner, tmp_path, client, headers, catalogue):
    rows = "".join(f"{days_ago(app, n)},LJ001,TEN-001-PRT,39,2\n" for n in range(1, 8))
    ok(run_import(runner, tmp_path, "sales", "data,loja,sku,tamanho,qtd\n" + rows))
    stores, products = ids(client, headers)
    cell = client.get(
        "/api/v1/estoque/cell",
        query_string={"lojaId": stores["LJ001"], "produtoId": products["TEN-001-PRT"], "tamanho": "39"},
        headers=headers,
    ).get_json()
    assert cell["vendasPeriodo"] == 14


def test_campaign_with_empty_loja_covers_every_store(app, runner, tmp_path, client, headers, catalogue):
    text = f"sku,loja,inicio,fim\nTEN-001-PRT,,{days_ago(app, 2)},{days_ago(app, -5)}\nCAM-002-BCO,LJ001,{days_ago(app, 1)},{days_ago(app, 0)}\n"
    output = ok(run_import(runner, tmp_path, "campaigns", text))
    assert "2 inserted, 0 unchanged" in output
    stores, products = ids(client, headers)

    def in_campaign(loja: str, sku: str, tamanho: str) -> bool:
        cell = client.get(
            "/api/v1/estoque/cell",
            query_string={"lojaId": stores[loja], "produtoId": products[sku], "tamanho": tamanho},
            headers=headers,
        ).get_json()
        return cell["emCampanha"]

    assert all(in_campaign(loja, "TEN-001-PRT", "40") for loja in ("LJ001", "LJ002"))
    assert in_campaign("CD-CAJ", "TEN-001-PRT", "40") is False, "every store, not the CDs"
    assert in_campaign("LJ001", "CAM-002-BCO", "M") is True
    assert in_campaign("LJ002", "CAM-002-BCO", "M") is False
    with app.app_context():
        assert (
            db.session.scalar(select(Campanha.loja_id).join(Produto).where(Produto.sku == "TEN-001-PRT"))
            is None
        )


def test_progress_bar_for_large_files(app, runner, tmp_path, monkeypatch, catalogue):
    monkeypatch.setattr(cli_data, "PROGRESS_MIN_BYTES", 0)
    text = "data,loja,sku,tamanho,qtd\n" + "".join(
        f"{days_ago(app, n)},LJ001,CAM-002-BCO,{size},1\n" for n in range(1, 60) for size in ("P", "M", "G")
    )
    output = ok(run_import(runner, tmp_path, "sales", text))
    assert "177 rows read" in output
    assert len(sales_rows(app)) == 177


# --------------------------------------------------------------------------- idempotency


def full_network(app) -> dict[str, str]:
    d1, d2 = days_ago(app, 2), days_ago(app, 1)
    return {
        "stores": STORES,
        "products": PRODUCTS,
        "stock": "loja,sku,tamanho,qtd\nLJ001,TEN-001-PRT,38,4\nLJ002,CAM-002-BCO,M,0\nCD-CAJ,CAM-002-BCO,GG,40\n",
        "sales": f"data,loja,sku,tamanho,qtd\n{d1},LJ001,TEN-001-PRT,38,1\n{d2},LJ001,TEN-001-PRT,38,3\n{d2},LJ002,CAM-002-BCO,M,2\n",
        "campaigns": f"sku,loja,inicio,fim\nTEN-001-PRT,,{d1},{d2}\nCAM-002-BCO,LJ002,{d1},{d2}\n",
    }


def test_importing_the_same_files_twice_changes_nothing(app, runner, tmp_path):
    files = full_network(app)
    for kind, text in files.items():
        ok(run_import(runner, tmp_path, kind, text))
    before = snapshot(app)
    assert len(before["vendas"]) == 3 and len(before["estoque"]) == 3 and len(before["campanhas"]) == 2
    outputs = {kind: ok(run_import(runner, tmp_path, kind, text)) for kind, text in files.items()}
    assert snapshot(app) == before
    assert "0 inserted, 0 updated, 3 unchanged" in outputs["stores"]
    assert "0 inserted, 0 updated, 2 unchanged" in outputs["products"]
    assert "0 inserted, 2 unchanged" in outputs["campaigns"]
    assert "0 inserted, 0 updated, 3 unchanged, 0 removed" in outputs["stock"]
    assert "0 inserted, 0 updated, 3 unchanged, 0 removed" in outputs["sales"]


# --------------------------------------------------------------------------- atomicity


BAD_FILES = [
    # (kind, file text with a bad line 3 after a good line 2, expected reason)
    ("stores", "codigo,nome,cidade,lat,lng,is_cd,bloqueada\nLJ009,Nova,Natal - RN,-5.8,-35.2,false,false\nLJ010,Outra,Natal - RN,-95,-35.2,false,false\n", "lat -95 is outside [-90, 90]"),
    ("stores", "codigo,nome,cidade,lat,lng,is_cd,bloqueada\nLJ009,Nova,Natal - RN,-5.8,-35.2,false,false\nLJ010,Outra,Natal - RN,-5.8,-35.2,sim,false\n", "is_cd must be true or false"),
    ("stores", "codigo,nome,cidade,lat,lng,is_cd,bloqueada\nLJ009,Nova,Natal - RN,-5.8,-35.2,false,false\nLJ009,Outra,Natal - RN,-5.8,-35.2,false,false\n", "already appears on line 2"),
    ("stores", "codigo,nome,cidade,lat,lng,is_cd,bloqueada\nLJ009,Nova,Natal - RN,-5.8,-35.2,false,false\nLJ010,Outra,Natal - RN,-5.8,,false,false\n", "lat and lng must both be given or both be empty"),
    ("products", "sku,nome,marca,categoria,colecao,cor,tamanhos,imagem\nX-1,Tênis,M,Tênis,V,Preto,38|39,\nX-2,Tênis,M,Tênis,V,Preto,38|38,\n", "tamanhos repeats 38"),
    ("products", "sku,nome,marca,categoria,colecao,cor,tamanhos,imagem\nX-1,Tênis,M,Tênis,V,Preto,38|39,\nX-2,,M,Tênis,V,Preto,38,\n", "nome is empty"),
    ("stock", "loja,sku,tamanho,qtd\nLJ001,TEN-001-PRT,38,9\nLJ404,TEN-001-PRT,38,1\n", "unknown store loja 'LJ404'"),
    ("stock", "loja,sku,tamanho,qtd\nLJ001,TEN-001-PRT,38,9\nLJ001,NOPE,38,1\n", "unknown sku 'NOPE'"),
    ("stock", "loja,sku,tamanho,qtd\nLJ001,TEN-001-PRT,38,9\nLJ001,TEN-001-PRT,45,1\n", "size '45' is not in the grid of TEN-001-PRT (38|39|40|41)"),
    ("stock", "loja,sku,tamanho,qtd\nLJ001,TEN-001-PRT,38,9\nLJ001,TEN-001-PRT,39,-1\n", "qtd must be a whole number >= 0"),
    ("stock", "loja,sku,tamanho,qtd\nLJ001,TEN-001-PRT,38,9\nLJ001,TEN-001-PRT,38,2\n", "already given on line 2"),
    ("stock", "loja,sku,tamanho,qtd\nLJ001,TEN-001-PRT,38,9\nLJ001,TEN-001-PRT,39\n", "expected 4 fields, found 3"),
    ("sales", "data,loja,sku,tamanho,qtd\n{d1},LJ001,TEN-001-PRT,38,1\n22/11/2026,LJ001,TEN-001-PRT,39,1\n", "data must be an ISO date YYYY-MM-DD"),
    ("sales", "data,loja,sku,tamanho,qtd\n{d1},LJ001,TEN-001-PRT,38,1\n2026-02-30,LJ001,TEN-001-PRT,39,1\n", "is not a calendar date"),
    ("sales", "data,loja,sku,tamanho,qtd\n{d1},LJ001,TEN-001-PRT,38,1\n{future},LJ001,TEN-001-PRT,39,1\n", "is in the future"),
    ("sales", "data,loja,sku,tamanho,qtd\n{d1},LJ001,TEN-001-PRT,38,1\n{d1},LJ001,TEN-001-PRT,38,2\n", "already given on line 2"),
    ("sales", "data,loja,sku,tamanho,qtd\n{d1},LJ001,TEN-001-PRT,38,1\n{d1},LJ001,TEN-001-PRT,39,1.5\n", "qtd must be a whole number"),
    ("campaigns", "sku,loja,inicio,fim\nTEN-001-PRT,,{d1},{d1}\nCAM-002-BCO,,{d1},{d2}\n", "is before inicio"),
    ("campaigns", "sku,loja,inicio,fim\nTEN-001-PRT,,{d1},{d1}\nCAM-002-BCO,LJ404,{d2},{d1}\n", "unknown store loja 'LJ404'"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "text", "reason"), BAD_FILES, ids=[f"{k}-{r[:30]}" for k, _t, r in BAD_FILES]
)
def test_a_bad_row_rejects_the_whole_file(app, runner, tmp_path, catalogue, kind, text, reason):
    d1 = days_ago(app, 2)
    ok(
        run_import(
            runner, tmp_path, "stock", "loja,sku,tamanho,qtd\nLJ001,TEN-001-PRT,38,4\n", name="base.csv"
        )
    )
    ok(
        run_import(
            runner,
            tmp_path,
            "sales",
            f"data,loja,sku,tamanho,qtd\n{d1},LJ001,TEN-001-PRT,38,7\n",
            name="base-sales.csv",
        )
    )
    before = snapshot(app)
    text = text.format(d1=d1, d2=days_ago(app, 4), future=days_ago(app, -2))
    result = run_import(runner, tmp_path, kind, text)
    assert result.exit_code != 0
    assert "line 3: " in result.output, result.output
    assert reason in result.output
    assert "nothing was imported" in result.output
    assert snapshot(app) == before


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "the file is empty"),
        ("loja,sku,qtd\nLJ001,TEN-001-PRT,1\n", "missing column(s): tamanho"),
        ("loja,sku,tamanho,qtd,preco\nLJ001,TEN-001-PRT,38,1,99\n", "unknown column(s): 'preco'"),
        ("loja,sku,tamanho,qtd,qtd\nLJ001,TEN-001-PRT,38,1,1\n", "column 'qtd' appears more than once"),
    ],
)
def test_a_bad_header_rejects_the_file_on_line_1(app, runner, tmp_path, catalogue, text, reason):
    before = snapshot(app)
    result = run_import(runner, tmp_path, "stock", text)
    assert result.exit_code != 0
    assert "line 1: " in result.output and reason in result.output
    assert snapshot(app) == before


def test_a_bad_row_late_in_a_long_file_is_reported_by_its_line(app, runner, tmp_path, catalogue):
    before = snapshot(app)
    rows = [f"{days_ago(app, n)},LJ001,CAM-002-BCO,M,1" for n in range(1, 500)]
    rows[400] = rows[400].replace("CAM-002-BCO", "CAM-999")
    result = run_import(runner, tmp_path, "sales", "data,loja,sku,tamanho,qtd\n" + "\n".join(rows) + "\n")
    assert result.exit_code != 0
    assert "line 402: unknown sku 'CAM-999'" in result.output
    assert snapshot(app) == before


def test_a_file_that_is_not_utf8_is_rejected(app, runner, tmp_path, catalogue):
    path = write(
        tmp_path,
        "stores.csv",
        STORES.replace("São", "Sao") + "LJ005,Goiânia,Goiânia - GO,-16.7,-49.3,false,false\n",
        "latin-1",
    )
    before = snapshot(app)
    result = runner.invoke(args=["import", "stores", str(path)])
    assert result.exit_code != 0
    assert "line 5: the file is not valid UTF-8" in result.output
    assert snapshot(app) == before


def test_a_missing_file_is_a_usage_error(runner, tmp_path):
    result = runner.invoke(args=["import", "stock", str(tmp_path / "nope.csv")])
    assert result.exit_code == 2
    assert "does not exist" in result.output


# --------------------------------------------------------------------------- size grids


def test_a_grid_may_grow_and_reorder(runner, tmp_path, client, headers, catalogue):
    ok(run_import(runner, tmp_path, "stock", "loja,sku,tamanho,qtd\nLJ001,TEN-001-PRT,38,4\n"))
    output = ok(
        run_import(
            runner, tmp_path, "products", PRODUCTS.replace("38|39|40|41", "37|38|39|40|41|42"), name="p2.csv"
        )
    )
    assert "0 inserted, 1 updated, 1 unchanged" in output
    stores, products = ids(client, headers)
    assert stock_of(client, headers, stores["LJ001"], products["TEN-001-PRT"]) == {
        "37": 0,
        "38": 4,
        "39": 0,
        "40": 0,
        "41": 0,
        "42": 0,
    }


def test_dropping_a_size_that_stores_still_hold_is_rejected(app, runner, tmp_path, catalogue):
    ok(run_import(runner, tmp_path, "stock", "loja,sku,tamanho,qtd\nLJ002,TEN-001-PRT,41,3\n"))
    before = snapshot(app)
    result = run_import(
        runner, tmp_path, "products", PRODUCTS.replace("38|39|40|41", "38|39|40"), name="p2.csv"
    )
    assert result.exit_code != 0
    assert "line 2: the new grid of TEN-001-PRT drops size '41'" in result.output
    assert snapshot(app) == before


def test_dropping_a_size_held_at_zero_removes_those_rows(runner, tmp_path, client, headers, catalogue):
    ok(
        run_import(
            runner,
            tmp_path,
            "stock",
            "loja,sku,tamanho,qtd\nLJ002,TEN-001-PRT,41,0\nLJ002,TEN-001-PRT,40,2\n",
        )
    )
    output = ok(
        run_import(runner, tmp_path, "products", PRODUCTS.replace("38|39|40|41", "38|39|40"), name="p2.csv")
    )
    assert "removed 1 zero-quantity stock rows" in output
    stores, products = ids(client, headers)
    assert stock_of(client, headers, stores["LJ002"], products["TEN-001-PRT"]) == {"38": 0, "39": 0, "40": 2}


def test_a_database_failure_while_writing_leaves_nothing_behind(
    app, runner, tmp_path, monkeypatch, catalogue
):
    def locked(*_args, **_kwargs):
        raise sqlite3.OperationalError("database is locked")

    ok(
        run_import(
            runner, tmp_path, "stock", "loja,sku,tamanho,qtd\nLJ001,TEN-001-PRT,38,4\n", name="base.csv"
        )
    )
    before = snapshot(app)
    monkeypatch.setattr(importer, "sync_rows", locked)
    result = run_import(runner, tmp_path, "stock", "loja,sku,tamanho,qtd\nLJ001,TEN-001-PRT,39,1\n")
    assert result.exit_code == 1
    assert "the database refused the import, nothing was imported: database is locked" in result.output
    assert snapshot(app) == before


def test_sizes_with_unusual_characters_round_trip(runner, tmp_path, client, headers, catalogue):
    grid = "U\\1|U\t2|Único"
    products = f'sku,nome,marca,categoria,colecao,cor,tamanhos,imagem\nACE-001,Cinto,Ventura,Acessórios,Essenciais,Preto,"{grid}",\n'
    ok(run_import(runner, tmp_path, "products", products, name="p2.csv"))
    stock = 'loja,sku,tamanho,qtd\nLJ001,ACE-001,U\\1,3\nLJ001,ACE-001,"U\t2",4\nLJ001,ACE-001,Único,5\n'
    ok(run_import(runner, tmp_path, "stock", stock))
    stores, products_by_sku = ids(client, headers)
    assert stock_of(client, headers, stores["LJ001"], products_by_sku["ACE-001"]) == {
        "U\\1": 3,
        "U\t2": 4,
        "Único": 5,
    }
