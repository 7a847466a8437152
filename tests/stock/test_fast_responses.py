"""The stock lists written without marshmallow answer what their OpenAPI document declares,
what the schema's own dump would give, and only the rows the caller may see."""

from __future__ import annotations

import uuid
from datetime import date

import orjson
import pytest
import sqlalchemy as sa
from sqlalchemy import select

from extensions import db
from models.stock_batches import Recomendacao
from schemas.stock.batches import RecomendacaoOut
from services.errors import NotFoundError
from services.stock import batches as batches_service
from services.stock import recommendations
from tests.factories import (
    auth_headers,
    make_loja,
    make_lote,
    make_produto,
    make_rec,
    make_user,
    set_stock,
)
from tests.openapi_responses import assert_documented
from tests.stock.support import API

V1 = "/api/v1"


@pytest.fixture
def net(ctx, client):
    """A batch with every nullable field filled somewhere: vetoed, refused with a reason,
    received; some rows touch store A, some do not."""
    cd = make_loja(nome="CD Cajamar", codigo="CD01", is_cd=True)
    a = make_loja(nome="Loja Paulista", codigo="SP01")
    b = make_loja(nome="Loja Moema", codigo="SP02")
    c = make_loja(nome="Loja Curitiba", codigo="PR01")
    produto = make_produto(nome="Tênis Corrida", sku="TC-01", tamanhos=("38", "39", "40"))
    outro = make_produto(nome="Sandália Praia", sku="SP-07", tamanhos=("35", "36", "37"))
    set_stock(a, produto, **{"38": 2, "39": 0})
    lote = make_lote(date(2026, 11, 18))
    recs = {
        "pendente": make_rec(lote, produto, cd, a, prioridade="alta", score=90),
        "vetada": make_rec(lote, produto, cd, b, tamanho="39", vetado=True),
        "recusada": make_rec(lote, outro, b, c, tamanho="36", score=40),
        "recebida": make_rec(lote, produto, c, a, tamanho="40", status="executada", prioridade="baixa"),
        "aprovada": make_rec(lote, outro, cd, c, tamanho="35", status="aprovada"),
    }
    planner = auth_headers(client, make_user(papel="planejador"))
    refused = client.post(
        f"{API}/recomendacoes/{recs['recusada'].id}/recusar",
        headers=planner,
        json={"motivo": "outro", "motivoTexto": "Loja fechada para inventário"},
    )
    assert refused.status_code == 200, refused.get_json()
    received = client.post(
        f"{API}/recomendacoes/{recs['recebida'].id}/receber", headers=planner, json={"quantidadeRecebida": 4}
    )
    assert received.status_code == 200, received.get_json()
    return {
        "cd": cd,
        "a": a,
        "b": b,
        "c": c,
        "produto": produto,
        "lote": lote,
        "recs": recs,
        "planner": planner,
    }


def _documented(client, template: str, response) -> None:
    assert response.status_code == 200, response.get_json()
    assert_documented(client, "stock", V1 + template, response)


def _schema_dump(lote, where=()) -> list[dict]:
    """What marshmallow writes for the batch's recommendations, in list order."""
    db.session.expire_all()
    stmt = select(Recomendacao).where(Recomendacao.lote_id == lote.id, *where)
    rows = db.session.scalars(stmt.order_by(*recommendations.LIST_ORDER))
    return RecomendacaoOut(many=True).dump(rows)


def test_every_stock_list_answers_its_documented_shape(client, net):
    planner, lote = net["planner"], net["lote"]
    lid, rid = lote.id, net["recs"]["recusada"].id
    cases = [
        ("/remanejamento/recomendacoes", ""),
        ("/remanejamento/recomendacoes", f"?loteId={lid}&limite=2&offset=1"),
        ("/remanejamento/recomendacoes", "?q=curitiba&ordem=produto"),
        ("/remanejamento/recomendacoes/{rid}", ""),
        ("/remanejamento/lotes", ""),
        ("/remanejamento/lotes/{lid}", ""),
        ("/remanejamento/lotes/{lid}/recomendacoes", ""),
        ("/remanejamento/lotes/{lid}/recomendacoes", "?ativas=true&limite=1"),
        ("/remanejamento/lotes/{lid}/fluxo", ""),
        ("/remanejamento/lotes/{lid}/totais", ""),
        ("/remanejamento/historico", ""),
        ("/lojas/{loja_id}/em-transito", ""),
        ("/lojas", ""),
        ("/stores", ""),
        ("/produtos", ""),
        ("/produtos/{pid}/grade", ""),
        ("/auth/me", ""),
    ]
    values = {"lid": lid, "rid": rid, "loja_id": net["a"].id, "pid": net["produto"].id}
    for template, query in cases:
        response = client.get(V1 + template.format(**values) + query, headers=planner)
        _documented(client, template, response)
        assert response.get_json(), template  # an empty body would prove nothing


def test_the_fast_lists_write_what_the_schema_dumps(client, net):
    planner, lote = net["planner"], net["lote"]
    expected = _schema_dump(lote)
    assert {r["status"] for r in expected} == {"pendente", "recusada", "executada", "aprovada"}
    assert any(r["vetado"] and r["motivoVeto"] for r in expected)
    assert any(r["motivoRecusa"] == "outro" and r["motivoRecusaTexto"] for r in expected)
    assert any(r["quantidadeRecebida"] == 4 and r["recebidaEm"].endswith("Z") for r in expected)

    listed = client.get(f"{API}/recomendacoes?loteId={lote.id}", headers=planner).get_json()
    assert listed == expected
    assert client.get(f"{API}/recomendacoes", headers=planner).get_json() == expected
    page = client.get(f"{API}/recomendacoes?limite=2&offset=1", headers=planner).get_json()
    assert page == expected[1:3]
    of_lote = client.get(f"{API}/lotes/{lote.id}/recomendacoes", headers=planner).get_json()
    assert of_lote == expected
    ativas = client.get(f"{API}/lotes/{lote.id}/recomendacoes?ativas=true", headers=planner).get_json()
    assert ativas == [r for r in expected if not r["vetado"] and r["status"] != "recusada"]
    searched = client.get(f"{API}/recomendacoes?q=praia", headers=planner).get_json()
    assert [r["produtoId"] for r in searched] == [str(net["recs"]["recusada"].produto_id)] * 2


def test_a_whole_batch_streams_every_visible_recommendation(client, net, monkeypatch):
    planner, lote = net["planner"], net["lote"]
    # Chunks of two rows: the array is joined across chunks (5 rows: 2 + 2 + 1).
    monkeypatch.setattr(recommendations, "CHUNK_ROWS", 2)
    response = client.get(f"{API}/lotes/{lote.id}", headers=planner)
    assert response.status_code == 200
    assert "Content-Length" not in response.headers  # written while read
    assert response.mimetype == "application/json"
    body = response.get_json()
    assert body["recomendacoes"] == _schema_dump(lote)
    assert (body["id"], body["semana"], body["status"]) == (str(lote.id), "2026-W47", "aberto")
    assert body["periodo"] == "2026-11-16/2026-11-22" and body["criadoEm"].endswith("Z")
    assert_documented(client, "stock", f"{V1}/remanejamento/lotes/{{lid}}", response)


def test_a_whole_batch_of_nothing_visible_is_an_empty_array(client, net):
    lonely = make_loja(nome="Loja Sem Nada", codigo="XX01")
    manager = auth_headers(client, make_user(papel="gerente_loja", loja=lonely))
    body = client.get(f"{API}/lotes/{net['lote'].id}", headers=manager).get_json()
    assert body["recomendacoes"] == [] and body["id"] == str(net["lote"].id)


def test_errors_answer_before_the_stream_in_the_stock_dialect(client, net):
    lid = net["lote"].id
    missing = client.get(f"{API}/lotes/00000000-0000-4000-8000-000000000000", headers=net["planner"])
    assert missing.status_code == 404 and missing.headers["Content-Length"]
    assert missing.get_json() == {"detail": "Lote não encontrado"}
    assert client.get(f"{API}/lotes/{lid}").status_code == 401
    revoked = make_user(papel="visualizador")
    no_role = auth_headers(client, revoked)
    revoked.papel = None  # the grant is read on every request
    db.session.flush()
    refused = client.get(f"{API}/lotes/{lid}", headers=no_role)
    assert refused.status_code == 403 and "detail" in refused.get_json()
    bad = client.get(f"{API}/lotes/not-a-uuid", headers=net["planner"])
    assert bad.status_code == 422 and bad.get_json()["detail"][0]["loc"] == ["path", "lid"]


def test_a_store_manager_sees_only_its_store_on_every_fast_list(client, net):
    a, lote = net["a"], net["lote"]
    manager = auth_headers(client, make_user(papel="gerente_loja", loja=a))
    mine = [r for r in _schema_dump(lote) if str(a.id) in (r["origemId"], r["lojaDestinoId"])]
    assert len(mine) == 2  # the pending one into A and the received one into A
    paths = [
        f"{API}/recomendacoes",
        f"{API}/recomendacoes?loteId={lote.id}&limite=50",
        f"{API}/lotes/{lote.id}/recomendacoes",
    ]
    for path in paths:
        assert client.get(path, headers=manager).get_json() == mine, path
    assert client.get(f"{API}/lotes/{lote.id}", headers=manager).get_json()["recomendacoes"] == mine
    ativas = client.get(f"{API}/lotes/{lote.id}/recomendacoes?ativas=true", headers=manager).get_json()
    assert ativas == mine  # neither of A's is vetoed or refused
    other = net["recs"]["aprovada"].id
    assert client.get(f"{API}/recomendacoes/{other}", headers=manager).status_code == 404


def _same(a, b, path="body") -> None:
    """Equal as parsed JSON and of the same Python types (``3.0`` is not ``3``)."""
    assert type(a) is type(b), (path, a, b)
    if isinstance(a, dict):
        assert list(a) == list(b), path
        for key in a:
            _same(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{path}[{i}]")
    else:
        assert a == b, (path, a, b)


def test_a_whole_batch_written_by_postgresql_reads_as_the_python_dump(client, net, monkeypatch):
    if db.session.get_bind().dialect.name != "postgresql":
        pytest.skip("the database writes the batch's JSON only on PostgreSQL; SQLite dumps it in Python")
    lote, cd, a = net["lote"], net["cd"], net["a"]
    produto = net["produto"]
    awkward = 'Aspas " barra \\ nova\nlinha\ttab \x01 ü 中文 🚚 </script>'
    floats = [0.1 + 0.2, 1 / 3, 1e-7, 1e20, 123456789012345.0, 3.0, -0.0, 2.5e-300, 1e15, 7.0]
    for i, value in enumerate(floats):
        make_rec(
            lote,
            produto,
            cd,
            a,
            tamanho=f"4{i}",
            score=10 + i,
            motivo_veto=awkward,
            vetado=i % 2 == 0,
            cor=awkward if i == 0 else "Azul",
            justificativa=awkward + str(i),
            venda_media_destino=value,
            venda_media_origem=-value,
            distancia_km=value * 7,
            venda_extra_esperada=None if i == 1 else value / 3,
        )
    monkeypatch.setattr(recommendations, "CHUNK_ROWS", 4)
    reference = _schema_dump(lote)
    # The reference: the same request through the Python dump.
    with monkeypatch.context() as python_path:
        python_path.setattr(batches_service, "lote_json_chunks", lambda *args, **kwargs: None)
        by_python = client.get(f"{API}/lotes/{lote.id}", headers=net["planner"])
        assert by_python.status_code == 200
        expected = orjson.loads(by_python.data)  # read now: the body streams as it is read
    # Whatever the session's float digits, the database writes the exact shortest text.
    db.session.execute(sa.text("SET LOCAL extra_float_digits = 0"))
    by_database = client.get(f"{API}/lotes/{lote.id}", headers=net["planner"])
    assert by_database.status_code == 200
    assert_documented(client, "stock", f"{V1}/remanejamento/lotes/{{lid}}", by_database)
    written = orjson.loads(by_database.data)
    assert len(expected["recomendacoes"]) == 15
    _same(written, expected)
    _same(written["recomendacoes"], reference)
    assert by_database.data != by_python.data  # two writers indeed (key order and values agree)
    rows = written["recomendacoes"]
    assert {r["cor"] for r in rows} >= {awkward} and any(r["vendaExtraEsperada"] is None for r in rows)
    assert {r["vendaMediaDestino"] for r in rows} >= set(floats)
    assert any(r["recebidaEm"] for r in rows) and any(r["motivoRecusaTexto"] for r in rows)


def test_a_manager_gets_only_its_store_from_the_database_writer(client, net):
    a, lote = net["a"], net["lote"]
    manager = auth_headers(client, make_user(papel="gerente_loja", loja=a))
    mine = [r for r in _schema_dump(lote) if str(a.id) in (r["origemId"], r["lojaDestinoId"])]
    body = orjson.loads(client.get(f"{API}/lotes/{lote.id}", headers=manager).data)
    _same(body["recomendacoes"], mine)


def test_the_api_list_keeps_what_the_pages_list_keeps_for_every_shape_of_query(ctx, net):
    """The API's list runs one statement per shape of query, built once with its values bound;
    the pages' list builds its statement each time: the same rows in the same order, whatever
    the filters, search, sort, page and caller."""
    from services.stock.recommendations import (
        SORTS,
        FiltroRecomendacoes,
        list_recomendacao_rows,
        list_recomendacoes,
    )

    lote, a = net["lote"], net["a"]
    callers = [
        make_user(papel="planejador"),
        make_user(papel="gerente_loja", loja=a),
        make_user(papel="gerente_loja"),  # no store: sees nothing
    ]
    queries = [
        {},
        {"lote_id": lote.id},
        {"produto_id": net["produto"].id, "destino_id": a.id},
        {"origem_id": net["cd"].id, "tipo_origem": "cd"},
        {"prioridade": "alta"},
        {"status": "pendente"},
        {"vetado": True},
        {"vetado": False},
        {"q": "curitiba"},
        {"q": "Tênis  sp01"},
        {"q": "   "},
        {"q": "100%_\\"},
        {"limite": 2, "offset": 1},
        {"offset": 3},
        {"prioridade": "media", "q": "loja", "limite": 1},
    ]
    # Every query in the list's order both ways; every sort on a plain and a searched list.
    shapes = [(query, "prioridade", desc) for query in queries for desc in (False, True)]
    shapes += [
        (query, ordem, desc) for query in ({}, {"q": "loja"}) for ordem in SORTS for desc in (False, True)
    ]
    found = 0
    for user in callers:
        for query, ordem, desc in shapes:
            filtro = FiltroRecomendacoes(ordem=ordem, desc=desc, **query)
            expected = [r.id for r in list_recomendacoes(user, filtro)]
            rows = list_recomendacao_rows(user, filtro)
            assert [r.id for r in rows] == expected, (user.papel, user.loja_id, query, ordem, desc)
            found += len(expected)
    assert found > 100

    # A batch with nothing in it lists nothing; a batch that does not exist is a 404.
    empty = FiltroRecomendacoes(lote_id=make_lote(date(2026, 11, 4)).id)
    assert list_recomendacao_rows(callers[0], empty) == list_recomendacoes(callers[0], empty) == []
    missing = FiltroRecomendacoes(lote_id=uuid.uuid4())
    for listing in (list_recomendacoes, list_recomendacao_rows):
        with pytest.raises(NotFoundError):
            listing(callers[0], missing)
