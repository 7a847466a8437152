"""The planners' pages through the test client: dashboard, batches, decisions in place, CSV, grade,
rules, history; roles exactly as in the API."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import date

import pytest

from extensions import db
from models.stock import Venda
from services.clock import today
from tests.factories import (
    PASSWORD,
    auth_headers,
    make_loja,
    make_lote,
    make_produto,
    make_rec,
    make_user,
    set_stock,
)

API = "/api/v1/remanejamento"


# --- builders (shared with the browser tests) ------------------------------------------------


def small_network() -> dict:
    """A CD, three stores, two products and a batch of five recommendations in known states."""
    cd = make_loja(nome="CD Cajamar", codigo="CD01", cidade="Cajamar", is_cd=True)
    paulista = make_loja(nome="Loja Paulista", codigo="SP01")
    moema = make_loja(nome="Loja Moema", codigo="SP02")
    curitiba = make_loja(nome="Loja Curitiba", codigo="PR01", cidade="Curitiba")
    tenis = make_produto(nome="Tênis Corrida Leve", sku="TCL-01", tamanhos=("37", "38", "39"))
    bota = make_produto(
        nome="Bota Couro", sku="BTC-02", marca="Marca B", cor="Marrom", tamanhos=("36", "37", "38")
    )
    set_stock(cd, tenis, **{"37": 20, "38": 30, "39": 10})
    set_stock(paulista, tenis, **{"37": 2, "38": 0, "39": 1})
    set_stock(moema, tenis, **{"37": 5, "38": 4, "39": 0})
    set_stock(curitiba, bota, **{"36": 9, "37": 8, "38": 7})
    lote = make_lote(date(2026, 11, 18))
    recs = {
        "alta": make_rec(lote, tenis, cd, paulista, tamanho="38", quantidade=6, prioridade="alta", score=90),
        "media": make_rec(lote, tenis, cd, moema, tamanho="39", quantidade=4, prioridade="media", score=70),
        "baixa": make_rec(
            lote, bota, curitiba, moema, tamanho="37", quantidade=3, prioridade="baixa", score=30
        ),
        "aprovada": make_rec(lote, tenis, moema, paulista, tamanho="37", quantidade=3, status="aprovada"),
        "executada": make_rec(lote, bota, curitiba, paulista, tamanho="36", quantidade=4, status="executada"),
    }
    return {
        "cd": cd,
        "paulista": paulista,
        "moema": moema,
        "curitiba": curitiba,
        "tenis": tenis,
        "bota": bota,
        "lote": lote,
        "recs": recs,
    }


# --- helpers ---------------------------------------------------------------------------------


def sign_in(client, user) -> str:
    response = client.post("/login", data={"email": user.email, "senha": PASSWORD})
    assert response.status_code == 302
    return client.get_cookie("csrf_access_token").value


def hx(csrf: str | None = None) -> dict:
    headers = {"HX-Request": "true"}
    if csrf:
        headers["X-CSRF-TOKEN"] = csrf
    return headers


def text(response) -> str:
    return response.get_data(as_text=True)


def total(body: str, name: str) -> int:
    match = re.search(rf'data-total="{name}">([\d.]+)<', body)
    assert match, f"total {name} not shown"
    return int(match.group(1).replace(".", ""))


def api_status(client, user, rid) -> dict:
    return client.get(f"{API}/recomendacoes/{rid}", headers=auth_headers(client, user)).get_json()


@pytest.fixture
def net(ctx):
    return small_network()


@pytest.fixture
def planner(ctx):
    return make_user(papel="planejador", name="Paula Planejadora")


# --- dashboard and list ----------------------------------------------------------------------


def test_dashboard_shows_kpis_charts_and_the_open_batch(client, net, planner):
    sign_in(client, planner)
    body = text(client.get("/"))
    assert "Olá, Paula" in body
    assert "pendentes de decisão" in body
    assert net["lote"].semana in body
    # Charts carry their data as JSON, with a table fallback.
    assert '<script type="application/json" data-chart="chart-efetividade">' in body
    assert "Ver os dados em tabela" in body
    # The most urgent pending decision of the open batch is named.
    assert "Decisões mais urgentes" in body and "Tênis Corrida Leve" in body


def test_dashboard_learning_chart_after_refusals(client, net, planner):
    csrf = sign_in(client, planner)
    lid = net["lote"].id
    client.post(
        f"/lotes/{lid}/recomendacoes/{net['recs']['baixa'].id}/recusar",
        data={"motivoRecusa": "loja_recusa"},
        headers=hx(csrf),
    )
    body = text(client.get("/"))
    chart = re.search(r'data-chart="chart-aprendizado">(.*?)</script>', body, re.S)
    assert chart, "the learning chart is drawn once a refusal exists"
    config = json.loads(chart.group(1))
    assert any("Loja Curitiba → Loja Moema" in label for label in config["data"]["labels"])
    assert "Redução do score" in body and "Loja Curitiba → Loja Moema" in body


def test_dashboard_without_any_batch_says_so(client, ctx):
    sign_in(client, make_user(papel="visualizador", name="Vera Leitora"))
    body = text(client.get("/"))
    assert "Nenhum lote gerado ainda" in body
    assert "Sem lotes ainda" in body
    assert "Nenhuma transferência executada ainda" in body
    assert 'data-chart="chart-resultado"' not in body


def test_dashboard_outcome_chart_predicted_against_sold(client, net, planner):
    # The executed Bota 36 (Curitiba → Paulista, 4 units, executed on the batch day) was
    # predicted to sell 3.5 more; Paulista held none and sold 3 since: one batch, window open
    # or complete depending on today, never both.
    rec = net["recs"]["executada"]
    rec.venda_extra_esperada = 3.5
    rec.estoque_destino = 0
    db.session.add(
        Venda(
            data=rec.executada_data,
            loja_id=net["paulista"].id,
            produto_id=net["bota"].id,
            tamanho="36",
            qtd=3,
        )
    )
    db.session.flush()
    sign_in(client, planner)
    body = text(client.get("/"))
    chart = re.search(r'data-chart="chart-resultado">(.*?)</script>', body, re.S)
    assert chart, "the outcome chart is drawn once a transfer was executed"
    config = json.loads(chart.group(1))
    assert config["data"]["labels"] == [net["lote"].semana]
    series = {d["label"]: (d["stack"], d["data"]) for d in config["data"]["datasets"]}
    complete = (today() - rec.executada_data).days >= 14
    predicted = series["Previsto (ESI), janela completa" if complete else "Previsto, janela aberta"]
    sold = series["Vendido do movimentado em 14 dias" if complete else "Vendido até agora, janela aberta"]
    assert predicted == ("esi", [3.5]) and sold == ("asi", [3])
    assert series["Previsto, janela aberta" if complete else "Previsto (ESI), janela completa"][1] == [0]
    assert "Previsto × vendido" in body and "Vendido ÷ previsto" in body


def test_batch_list_is_newest_first_and_marks_the_new_one(client, net, planner):
    older = make_lote(date(2026, 11, 4))
    sign_in(client, planner)
    body = text(client.get("/lotes"))
    assert body.index(net["lote"].semana) < body.index(older.semana)
    assert body.count(">Novo<") == 1
    assert body.index(">Novo<") < body.index(older.semana)


# --- batch page ------------------------------------------------------------------------------


def test_batch_page_full_then_only_the_table_for_htmx(client, net, planner):
    sign_in(client, planner)
    url = f"/lotes/{net['lote'].id}"
    full = client.get(url)
    assert full.status_code == 200 and "<html" in text(full)
    assert "HX-Request" in full.headers["Vary"]
    assert 'id="totais"' in text(full) and 'id="fluxo"' in text(full)
    fragment = client.get(f"{url}?prioridade=alta", headers=hx())
    body = text(fragment)
    assert "<html" not in body and 'id="recs"' in body
    assert str(net["recs"]["alta"].id) in body
    assert str(net["recs"]["media"].id) not in body
    assert "HX-Request" in fragment.headers["Vary"]


def test_flow_per_node_lists_what_each_node_sends_and_receives(client, net, planner):
    sign_in(client, planner)
    page = text(client.get(f"/lotes/{net['lote'].id}"))
    body = page[page.index('<section id="fluxo"') :]
    # Active ones: the CD sends 6 + 4 in two items; Paulista receives 6 + 3 + 4 and sends nothing.
    paulista = body[body.index("Loja Paulista") :]
    assert re.search(r"0 <span[^>]*>un\. · 0 itens</span></td>\s*<td class=\"num\"[^>]*>13 <span", paulista)
    cd = body[body.index("CD Cajamar") :]
    assert re.search(r"10 <span[^>]*>un\. · 2 itens", cd)
    # One item is one "item".
    moema = body[body.index("Loja Moema") :]
    assert re.search(r"3 <span[^>]*>un\. · 1 item</span>", moema)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("tipoOrigem=loja", {"baixa", "aprovada", "executada"}),
        ("status=aprovada", {"aprovada"}),
        ("prioridade=baixa", {"baixa"}),
    ],
)
def test_batch_filters_match_exactly(client, net, planner, query, expected):
    sign_in(client, planner)
    body = text(client.get(f"/lotes/{net['lote'].id}?{query}", headers=hx()))
    shown = {name for name, rec in net["recs"].items() if f'id="rec-{rec.id}"' in body}
    assert shown == expected


def test_batch_filters_by_store_and_product(client, net, planner):
    sign_in(client, planner)
    lid = net["lote"].id
    body = text(client.get(f"/lotes/{lid}?lojaDestinoId={net['moema'].id}&produtoId={net['tenis'].id}"))
    shown = {name for name, rec in net["recs"].items() if f'id="rec-{rec.id}"' in body}
    assert shown == {"media"}
    body = text(client.get(f"/lotes/{lid}?origemId={net['curitiba'].id}", headers=hx()))
    shown = {name for name, rec in net["recs"].items() if f'id="rec-{rec.id}"' in body}
    assert shown == {"baixa", "executada"}


def test_vetoed_filter_and_bad_filters_are_reported(client, net, planner):
    vetoed = make_rec(net["lote"], net["tenis"], net["cd"], net["curitiba"], vetado=True)
    sign_in(client, planner)
    body = text(client.get(f"/lotes/{net['lote'].id}?status=vetada", headers=hx()))
    assert f'id="rec-{vetoed.id}"' in body and body.count('<tr id="rec-') == 1
    assert "Loja em reforma" in body
    bad = client.get(f"/lotes/{net['lote'].id}?prioridade=urgente&origemId=nope")
    assert bad.status_code == 200
    assert "Filtro inválido ignorado" in text(bad)
    assert text(bad).count('<tr id="rec-') == 6


def test_batch_table_sorts_and_paginates(client, net, planner):
    for i in range(60):
        make_rec(net["lote"], net["bota"], net["cd"], net["moema"], tamanho="38", score=i, prioridade="baixa")
    sign_in(client, planner)
    lid = net["lote"].id
    first = text(client.get(f"/lotes/{lid}", headers=hx()))
    assert "Página 1 de 2" in first and "65 recomendações" in first
    assert first.count('<tr id="rec-') == 50
    assert first.index(str(net["recs"]["alta"].id)) < first.index(str(net["recs"]["media"].id))
    second = text(client.get(f"/lotes/{lid}?pagina=2", headers=hx()))
    assert second.count('<tr id="rec-') == 15
    by_qtd = text(client.get(f"/lotes/{lid}?ordem=quantidade&dir=desc", headers=hx()))
    rows = re.findall(r'<tr id="rec-([0-9a-f-]+)"', by_qtd)
    assert rows[0] == str(net["recs"]["alta"].id)  # 6 units, the largest
    assert 'aria-sort="descending"' in by_qtd
    by_score = text(client.get(f"/lotes/{lid}?ordem=score&dir=asc", headers=hx()))
    rows = re.findall(r'<tr id="rec-([0-9a-f-]+)"', by_score)
    assert str(net["recs"]["alta"].id) not in rows  # score 90: on the second page ascending


def test_unknown_batch_is_a_404_page(client, planner):
    sign_in(client, planner)
    assert client.get("/lotes/00000000-0000-0000-0000-000000000000").status_code == 404
    assert client.get("/lotes/not-a-uuid").status_code == 404


def _row_ids(body: str) -> list[str]:
    return re.findall(r'<tr id="rec-([0-9a-f-]+)"', body)


def test_every_sort_is_the_database_s_and_matches_the_names_shown(client, net, planner):
    """Each column sorts ascending and descending, case-insensitively by name, ties in list order."""
    lote, cd = net["lote"], net["cd"]
    zeta = make_loja(nome="loja zeta", codigo="SP09")
    baixa = make_produto(nome="bota baixa", sku="BTB-03", tamanhos=("37", "38"))
    extra = [
        make_rec(lote, baixa, zeta, net["moema"], tamanho="37", quantidade=9, score=10, dias_ate_ruptura=1),
        make_rec(lote, net["tenis"], cd, zeta, tamanho="39", quantidade=2, score=95, dias_ate_ruptura=7),
        make_rec(lote, baixa, cd, zeta, tamanho="38", quantidade=4, score=60, status="recusada", vetado=True),
    ]
    recs = [*net["recs"].values(), *extra]
    sign_in(client, planner)
    from models.stock import Loja, Produto

    lojas = {loja.id: loja.nome for loja in db.session.query(Loja)}
    produtos = {p.id: p.nome for p in db.session.query(Produto)}
    status_order = {"pendente": 0, "aprovada": 1, "executada": 2, "recusada": 3}
    in_list_order = sorted(recs, key=lambda r: (r.prioridade_rank, -r.score, r.posicao))
    keys = {
        "score": lambda r: r.score,
        "quantidade": lambda r: r.quantidade,
        "ruptura": lambda r: r.dias_ate_ruptura,
        "produto": lambda r: (produtos[r.produto_id].lower(), r.tamanho),
        "origem": lambda r: lojas[r.origem_id].lower(),
        "destino": lambda r: lojas[r.destino_id].lower(),
        "status": lambda r: (r.vetado, status_order[r.status]),
    }
    for ordem, key in keys.items():
        for direction in ("asc", "desc"):
            expected = [str(r.id) for r in sorted(in_list_order, key=key, reverse=direction == "desc")]
            body = text(client.get(f"/lotes/{lote.id}?ordem={ordem}&dir={direction}", headers=hx()))
            assert _row_ids(body) == expected, (ordem, direction)
    backwards = text(client.get(f"/lotes/{lote.id}?ordem=prioridade&dir=desc", headers=hx()))
    assert _row_ids(backwards) == [str(r.id) for r in reversed(in_list_order)]


# --- decisions in place ----------------------------------------------------------------------


def test_approve_in_place_returns_the_row_and_fresh_totals(client, net, planner):
    csrf = sign_in(client, planner)
    rec = net["recs"]["alta"]
    response = client.post(f"/lotes/{net['lote'].id}/recomendacoes/{rec.id}/aprovar", headers=hx(csrf))
    assert response.status_code == 200
    body = text(response)
    assert body.lstrip().startswith(f'<tr id="rec-{rec.id}"')
    assert "Aprovada" in body and ">Executar<" in body
    assert 'id="totais" ' in body and 'hx-swap-oob="true"' in body
    assert api_status(client, planner, rec.id)["status"] == "aprovada"


def test_a_plain_form_post_applies_and_returns_to_the_batch(client, net, planner):
    csrf = sign_in(client, planner)
    lid, rec = net["lote"].id, net["recs"]["alta"]
    response = client.post(
        f"/lotes/{lid}/recomendacoes/{rec.id}/vetar", data={"motivo": "Sem espaço", "csrf_token": csrf}
    )
    assert response.status_code == 303
    assert response.headers["Location"] == f"/lotes/{lid}#rec-{rec.id}"
    assert api_status(client, planner, rec.id)["motivoVeto"] == "Sem espaço"
    empty = client.post(f"/lotes/{lid}/recomendacoes/{rec.id}/vetar", data={"csrf_token": csrf})
    assert empty.status_code == 422 and "Informe o motivo do veto" in text(empty)


def test_actions_need_the_csrf_token(client, net, planner):
    sign_in(client, planner)
    rec = net["recs"]["alta"]
    response = client.post(f"/lotes/{net['lote'].id}/recomendacoes/{rec.id}/aprovar", headers=hx())
    assert response.status_code == 400
    assert api_status(client, planner, rec.id)["status"] == "pendente"


def test_veto_needs_a_reason_then_totals_drop_and_restore_brings_them_back(client, net, planner):
    csrf = sign_in(client, planner)
    lid, rec = net["lote"].id, net["recs"]["alta"]
    form = text(client.get(f"/lotes/{lid}/recomendacoes/{rec.id}?modo=veto", headers=hx()))
    assert 'name="motivo"' in form and "Confirmar veto" in form
    before = total(text(client.get(f"/lotes/{lid}")), "totalUnidades")

    empty = client.post(f"/lotes/{lid}/recomendacoes/{rec.id}/vetar", data={"motivo": " "}, headers=hx(csrf))
    assert empty.status_code == 422
    assert "Informe o motivo do veto" in text(empty) and 'name="motivo"' in text(empty)
    assert api_status(client, planner, rec.id)["vetado"] is False

    vetoed = client.post(
        f"/lotes/{lid}/recomendacoes/{rec.id}/vetar", data={"motivo": "Loja em inventário"}, headers=hx(csrf)
    )
    assert vetoed.status_code == 200
    assert "Loja em inventário" in text(vetoed) and ">Restaurar<" in text(vetoed)
    assert total(text(vetoed), "totalUnidades") == before - rec.quantidade
    body = api_status(client, planner, rec.id)
    assert body["vetado"] is True and body["motivoVeto"] == "Loja em inventário"

    restored = client.post(f"/lotes/{lid}/recomendacoes/{rec.id}/restaurar", headers=hx(csrf))
    assert restored.status_code == 200
    assert total(text(restored), "totalUnidades") == before
    assert api_status(client, planner, rec.id)["vetado"] is False


def test_a_move_the_state_does_not_allow_shows_the_reason_in_the_row(client, net, planner):
    csrf = sign_in(client, planner)
    rec = net["recs"]["executada"]
    response = client.post(f"/lotes/{net['lote'].id}/recomendacoes/{rec.id}/aprovar", headers=hx(csrf))
    assert response.status_code == 409
    assert f'<tr id="rec-{rec.id}"' in text(response)
    assert "Não é possível aprovar" in text(response)


def test_a_recommendation_of_another_batch_is_not_found(client, net, planner):
    other = make_lote(date(2026, 11, 4))
    csrf = sign_in(client, planner)
    rec = net["recs"]["alta"]
    response = client.post(f"/lotes/{other.id}/recomendacoes/{rec.id}/aprovar", headers=hx(csrf))
    assert response.status_code == 404
    assert api_status(client, planner, rec.id)["status"] == "pendente"


def test_viewers_see_no_buttons_and_the_server_refuses_their_actions(client, net):
    viewer = make_user(papel="visualizador")
    csrf = sign_in(client, viewer)
    body = text(client.get(f"/lotes/{net['lote'].id}"))
    assert ">Aprovar<" not in body and ">Vetar<" not in body
    assert '<form id="bulk-form"' not in body and 'type="checkbox" name="rid"' not in body
    rec = net["recs"]["alta"]
    response = client.post(f"/lotes/{net['lote'].id}/recomendacoes/{rec.id}/aprovar", headers=hx(csrf))
    assert response.status_code == 403
    assert "Sem permissão" in text(response)
    assert api_status(client, viewer, rec.id)["status"] == "pendente"


def test_store_managers_see_and_execute_only_their_store(client, net):
    manager = make_user(papel="gerente_loja", loja=net["paulista"])
    csrf = sign_in(client, manager)
    body = text(client.get(f"/lotes/{net['lote'].id}"))
    shown = {name for name, rec in net["recs"].items() if f'id="rec-{rec.id}"' in body}
    assert shown == {"alta", "aprovada", "executada"}
    assert ">Aprovar<" not in body and ">Executar<" in body
    lid = net["lote"].id
    ok = client.post(f"/lotes/{lid}/recomendacoes/{net['recs']['aprovada'].id}/executar", headers=hx(csrf))
    assert ok.status_code == 200 and "Executada" in text(ok)
    other = client.post(f"/lotes/{lid}/recomendacoes/{net['recs']['media'].id}/executar", headers=hx(csrf))
    assert other.status_code == 404
    refused = client.post(f"/lotes/{lid}/recomendacoes/{net['recs']['alta'].id}/aprovar", headers=hx(csrf))
    assert refused.status_code == 403
    # In bulk, another store's recommendation is "not found", never named.
    hidden = client.post(
        f"/lotes/{lid}/acoes",
        data={"acao": "executar", "rid": [str(net["recs"]["media"].id)]},
        headers=hx(csrf),
    )
    assert "1 não pôde mudar" in text(hidden) and "Recomendação não encontrada" in text(hidden)
    assert "Loja Moema" not in text(hidden).split('id="bulk-result"')[1].split("</div>")[0]


ACTION_LABELS = {
    "Aprovar": "aprovar",
    "Executar": "executar",
    "Recusar": "recusar",
    "Vetar": "vetar",
    "Restaurar": "restaurar",
}


def _offered(page_row: str) -> list[str]:
    return [
        ACTION_LABELS[label]
        for label in re.findall(r">(Aprovar|Executar|Recusar|Vetar|Restaurar)</(?:button|a)>", page_row)
    ]


@pytest.mark.parametrize("papel", ["planejador", "gerente_loja", "visualizador"])
def test_a_row_offers_exactly_the_moves_the_service_makes(client, net, papel):
    """Pending: approve, refuse, veto; approved: execute, refuse, veto; vetoed: restore only;
    decided: nothing. Each offered move is accepted and changes the recommendation."""
    user = make_user(papel=papel, loja=net["paulista"] if papel == "gerente_loja" else None)
    csrf = sign_in(client, user)
    decide, execute = papel == "planejador", papel in ("planejador", "gerente_loja")
    expected = {
        ("pendente", False): ["aprovar", "recusar", "vetar"] if decide else [],
        ("aprovada", False): (["executar"] if execute else []) + (["recusar", "vetar"] if decide else []),
        ("executada", False): [],
        ("recusada", False): [],
        ("pendente", True): ["restaurar"] if decide else [],
        ("aprovada", True): ["restaurar"] if decide else [],
        ("recusada", True): ["restaurar"] if decide else [],
    }
    lid = net["lote"].id
    for (status, vetado), moves in expected.items():
        rec = make_rec(net["lote"], net["tenis"], net["cd"], net["paulista"], status=status, vetado=vetado)
        row = text(client.get(f"/lotes/{lid}/recomendacoes/{rec.id}", headers=hx()))
        assert _offered(row) == moves, (status, vetado)
        for acao in moves:
            fresh = make_rec(
                net["lote"], net["tenis"], net["cd"], net["paulista"], status=status, vetado=vetado
            )
            before = api_status(client, make_user(papel="admin"), fresh.id)
            response = client.post(
                f"/lotes/{lid}/recomendacoes/{fresh.id}/{acao}",
                data={"motivo": "Sem espaço", "motivoRecusa": "custo"},
                headers=hx(csrf),
            )
            assert response.status_code == 200, (status, vetado, acao)
            after = api_status(client, make_user(papel="admin"), fresh.id)
            assert (after["status"], after["vetado"]) != (before["status"], before["vetado"]), acao


def test_bulk_actions_report_what_could_not_change(client, net, planner):
    csrf = sign_in(client, planner)
    lid, recs = net["lote"].id, net["recs"]
    response = client.post(
        f"/lotes/{lid}/acoes",
        data={
            "acao": "aprovar",
            "rid": [str(recs["alta"].id), str(recs["media"].id), str(recs["executada"].id)],
            "prioridade": "",
            "ordem": "prioridade",
        },
        headers=hx(csrf),
    )
    assert response.status_code == 200
    body = text(response)
    assert "2 aprovadas; 1 não pôde mudar" in body
    assert "Não é possível aprovar uma recomendação executada" in body
    assert 'id="totais" hx-swap-oob="true"' in body or ('id="totais"' in body and "hx-swap-oob" in body)
    assert api_status(client, planner, recs["alta"].id)["status"] == "aprovada"
    assert api_status(client, planner, recs["media"].id)["status"] == "aprovada"
    assert api_status(client, planner, recs["executada"].id)["status"] == "executada"


def test_bulk_veto_needs_a_reason_and_keeps_the_filters(client, net, planner):
    csrf = sign_in(client, planner)
    lid, recs = net["lote"].id, net["recs"]
    data = {"acao": "vetar", "rid": [str(recs["alta"].id)], "prioridade": "alta"}
    missing = client.post(f"/lotes/{lid}/acoes", data=data, headers=hx(csrf))
    assert missing.status_code == 422 and "Informe o motivo do veto" in text(missing)
    done = client.post(f"/lotes/{lid}/acoes", data={**data, "motivo": "Sem espaço"}, headers=hx(csrf))
    assert done.status_code == 200
    body = text(done)
    assert "1 vetada." in body
    assert str(recs["media"].id) not in body  # the prioridade=alta filter still applies
    assert api_status(client, planner, recs["alta"].id)["motivoVeto"] == "Sem espaço"
    nothing = client.post(f"/lotes/{lid}/acoes", data={"acao": "aprovar"}, headers=hx(csrf))
    assert nothing.status_code == 422 and "Selecione ao menos uma" in text(nothing)


def test_bulk_actions_are_refused_to_viewers(client, net):
    viewer = make_user(papel="visualizador")
    csrf = sign_in(client, viewer)
    rec = net["recs"]["alta"]
    response = client.post(
        f"/lotes/{net['lote'].id}/acoes", data={"acao": "aprovar", "rid": [str(rec.id)]}, headers=hx(csrf)
    )
    assert "Sem permissão" in text(response)
    assert api_status(client, viewer, rec.id)["status"] == "pendente"


# --- CSV export ------------------------------------------------------------------------------


def _csv_rows(response) -> list[list[str]]:
    return list(csv.reader(io.StringIO(response.get_data(as_text=True).lstrip("\ufeff")), delimiter=";"))


def test_pick_lists_of_approved_transfers_per_origin(client, net, planner):
    csrf = sign_in(client, planner)
    lid, recs = net["lote"].id, net["recs"]
    client.post(f"/lotes/{lid}/recomendacoes/{recs['alta'].id}/aprovar", headers=hx(csrf))
    response = client.get(f"/lotes/{lid}/separacao.csv")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert response.headers["Content-Disposition"].startswith("attachment;")
    assert f"separacao-{net['lote'].semana}.csv" in response.headers["Content-Disposition"]
    rows = _csv_rows(response)
    origins = [row[1] for row in rows if row and row[0] == "Origem"]
    assert origins == ["CD Cajamar (CD01)", "Loja Moema (SP02)"]
    assert ["SKU", "Produto", "Cor", "Tamanho", "Quantidade", "Destino", "Cidade do destino"] in rows
    assert ["TCL-01", "Tênis Corrida Leve", "Preto", "38", "6", "Loja Paulista", "São Paulo"] in rows
    assert ["TCL-01", "Tênis Corrida Leve", "Preto", "37", "3", "Loja Paulista", "São Paulo"] in rows
    # Pending, executed and vetoed ones are not picked.
    assert not any(row and row[0] == "BTC-02" for row in rows)

    # A product name that a spreadsheet would run as a formula stays text.
    net["tenis"].nome = "=HYPERLINK(1)"
    db.session.flush()
    rows = _csv_rows(client.get(f"/lotes/{lid}/separacao.csv"))
    assert ["TCL-01", "'=HYPERLINK(1)", "Preto", "38", "6", "Loja Paulista", "São Paulo"] in rows

    one = client.get(f"/lotes/{lid}/separacao.csv?origemId={net['moema'].id}")
    assert "SP02" in one.headers["Content-Disposition"]
    assert [row[1] for row in _csv_rows(one) if row and row[0] == "Origem"] == ["Loja Moema (SP02)"]


# --- grade -----------------------------------------------------------------------------------


def test_grade_matrix_shows_current_delta_final_and_stock_outs(client, net, planner):
    older = make_lote(date(2026, 11, 4))
    sign_in(client, planner)
    picker = text(client.get("/grade?q=corrida"))
    assert "Tênis Corrida Leve" in picker and "Bota Couro" not in picker
    response = client.get(f"/grade/{net['tenis'].id}")
    assert response.status_code == 200
    body = text(response)
    # Paulista, size 38: 0 now, +6 from the CD, 6 after the batch.
    assert "tamanho 38: atual 0, movimento 6, final 6" in body
    # Moema, size 39: nothing now and nothing coming in the active recommendation? +4: final 4.
    assert "tamanho 39: atual 0, movimento 4, final 4" in body
    # Paulista 39 has 1, Curitiba has none of this product: stock-outs are marked.
    assert "tamanho 37: atual 0, movimento 0, final 0, ruptura" in body
    switched = client.get(f"/grade/{net['tenis'].id}?lote={older.id}", headers=hx())
    fragment = text(switched)
    assert "<html" not in fragment and 'id="grade-matrix"' in fragment
    assert "tamanho 38: atual 0, movimento 0, final 0, ruptura" in fragment
    assert client.get(f"/grade/{net['tenis'].id}?lote=nope").status_code == 404
    assert client.get("/grade/00000000-0000-0000-0000-000000000000").status_code == 404


# --- rules, cadence, history -----------------------------------------------------------------


def _rules_form(**changes) -> dict:
    form = {
        "qtdMinima": "3",
        "qtdMaxima": "15",
        "periodo": "30",
        "pesoDistancia": "40",
        "pesoGiro": "35",
        "pesoEstoque": "25",
        "priorizarCd": "on",
        "bloqueioCampanha": "on",
        "custoEnvio": "300",
        "custoKm": "1",
        "ganhoMinimo": "150",
    }
    form.update(changes)
    return {k: v for k, v in form.items() if v is not None}


def test_admin_edits_rules_with_inline_errors(client, net):
    admin = make_user(papel="admin")
    csrf = sign_in(client, admin)
    bad = client.post("/regras", data=_rules_form(pesoGiro="150", qtdMinima="abc"), headers=hx(csrf))
    assert bad.status_code == 422
    body = text(bad)
    assert 'id="pesoGiro-error"' in body and "de 0 a 100" in body
    assert 'id="qtdMinima-error"' in body
    crossed = client.post("/regras", data=_rules_form(qtdMinima="20"), headers=hx(csrf))
    assert crossed.status_code == 422 and 'id="qtdMinima-error"' in text(crossed)
    ok = client.post(
        "/regras",
        data={
            **_rules_form(qtdMinima="4", bloqueioCampanha=None),
            "lojasBloqueadas": [str(net["curitiba"].id)],
        },
        headers=hx(csrf),
    )
    assert ok.status_code == 200 and "Regras salvas" in text(ok)
    rules = client.get(f"{API}/regras", headers=auth_headers(client, admin)).get_json()
    assert rules["qtdMinima"] == 4 and rules["bloqueioCampanha"] is False
    assert rules["lojasBloqueadas"] == [str(net["curitiba"].id)]


def test_only_admins_change_rules_and_cadence(client, planner):
    csrf = sign_in(client, planner)
    page = text(client.get("/regras"))
    assert "Somente administradores" in page and "Salvar regras" not in page
    assert client.post("/regras", data=_rules_form(), headers=hx(csrf)).status_code == 403
    assert client.post("/regras/cadencia", data={"cadence": "mensal"}, headers=hx(csrf)).status_code == 403


def test_admin_changes_the_cadence(client, ctx):
    admin = make_user(papel="admin")
    csrf = sign_in(client, admin)
    bad = client.post("/regras/cadencia", data={"cadence": "anual"}, headers=hx(csrf))
    assert bad.status_code == 422 and 'id="cadence-error"' in text(bad)
    ok = client.post("/regras/cadencia", data={"cadence": "quinzenal"}, headers=hx(csrf))
    assert ok.status_code == 200 and "Cadência salva" in text(ok)
    cadence = client.get(f"{API}/config/cadence", headers=auth_headers(client, admin)).get_json()
    assert cadence["cadence"] == "quinzenal"


def test_history_filters_by_status(client, net, planner):
    csrf = sign_in(client, planner)
    lid = net["lote"].id
    client.post(
        f"/lotes/{lid}/recomendacoes/{net['recs']['media'].id}/vetar",
        data={"motivo": "Vitrine"},
        headers=hx(csrf),
    )
    client.post(f"/lotes/{lid}/recomendacoes/{net['recs']['baixa'].id}/recusar", headers=hx(csrf))
    everything = text(client.get("/historico"))
    assert "Vitrine" in everything and "Recusada" in everything
    vetoed = client.get("/historico?status=vetada", headers=hx())
    body = text(vetoed)
    assert "<html" not in body and "Vitrine" in body and "Bota Couro" not in body
    unknown = text(client.get("/historico?status=qualquer"))
    assert "Situação desconhecida" in unknown


def test_store_managers_pick_lists_hold_only_their_store(client, net):
    # Approved, but from the CD to Moema: not Paulista's business.
    make_rec(net["lote"], net["bota"], net["cd"], net["moema"], tamanho="38", status="aprovada")
    manager = make_user(papel="gerente_loja", loja=net["paulista"])
    sign_in(client, manager)
    rows = _csv_rows(client.get(f"/lotes/{net['lote'].id}/separacao.csv"))
    assert ["TCL-01", "Tênis Corrida Leve", "Preto", "37", "3", "Loja Paulista", "São Paulo"] in rows
    assert not any(row and row[0] == "BTC-02" for row in rows)


def test_empty_states_without_batches(client, ctx):
    produto = make_produto(nome="Sandália Praia", tamanhos=("35", "36"))
    make_loja(nome="Loja Recife", cidade="Recife")
    sign_in(client, make_user(papel="planejador"))
    assert "Nenhum lote gerado ainda" in text(client.get("/lotes"))
    grade_page = text(client.get(f"/grade/{produto.id}"))
    assert "Estoque atual (sem lote)" in grade_page and "Nenhum lote" in grade_page
    assert "tamanho 35: atual 0, movimento 0, final 0, ruptura" in grade_page
    assert "Nenhuma decisão tomada ainda" in text(client.get("/historico"))


def test_counts_are_written_as_the_rest_of_the_page_writes_numbers(client, net, planner):
    """One refusal is "1 recusada", a transfer already out of stock is "em ruptura", and a CD
    holding 1.030 units says so in the grade, as every other figure of the pages does."""
    make_rec(net["lote"], net["tenis"], net["cd"], net["moema"], tamanho="37", status="recusada")
    urgent = net["recs"]["alta"]
    urgent.dias_ate_ruptura = 0
    set_stock(net["cd"], net["tenis"], **{"37": 1030})
    db.session.flush()
    sign_in(client, planner)
    home = text(client.get("/"))
    assert "1 recusada ·" in home and "1 recusadas" not in home
    assert "em ruptura" in home and "ruptura em 0" not in home
    grade = text(client.get(f"/grade/{net['tenis'].id}"))
    assert "tamanho 37: atual 1.030" in grade and "1030" not in grade


def _nav(client) -> str:
    body = client.get("/").get_data(as_text=True)
    return body[body.index('<nav aria-label="Navegação principal">') : body.index("</nav>")]


def test_the_navigation_offers_what_each_role_works_with(client, net):
    """A store manager: their receipts and their store; a viewer: the batches, no rules nor jobs;
    a planner: everything they decide with; the platform's admin area is "Plataforma", not a
    second "Admin" beside the stock "Administração"."""
    manager = make_user(papel="gerente_loja", loja=net["paulista"])
    sign_in(client, manager)
    nav = _nav(client)
    assert f"/lojas/{net['paulista'].id}/recebimentos" in nav and "Minha loja" in nav
    assert "Lotes" not in nav and "Regras" not in nav and "Processamentos" not in nav
    sign_in(client, make_user(papel="visualizador"))
    nav = _nav(client)
    assert "Lotes" in nav and "Grade" in nav and "Regras" not in nav and "Processamentos" not in nav
    sign_in(client, make_user(papel="planejador"))
    nav = _nav(client)
    assert "Regras" in nav and "Processamentos" in nav and "Administração" not in nav
    sign_in(client, make_user(papel="admin", superadmin=True))
    nav = _nav(client)
    assert "Administração" in nav and "Plataforma" in nav and ">Admin<" not in nav
