"""The decision state machine, veto, roles and who-acted-when, through the API."""

from __future__ import annotations

import pytest

from tests.factories import auth_headers, make_loja, make_lote, make_produto, make_rec, make_user
from tests.stock.support import API


@pytest.fixture
def net(ctx):
    cd = make_loja(nome="CD Cajamar", is_cd=True)
    a = make_loja(nome="Loja Paulista")
    b = make_loja(nome="Loja Moema")
    c = make_loja(nome="Loja Curitiba", cidade="Curitiba")
    produto = make_produto(nome="Tênis Corrida")
    lote = make_lote()
    return {"cd": cd, "a": a, "b": b, "c": c, "produto": produto, "lote": lote}


@pytest.fixture
def planner(client, ctx):
    user = make_user(papel="planejador", name="Paula Planejadora")
    return auth_headers(client, user)


def post(client, path, headers, **kw):
    return client.post(f"{API}{path}", headers=headers, **kw)


def test_approve_then_execute_records_who_and_when(client, net, planner):
    rec = make_rec(net["lote"], net["produto"], net["cd"], net["a"])
    r = post(client, f"/recomendacoes/{rec.id}/aprovar", planner)
    assert r.status_code == 200
    body = r.get_json()
    assert body["status"] == "aprovada" and body["vetado"] is False
    r = post(client, f"/recomendacoes/{rec.id}/executar", planner)
    assert r.status_code == 200 and r.get_json()["status"] == "executada"
    hist = client.get(f"{API}/historico", headers=planner).get_json()
    assert [(h["id"], h["status"], h["usuario"]) for h in hist] == [
        (str(rec.id), "executada", "Paula Planejadora")
    ]
    assert hist[0]["data"]


def test_repeating_an_action_answers_200_unchanged(client, net, planner):
    rec = make_rec(net["lote"], net["produto"], net["cd"], net["a"])
    first = post(client, f"/recomendacoes/{rec.id}/aprovar", planner).get_json()
    again = post(client, f"/recomendacoes/{rec.id}/aprovar", planner)
    assert again.status_code == 200
    assert again.get_json() == first
    post(client, f"/recomendacoes/{rec.id}/recusar", planner)
    again = post(client, f"/recomendacoes/{rec.id}/recusar", planner)
    assert again.status_code == 200 and again.get_json()["status"] == "recusada"


@pytest.mark.parametrize(
    ("status", "acao", "expected"),
    [
        ("pendente", "executar", 409),
        ("executada", "aprovar", 409),
        ("executada", "recusar", 409),
        ("recusada", "aprovar", 409),
        ("recusada", "executar", 409),
        ("aprovada", "recusar", 200),
        ("pendente", "recusar", 200),
    ],
)
def test_transitions_the_state_does_not_allow_are_409(client, net, planner, status, acao, expected):
    rec = make_rec(net["lote"], net["produto"], net["cd"], net["a"], status=status)
    r = post(client, f"/recomendacoes/{rec.id}/{acao}", planner)
    assert r.status_code == expected, r.get_json()
    if expected == 409:
        assert isinstance(r.get_json()["detail"], str)
        assert client.get(f"{API}/recomendacoes/{rec.id}", headers=planner).get_json()["status"] == status


def test_veto_blocks_approval_and_execution_until_restored(client, net, planner):
    lote = net["lote"]
    rec = make_rec(lote, net["produto"], net["cd"], net["a"])
    base = f"/lotes/{lote.id}/recomendacoes/{rec.id}"
    r = post(client, f"{base}/vetar", planner, json={"motivo": "Loja em reforma"})
    assert r.status_code == 200
    assert r.get_json()["vetado"] is True and r.get_json()["motivoVeto"] == "Loja em reforma"
    # A repeated veto keeps the first reason.
    r = post(client, f"{base}/vetar", planner, json={"motivo": "outro"})
    assert r.status_code == 200 and r.get_json()["motivoVeto"] == "Loja em reforma"
    assert post(client, f"/recomendacoes/{rec.id}/aprovar", planner).status_code == 409
    r = post(client, f"{base}/restaurar", planner)
    assert r.status_code == 200
    assert r.get_json()["vetado"] is False and r.get_json()["motivoVeto"] is None
    assert post(client, f"{base}/restaurar", planner).status_code == 200
    assert post(client, f"/recomendacoes/{rec.id}/aprovar", planner).status_code == 200
    post(client, f"{base}/vetar", planner, json={"motivo": "Transporte indisponível"})
    assert post(client, f"/recomendacoes/{rec.id}/executar", planner).status_code == 409


def test_veto_of_a_decided_recommendation_is_409(client, net, planner):
    lote = net["lote"]
    for status in ("executada", "recusada"):
        rec = make_rec(lote, net["produto"], net["cd"], net["a"], status=status)
        r = post(client, f"/lotes/{lote.id}/recomendacoes/{rec.id}/vetar", planner, json={"motivo": "x"})
        assert r.status_code == 409


def test_veto_needs_a_reason(client, net, planner):
    lote = net["lote"]
    rec = make_rec(lote, net["produto"], net["cd"], net["a"])
    path = f"/lotes/{lote.id}/recomendacoes/{rec.id}/vetar"
    r = post(client, path, planner, json={})
    assert r.status_code == 422
    assert r.get_json()["detail"][0]["loc"] == ["body", "motivo"]
    r = post(client, path, planner, json={"motivo": "   "})
    assert r.status_code == 422
    assert r.get_json()["detail"][0]["loc"] == ["body", "motivo"]


def test_veto_through_another_batch_is_404(client, net, planner):
    rec = make_rec(net["lote"], net["produto"], net["cd"], net["a"])
    other = make_lote(net["lote"].data.replace(day=1))
    r = post(client, f"/lotes/{other.id}/recomendacoes/{rec.id}/vetar", planner, json={"motivo": "x"})
    assert r.status_code == 404


def test_unknown_and_malformed_ids(client, net, planner):
    r = post(client, "/recomendacoes/6f1e0b7a-8f4e-4a39-9d7a-000000000000/aprovar", planner)
    assert r.status_code == 404 and isinstance(r.get_json()["detail"], str)
    r = post(client, "/recomendacoes/nao-e-uuid/aprovar", planner)
    assert r.status_code == 422
    assert r.get_json()["detail"][0]["loc"] == ["path", "rid"]


def test_actions_need_a_token(client, net):
    rec = make_rec(net["lote"], net["produto"], net["cd"], net["a"])
    r = client.post(f"{API}/recomendacoes/{rec.id}/aprovar")
    assert r.status_code == 401
    assert r.headers["WWW-Authenticate"] == "Bearer"


def test_visualizador_reads_but_cannot_act(client, net):
    viewer = auth_headers(client, make_user(papel="visualizador"))
    lote = net["lote"]
    rec = make_rec(lote, net["produto"], net["cd"], net["a"])
    assert client.get(f"{API}/recomendacoes/{rec.id}", headers=viewer).status_code == 200
    for acao in ("aprovar", "recusar", "executar"):
        assert post(client, f"/recomendacoes/{rec.id}/{acao}", viewer).status_code == 403
    base = f"/lotes/{lote.id}/recomendacoes/{rec.id}"
    assert post(client, f"{base}/vetar", viewer, json={"motivo": "x"}).status_code == 403
    assert post(client, f"{base}/restaurar", viewer).status_code == 403


def test_gerente_loja_sees_and_executes_only_its_store(client, net):
    lote, produto = net["lote"], net["produto"]
    own_in = make_rec(lote, produto, net["cd"], net["a"], status="aprovada")
    own_out = make_rec(lote, produto, net["a"], net["b"], status="aprovada", tamanho="39")
    other = make_rec(lote, produto, net["cd"], net["c"], status="aprovada")
    gerente = auth_headers(client, make_user(papel="gerente_loja", loja=net["a"]))

    listed = client.get(f"{API}/recomendacoes", headers=gerente).get_json()
    assert {r["id"] for r in listed} == {str(own_in.id), str(own_out.id)}
    listed = client.get(f"{API}/lotes/{lote.id}/recomendacoes", headers=gerente).get_json()
    assert {r["id"] for r in listed} == {str(own_in.id), str(own_out.id)}
    assert client.get(f"{API}/recomendacoes/{other.id}", headers=gerente).status_code == 404

    assert post(client, f"/recomendacoes/{own_in.id}/aprovar", gerente).status_code == 403
    assert post(client, f"/recomendacoes/{own_in.id}/recusar", gerente).status_code == 403
    r = post(client, f"/lotes/{lote.id}/recomendacoes/{own_in.id}/vetar", gerente, json={"motivo": "x"})
    assert r.status_code == 403
    assert post(client, f"/recomendacoes/{own_out.id}/executar", gerente).status_code == 200
    assert post(client, f"/recomendacoes/{other.id}/executar", gerente).status_code == 404
    planner = auth_headers(client, make_user(papel="planejador"))
    assert client.get(f"{API}/recomendacoes/{other.id}", headers=planner).get_json()["status"] == "aprovada"
    # Latest decision first; `other` is not the manager's store.
    hist = client.get(f"{API}/historico", headers=gerente).get_json()
    assert [h["id"] for h in hist] == [str(own_out.id), str(own_in.id)]
    totais = client.get(f"{API}/lotes/{lote.id}/totais", headers=gerente).get_json()
    assert totais["totalItens"] == 2


def test_gerente_without_store_sees_nothing(client, net):
    make_rec(net["lote"], net["produto"], net["cd"], net["a"])
    gerente = auth_headers(client, make_user(papel="gerente_loja"))
    assert client.get(f"{API}/recomendacoes", headers=gerente).get_json() == []


def test_batch_status_follows_the_decisions(client, net, planner):
    lote = net["lote"]
    r1 = make_rec(lote, net["produto"], net["cd"], net["a"])
    r2 = make_rec(lote, net["produto"], net["cd"], net["b"])

    def status():
        return client.get(f"{API}/lotes/{lote.id}", headers=planner).get_json()["status"]

    assert status() == "aberto"
    post(client, f"/recomendacoes/{r1.id}/aprovar", planner)
    assert status() == "aberto"
    post(client, f"/lotes/{lote.id}/recomendacoes/{r2.id}/vetar", planner, json={"motivo": "x"})
    assert status() == "concluido"
    post(client, f"/lotes/{lote.id}/recomendacoes/{r2.id}/restaurar", planner)
    assert status() == "aberto"
    post(client, f"/recomendacoes/{r2.id}/recusar", planner)
    assert status() == "concluido"
