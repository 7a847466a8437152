"""Batch generation (CLI and service), regeneration, atomicity, cadence, and the batch read endpoints."""

from __future__ import annotations

import re
import uuid
from datetime import date, timedelta

import pytest

from extensions import db
from tests.factories import (
    add_sales,
    auth_headers,
    make_loja,
    make_lote,
    make_produto,
    make_rec,
    make_user,
    set_stock,
)
from tests.stock.support import API

ON = date(2026, 11, 18)  # a Wednesday of 2026-W47


def build_network(*, on: date = ON, stores: int = 4, marca: str = "Marca A"):
    """A CD full of stock and stores that sell steadily and are nearly out: transfers are obvious."""
    cd = make_loja(nome="CD Cajamar", is_cd=True, lat=-23.35, lng=-46.87)
    lojas = [make_loja(nome=f"Loja {i}", lat=-23.55 + i * 0.01, lng=-46.63 - i * 0.01) for i in range(stores)]
    produto = make_produto(nome="Tênis Corrida", marca=marca, tamanhos=("38", "39", "40"))
    set_stock(cd, produto, **{"38": 200, "39": 200, "40": 200})
    for loja in lojas:
        set_stock(loja, produto, **{"38": 0, "39": 1, "40": 0})
        for tamanho in ("38", "39", "40"):
            add_sales(loja, produto, tamanho, [2] * 30, end=on)
    return {"cd": cd, "lojas": lojas, "produto": produto}


@pytest.fixture
def planner(client, ctx):
    return auth_headers(client, make_user(papel="planejador", name="Paula Planejadora"))


@pytest.fixture
def admin(client, ctx):
    return auth_headers(client, make_user(papel="admin"))


def generate(runner, on: date = ON):
    result = runner.invoke(args=["batches", "generate", "--date", on.isoformat()])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result


def newest(client, headers):
    lotes = client.get(f"{API}/lotes", headers=headers).get_json()
    return lotes[0]


def test_generate_writes_a_batch_the_api_shows(client, runner, ctx, planner):
    net = build_network()
    result = generate(runner)
    lote = newest(client, planner)
    assert lote["id"] in result.output and "new recommendations" in result.output
    assert lote["semana"] == "2026-W47"
    assert lote["periodo"] == "2026-11-16/2026-11-22"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", lote["criadoEm"])
    assert lote["status"] == "aberto" and lote["novo"] is True and lote["recomendacoes"] == []
    recs = client.get(f"{API}/lotes/{lote['id']}/recomendacoes", headers=planner).get_json()
    assert recs, "the engine found nothing to move in an obvious network"
    ids = {str(x.id) for x in net["lojas"]}
    for rec in recs:
        assert rec["origemId"] == str(net["cd"].id) and rec["tipoOrigem"] == "cd"
        assert rec["lojaDestinoId"] in ids
        assert 3 <= rec["quantidade"] <= 15
        assert rec["status"] == "pendente" and rec["data"] == ON.isoformat()
        assert rec["cor"] == "Preto" and rec["justificativa"]
    detail = client.get(f"{API}/lotes/{lote['id']}", headers=planner).get_json()
    assert [r["id"] for r in detail["recomendacoes"]] == [r["id"] for r in recs]
    # The default recommendation list is the newest batch.
    listed = client.get(f"{API}/recomendacoes", headers=planner).get_json()
    assert [r["id"] for r in listed] == [r["id"] for r in recs]


def test_regenerating_the_week_keeps_every_decision(client, runner, ctx, planner):
    build_network()
    generate(runner)
    lote = newest(client, planner)
    recs = client.get(f"{API}/lotes/{lote['id']}/recomendacoes", headers=planner).get_json()
    assert len(recs) >= 3
    approved, vetoed, refused = recs[0], recs[1], recs[2]
    client.post(f"{API}/recomendacoes/{approved['id']}/aprovar", headers=planner)
    client.post(
        f"{API}/lotes/{lote['id']}/recomendacoes/{vetoed['id']}/vetar",
        headers=planner,
        json={"motivo": "Reforma"},
    )
    client.post(f"{API}/recomendacoes/{refused['id']}/recusar", headers=planner)

    result = generate(runner, ON + timedelta(days=1))
    assert "refreshed" in result.output and "3 decided kept" in result.output
    lotes = client.get(f"{API}/lotes", headers=planner).get_json()
    assert [x["id"] for x in lotes] == [lote["id"]], "one batch per ISO week"
    after = {
        r["id"]: r for r in client.get(f"{API}/lotes/{lote['id']}/recomendacoes", headers=planner).get_json()
    }
    assert after[approved["id"]]["status"] == "aprovada"
    assert after[vetoed["id"]]["vetado"] is True and after[vetoed["id"]]["motivoVeto"] == "Reforma"
    assert after[refused["id"]]["status"] == "recusada"
    keys = [(r["origemId"], r["lojaDestinoId"], r["produtoId"], r["tamanho"]) for r in after.values()]
    assert len(keys) == len(set(keys)), "a new proposal never duplicates a kept one"
    untouched = {r["id"] for r in recs[3:]}
    assert not untouched & set(after), "untouched pending ones are replaced"


def test_generation_is_atomic(client, runner, ctx, planner, monkeypatch):
    build_network()
    from services.stock import storage

    real_insert = storage.insert_recommendations

    def crash_half_way(out, net, keep, lote_id, on):
        half = keep.copy()
        half[len(half) // 2 :] = False
        assert real_insert(out, net, half, lote_id, on) > 0
        raise RuntimeError("disk full")

    monkeypatch.setattr(storage, "insert_recommendations", crash_half_way)
    result = runner.invoke(args=["batches", "generate", "--date", ON.isoformat()])
    assert result.exit_code != 0
    assert client.get(f"{API}/lotes", headers=planner).get_json() == []
    assert client.get(f"{API}/recomendacoes", headers=planner).get_json() == []


def test_generate_batch_reports_progress(ctx):
    from services.stock.generation import generate_batch

    build_network()
    steps = []
    lote = generate_batch(ON, progress=lambda step, fraction: steps.append((step, fraction)))
    assert lote.semana == "2026-W47"
    fractions = [f for _, f in steps]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0


def test_run_due_follows_the_cadence(client, runner, ctx, planner, admin):
    build_network()
    run = lambda d: runner.invoke(args=["batches", "run-due", "--date", d.isoformat()])  # noqa: E731
    first = run(ON)
    assert first.exit_code == 0 and "created" in first.output
    again = run(ON + timedelta(days=1))
    assert again.exit_code == 0 and "no batch due" in again.output and "2026-11-23" in again.output
    assert len(client.get(f"{API}/lotes", headers=planner).get_json()) == 1
    cadence = client.get(f"{API}/config/cadence", headers=planner).get_json()
    assert cadence["cadence"] == "semanal"
    nxt = run(date(2026, 11, 23))
    assert "created" in nxt.output
    assert [x["semana"] for x in client.get(f"{API}/lotes", headers=planner).get_json()] == [
        "2026-W48",
        "2026-W47",
    ]

    client.put(f"{API}/config/cadence", headers=admin, json={"cadence": "diaria"})
    assert "refreshed" in run(date(2026, 11, 24)).output
    assert "no batch due" in run(date(2026, 11, 24)).output

    client.put(f"{API}/config/cadence", headers=admin, json={"cadence": "mensal"})
    assert "no batch due" in run(date(2026, 11, 30)).output
    assert "created" in run(date(2026, 12, 1)).output


# --- read endpoints on batches built directly ------------------------------------------------


@pytest.fixture
def lote_net(ctx):
    cd = make_loja(nome="CD Extrema", is_cd=True)
    a, b, c = make_loja(nome="Loja A"), make_loja(nome="Loja B"), make_loja(nome="Loja C")
    p1, p2 = make_produto(nome="Bota"), make_produto(nome="Sandália")
    lote = make_lote()
    recs = [
        make_rec(lote, p1, cd, a, quantidade=10, prioridade="media", score=90),
        make_rec(lote, p1, cd, b, quantidade=4, prioridade="alta", score=40),
        make_rec(lote, p2, a, c, quantidade=6, prioridade="alta", score=70),
        make_rec(lote, p2, b, c, quantidade=5, prioridade="baixa", score=99),
        make_rec(lote, p2, cd, c, quantidade=7, prioridade="baixa", score=10, status="recusada"),
        make_rec(lote, p1, cd, c, quantidade=8, prioridade="alta", score=80, vetado=True),
    ]
    return {"cd": cd, "a": a, "b": b, "c": c, "p1": p1, "p2": p2, "lote": lote, "recs": recs}


def test_list_order_is_priority_then_score(client, lote_net, planner):
    lote, recs = lote_net["lote"], lote_net["recs"]
    listed = client.get(f"{API}/lotes/{lote.id}/recomendacoes", headers=planner).get_json()
    expected = [recs[5], recs[2], recs[1], recs[0], recs[3], recs[4]]
    assert [r["id"] for r in listed] == [str(r.id) for r in expected]
    ativas = client.get(f"{API}/lotes/{lote.id}/recomendacoes?ativas=true", headers=planner).get_json()
    assert [r["id"] for r in ativas] == [str(r.id) for r in (recs[2], recs[1], recs[0], recs[3])]


def test_recommendation_filters_match_exactly(client, lote_net, planner):
    recs, c = lote_net["recs"], lote_net["c"]

    def ids(query):
        r = client.get(f"{API}/recomendacoes?{query}", headers=planner)
        assert r.status_code == 200, r.get_json()
        return {x["id"] for x in r.get_json()}

    assert ids(f"lojaDestinoId={c.id}") == {str(recs[i].id) for i in (2, 3, 4, 5)}
    assert ids(f"origemId={lote_net['a'].id}") == {str(recs[2].id)}
    assert ids("prioridade=alta") == {str(recs[i].id) for i in (1, 2, 5)}
    assert ids("status=recusada") == {str(recs[4].id)}
    assert ids("tipoOrigem=loja") == {str(recs[2].id), str(recs[3].id)}
    assert ids(f"produtoId={lote_net['p1'].id}&prioridade=alta") == {str(recs[1].id), str(recs[5].id)}
    assert ids(f"loteId={lote_net['lote'].id}&status=pendente&tipoOrigem=cd") == {
        str(recs[i].id) for i in (0, 1, 5)
    }
    bad = client.get(f"{API}/recomendacoes?prioridade=urgente", headers=planner)
    assert bad.status_code == 422 and bad.get_json()["detail"][0]["loc"] == ["query", "prioridade"]
    bad = client.get(f"{API}/recomendacoes?origemId=xyz", headers=planner)
    assert bad.status_code == 422 and bad.get_json()["detail"][0]["loc"] == ["query", "origemId"]
    missing = client.get(f"{API}/recomendacoes?loteId={uuid.uuid4()}", headers=planner)
    assert missing.status_code == 404


def test_fluxo_and_totais_agree_with_active_recommendations(client, lote_net, planner):
    lote, cd, a, b, c = (lote_net[k] for k in ("lote", "cd", "a", "b", "c"))
    fluxo = client.get(f"{API}/lotes/{lote.id}/fluxo", headers=planner).get_json()
    by_id = {n["id"]: n for n in fluxo}
    assert [n["nome"] for n in fluxo] == ["CD Extrema", "Loja A", "Loja B", "Loja C"]
    assert by_id[str(cd.id)] == {
        "id": str(cd.id),
        "nome": "CD Extrema",
        "isCd": True,
        "totalEnviado": 14,
        "totalRecebido": 0,
        "itensEnviados": 2,
        "itensRecebidos": 0,
    }
    assert (by_id[str(a.id)]["totalEnviado"], by_id[str(a.id)]["totalRecebido"]) == (6, 10)
    assert (by_id[str(b.id)]["totalEnviado"], by_id[str(b.id)]["totalRecebido"]) == (5, 4)
    assert (by_id[str(c.id)]["totalRecebido"], by_id[str(c.id)]["itensRecebidos"]) == (11, 2)
    totais = client.get(f"{API}/lotes/{lote.id}/totais", headers=planner).get_json()
    assert totais == {
        "totalItens": 4,
        "totalUnidades": 25,
        "origens": 3,
        "destinos": 3,
        "altaPrioridade": 2,
        "viaCd": 2,
        "viaLoja": 2,
    }
    assert sum(n["totalEnviado"] for n in fluxo) == sum(n["totalRecebido"] for n in fluxo) == 25
    # Refusing one moves both views together.
    client.post(f"{API}/recomendacoes/{lote_net['recs'][0].id}/recusar", headers=planner)
    totais = client.get(f"{API}/lotes/{lote.id}/totais", headers=planner).get_json()
    assert (totais["totalItens"], totais["totalUnidades"], totais["viaCd"]) == (3, 15, 1)
    fluxo = client.get(f"{API}/lotes/{lote.id}/fluxo", headers=planner).get_json()
    assert sum(n["totalEnviado"] for n in fluxo) == 15


def test_batches_newest_first_and_only_newest_is_new(client, ctx, planner):
    old = make_lote(date(2026, 11, 4))
    new = make_lote(date(2026, 11, 18))
    lotes = client.get(f"{API}/lotes", headers=planner).get_json()
    assert [x["id"] for x in lotes] == [str(new.id), str(old.id)]
    assert [x["novo"] for x in lotes] == [True, False]
    assert [x["status"] for x in lotes] == ["concluido", "concluido"]


def test_unknown_batch_is_404_and_bad_id_422(client, ctx, planner):
    for suffix in ("", "/recomendacoes", "/fluxo", "/totais"):
        r = client.get(f"{API}/lotes/{uuid.uuid4()}{suffix}", headers=planner)
        assert r.status_code == 404 and isinstance(r.get_json()["detail"], str)
    r = client.get(f"{API}/lotes/123/fluxo", headers=planner)
    assert r.status_code == 422 and r.get_json()["detail"][0]["loc"] == ["path", "lid"]
    r = client.get(f"{API}/lotes/{uuid.uuid4()}/recomendacoes?ativas=talvez", headers=planner)
    assert r.status_code == 422 and r.get_json()["detail"][0]["loc"] == ["query", "ativas"]


def test_generate_on_an_empty_network(client, runner, ctx, planner):
    result = generate(runner)
    assert "0 new recommendations" in result.output
    lote = newest(client, planner)
    assert lote["status"] == "concluido"
    assert client.get(f"{API}/lotes/{lote['id']}/totais", headers=planner).get_json()["totalItens"] == 0


def test_text_with_copy_control_characters_round_trips(client, runner, ctx, planner):
    net = build_network(stores=1)
    net["produto"].cor = "Azul\\Marinho\tclaro\nbrilho"
    db.session.flush()
    generate(runner)
    recs = client.get(f"{API}/recomendacoes", headers=planner).get_json()
    assert recs and {r["cor"] for r in recs} == {"Azul\\Marinho\tclaro\nbrilho"}


def test_recommendation_lists_page_in_list_order(client, lote_net, planner):
    lote = lote_net["lote"]
    full = client.get(f"{API}/lotes/{lote.id}/recomendacoes", headers=planner).get_json()
    page = client.get(f"{API}/lotes/{lote.id}/recomendacoes?limite=2&offset=1", headers=planner).get_json()
    assert [r["id"] for r in page] == [r["id"] for r in full[1:3]]
    page = client.get(f"{API}/recomendacoes?limite=3&offset=4", headers=planner).get_json()
    assert [r["id"] for r in page] == [r["id"] for r in full[4:]]
    bad = client.get(f"{API}/recomendacoes?limite=0", headers=planner)
    assert bad.status_code == 422 and bad.get_json()["detail"][0]["loc"] == ["query", "limite"]
    bad = client.get(f"{API}/lotes/{lote.id}/recomendacoes?offset=-1", headers=planner)
    assert bad.status_code == 422 and bad.get_json()["detail"][0]["loc"] == ["query", "offset"]


_ID = "6f1e0b7a-8f4e-4a39-9d7a-000000000001"
ENDPOINTS = [
    ("get", f"{API}/recomendacoes"),
    ("get", f"{API}/recomendacoes/{_ID}"),
    ("post", f"{API}/recomendacoes/{_ID}/aprovar"),
    ("post", f"{API}/recomendacoes/{_ID}/recusar"),
    ("post", f"{API}/recomendacoes/{_ID}/executar"),
    ("get", f"{API}/lotes"),
    ("get", f"{API}/lotes/{_ID}"),
    ("get", f"{API}/lotes/{_ID}/recomendacoes"),
    ("get", f"{API}/lotes/{_ID}/fluxo"),
    ("get", f"{API}/lotes/{_ID}/totais"),
    ("post", f"{API}/lotes/{_ID}/recomendacoes/{_ID}/vetar"),
    ("post", f"{API}/lotes/{_ID}/recomendacoes/{_ID}/restaurar"),
    ("get", f"{API}/regras"),
    ("put", f"{API}/regras"),
    ("get", f"{API}/config/cadence"),
    ("put", f"{API}/config/cadence"),
    ("get", f"{API}/metricas/kpis-dashboard"),
    ("get", f"{API}/metricas/validacao"),
    ("get", f"{API}/metricas/efetividade-semanal"),
    ("get", f"{API}/metricas/aprendizado"),
    ("get", f"{API}/historico"),
    ("get", f"/api/v1/produtos/{_ID}/grade"),
]


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_every_endpoint_needs_a_bearer_token(client, method, path):
    r = getattr(client, method)(path, json={})
    assert r.status_code == 401
    assert isinstance(r.get_json()["detail"], str) and r.headers["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize(("method", "path"), [e for e in ENDPOINTS if _ID in e[1]])
def test_malformed_path_ids_are_422(client, ctx, method, path):
    headers = auth_headers(client, make_user(papel="admin"))
    r = getattr(client, method)(path.replace(_ID, "x1"), headers=headers, json={"motivo": "m"})
    assert r.status_code == 422
    assert all(d["loc"][0] == "path" for d in r.get_json()["detail"])
