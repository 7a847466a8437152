"""The batch page at the scale of a real batch: acting on everything a filter matches, search,
dense mode, refusal reasons (page and API), undo, and an address bar that matches the table."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import func, select

from extensions import db
from models.stock_batches import AcaoRecomendacao
from services.errors import ConflictError
from services.stock import decisions
from tests.factories import auth_headers, make_rec, make_user
from tests.test_pages_remanejamento import API, api_status, hx, sign_in, small_network, text

PAGE_SIZE = 50


@pytest.fixture
def net(ctx):
    return small_network()


@pytest.fixture
def planner(ctx):
    return make_user(papel="planejador", name="Paula Planejadora")


@pytest.fixture
def big(net):
    """The small network plus 60 pending high-priority transfers CD → Paulista (more than a page),
    two already refused and one vetoed among them."""
    extra = [
        make_rec(net["lote"], net["tenis"], net["cd"], net["paulista"], prioridade="alta", score=60 + i % 30)
        for i in range(60)
    ]
    refused = [
        make_rec(net["lote"], net["tenis"], net["cd"], net["paulista"], prioridade="alta", status="recusada")
        for _ in range(2)
    ]
    vetoed = make_rec(net["lote"], net["tenis"], net["cd"], net["paulista"], prioridade="alta", vetado=True)
    return {**net, "extra": extra, "refused": refused, "vetoed": vetoed}


def bulk(client, csrf, lid, **data):
    return client.post(f"/lotes/{lid}/acoes", data=data, headers=hx(csrf))


def statuses(client, user, lid) -> dict[str, int]:
    rows = client.get(
        f"{API}/recomendacoes?loteId={lid}&limite=500", headers=auth_headers(client, user)
    ).get_json()
    counts: dict[str, int] = {}
    for row in rows:
        key = "vetada" if row["vetado"] else row["status"]
        counts[key] = counts.get(key, 0) + 1
    return counts


def action_log_count() -> int:
    return db.session.scalar(select(func.count()).select_from(AcaoRecomendacao))


# --- everything matching the filter ----------------------------------------------------------


def test_the_bar_offers_every_recommendation_the_filter_matches_with_its_count(client, big, planner):
    sign_in(client, planner)
    body = text(client.get(f"/lotes/{big['lote'].id}?prioridade=alta"))
    # 1 of the small network + 60 + 2 refused + 1 vetoed; the page shows 50 of them.
    assert "Selecionar todas as 64 que correspondem ao filtro" in body
    assert len(re.findall(r'<tr id="rec-', body)) == PAGE_SIZE


def test_approving_everything_matching_changes_every_page_and_says_what_was_skipped(client, big, planner):
    csrf = sign_in(client, planner)
    lid = big["lote"].id
    before = action_log_count()
    response = bulk(client, csrf, lid, acao="aprovar", todas="1", prioridade="alta", pagina="1")
    assert response.status_code == 200
    body = text(response)
    # 61 pending high-priority ones change; 2 refused and 1 vetoed are skipped, by why.
    assert "61 aprovadas; 3 ignoradas: 2 já recusadas, 1 vetada." in body
    assert statuses(client, planner, lid) == {
        "aprovada": 62,  # the 61, and the small network's approved one
        "recusada": 2,
        "vetada": 1,
        "pendente": 2,  # media and baixa: outside the filter
        "executada": 1,
    }
    # Logged per recommendation, by whom.
    assert action_log_count() - before == 61
    assert api_status(client, planner, big["extra"][59].id)["status"] == "aprovada"
    history = client.get(f"{API}/historico?status=aprovada", headers=auth_headers(client, planner)).get_json()
    assert sum(1 for h in history if h["usuario"] == "Paula Planejadora") == 61


def test_one_reason_alone_is_named_without_a_count(client, big, planner):
    csrf = sign_in(client, planner)
    lid = big["lote"].id
    bulk(client, csrf, lid, acao="aprovar", todas="1", prioridade="alta", status="pendente")
    again = text(bulk(client, csrf, lid, acao="aprovar", todas="1", prioridade="alta"))
    assert "0 aprovadas; 64 ignoradas: 61 já aprovadas, 2 já recusadas, 1 vetada." in again
    executed = text(bulk(client, csrf, lid, acao="executar", todas="1", status="aprovada"))
    assert "62 executadas." in executed
    refused = text(
        bulk(client, csrf, lid, acao="recusar", todas="1", status="executada", motivoRecusa="custo")
    )
    assert "0 recusadas; 63 ignoradas: já executadas." in refused


def test_refusing_everything_matching_needs_a_reason_and_stores_it(client, big, planner):
    csrf = sign_in(client, planner)
    lid = big["lote"].id
    missing = bulk(client, csrf, lid, acao="recusar", todas="1", q="Moema")
    assert missing.status_code == 422 and "Escolha o motivo da recusa" in text(missing)
    outro = bulk(client, csrf, lid, acao="recusar", todas="1", q="Moema", motivoRecusa="outro")
    assert outro.status_code == 422 and "Escolha o motivo da recusa" in text(outro)
    done = bulk(
        client,
        csrf,
        lid,
        acao="recusar",
        todas="1",
        q="Moema",
        motivoRecusa="outro",
        motivoTexto="Inventário",
    )
    # Moema: the media (CD → Moema), the baixa (Curitiba → Moema), the approved one (Moema → Paulista).
    assert "3 recusadas." in text(done)
    rec = api_status(client, planner, big["recs"]["baixa"].id)
    assert (rec["status"], rec["motivoRecusa"], rec["motivoRecusaTexto"]) == (
        "recusada",
        "outro",
        "Inventário",
    )


def test_a_role_that_may_not_act_skips_everything_and_says_so(client, big):
    viewer = make_user(papel="visualizador")
    csrf = sign_in(client, viewer)
    lid = big["lote"].id
    body = text(bulk(client, csrf, lid, acao="aprovar", todas="1", prioridade="alta"))
    assert "0 aprovadas; 64 ignoradas: seu papel não permite esta ação." in body
    assert statuses(client, make_user(papel="admin"), lid)["pendente"] == 63


def test_a_store_manager_executes_everything_matching_in_its_own_store_only(client, big):
    moema = make_user(papel="gerente_loja", loja=big["moema"])
    csrf = sign_in(client, moema)
    lid = big["lote"].id
    body = text(bulk(client, csrf, lid, acao="executar", todas="1"))
    # Moema sees 3: the approved Moema → Paulista is executed, the two pending ones are not.
    assert "1 executada; 2 ignoradas: ainda pendentes." in body
    admin = make_user(papel="admin")
    assert api_status(client, admin, big["recs"]["aprovada"].id)["status"] == "executada"
    assert statuses(client, admin, lid)["executada"] == 2


def test_a_failure_after_the_update_rolls_every_row_back(client, big, planner, monkeypatch):
    csrf = sign_in(client, planner)
    lid = big["lote"].id
    before = action_log_count()

    def failing_insert(*args, **kwargs):
        raise ConflictError(
            "O registro das ações falhou", reason="approve_not_allowed", params={"status": "?"}
        )

    # The rows are updated, then writing their action log fails.
    monkeypatch.setattr(decisions, "insert", failing_insert)
    response = bulk(client, csrf, lid, acao="aprovar", todas="1", prioridade="alta")
    assert response.status_code == 409
    monkeypatch.undo()
    assert statuses(client, planner, lid)["pendente"] == 63
    assert action_log_count() == before


def test_selected_rows_still_work_and_the_toast_names_the_action(client, big, planner):
    csrf = sign_in(client, planner)
    lid = big["lote"].id
    ids = [str(r.id) for r in big["extra"][:3]] + [str(big["refused"][0].id)]
    body = text(bulk(client, csrf, lid, acao="aprovar", rid=ids))
    assert "3 aprovadas; 1 não pôde mudar" in body


# --- search ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ("btc-02", {"baixa", "executada"}),  # SKU, any case
        ("bota", {"baixa", "executada"}),  # product name
        ("curitiba", {"baixa", "executada"}),  # origin
        ("moema", {"media", "baixa", "aprovada"}),  # origin or destination
        ("SP02", {"media", "baixa", "aprovada"}),  # store code
        ("tênis paulista", {"alta", "aprovada"}),  # every word, each anywhere
        ("100%", set()),  # LIKE wildcards are literal
        ("_", set()),
    ],
)
def test_search_by_sku_product_or_store(client, net, planner, q, expected):
    sign_in(client, planner)
    body = text(client.get(f"/lotes/{net['lote'].id}", query_string={"q": q}, headers=hx()))
    shown = {name for name, rec in net["recs"].items() if f'id="rec-{rec.id}"' in body}
    assert shown == expected
    api = client.get(
        f"{API}/recomendacoes", query_string={"q": q}, headers=auth_headers(client, planner)
    ).get_json()
    assert {r["id"] for r in api} == {str(net["recs"][name].id) for name in expected}


def test_a_search_too_long_is_reported_and_ignored(client, net, planner):
    sign_in(client, planner)
    body = text(client.get(f"/lotes/{net['lote'].id}", query_string={"q": "x" * 101}, headers=hx()))
    assert "Filtro inválido ignorado: Busca." in body
    assert all(f'id="rec-{rec.id}"' in body for rec in net["recs"].values())


# --- dense mode and the address bar ----------------------------------------------------------


def test_dense_mode_is_kept_in_the_address_and_every_link(client, net, planner):
    sign_in(client, planner)
    lid = net["lote"].id
    body = text(client.get(f"/lotes/{lid}?densa=1"))
    assert 'class="recs dense"' in body
    assert 'name="densa" value="1" checked' in body
    sort_links = re.findall(r'href="(/lotes/[^"]+ordem=score[^"]*)"', body)
    assert sort_links and all("densa=1" in link for link in sort_links)
    assert 'class="recs"' in text(client.get(f"/lotes/{lid}"))


def test_the_pushed_address_has_no_empty_or_default_value(client, net, planner):
    sign_in(client, planner)
    lid = net["lote"].id
    response = client.get(
        f"/lotes/{lid}?q=&prioridade=&tipoOrigem=&status=aprovada&ordem=prioridade&dir=asc&pagina=1&densa=1",
        headers=hx(),
    )
    pushed = urlsplit(response.headers["HX-Push-Url"])
    assert pushed.path == f"/lotes/{lid}"
    assert parse_qs(pushed.query, keep_blank_values=True) == {"status": ["aprovada"], "densa": ["1"]}
    # The page opts out of htmx's history snapshot: Back/Forward re-render controls and table.
    page = text(client.get(f"/lotes/{lid}"))
    assert 'hx-history="false"' in page
    # Every htmx request of the page points at the busy sign (shown after 200 ms by the CSS).
    assert re.search(r'<body[^>]*hx-indicator="#busy"', page) and 'id="busy"' in page


# --- refusing a row, with a reason -----------------------------------------------------------


def test_refusing_a_row_asks_for_a_reason_and_history_shows_it(client, net, planner):
    csrf = sign_in(client, planner)
    lid, rec = net["lote"].id, net["recs"]["alta"]
    dialog = text(client.get(f"/lotes/{lid}/recomendacoes/{rec.id}/recusa", headers=hx()))
    assert 'name="motivoRecusa" value="estoque_errado"' in dialog and "Outro motivo" in dialog
    # Without JavaScript the link opens the same form as a page, and its plain post goes back to the batch.
    plain = text(client.get(f"/lotes/{lid}/recomendacoes/{rec.id}/recusa"))
    assert "<html" in plain and 'name="motivoRecusa" value="custo"' in plain
    missing = client.post(f"/lotes/{lid}/recomendacoes/{rec.id}/recusar", headers=hx(csrf))
    assert missing.status_code == 422 and "Escolha o motivo da recusa" in text(missing)
    assert api_status(client, planner, rec.id)["status"] == "pendente"
    unknown = client.post(
        f"/lotes/{lid}/recomendacoes/{rec.id}/recusar", data={"motivoRecusa": "preguica"}, headers=hx(csrf)
    )
    assert unknown.status_code == 422
    done = client.post(
        f"/lotes/{lid}/recomendacoes/{rec.id}/recusar",
        data={"motivoRecusa": "loja_recusa", "motivoTexto": "Sem espaço no depósito"},
        headers=hx(csrf),
    )
    assert done.status_code == 200
    assert "Recomendação recusada" in text(done) and "Desfazer" in text(done)
    history = text(client.get("/historico?status=recusada"))
    assert "A loja recusa" in history and "Sem espaço no depósito" in history


def test_undo_is_the_reverse_move_for_its_author_only(client, net, planner):
    csrf = sign_in(client, planner)
    lid, rec = net["lote"].id, net["recs"]["alta"]
    client.post(f"/lotes/{lid}/recomendacoes/{rec.id}/aprovar", headers=hx(csrf))
    assert api_status(client, planner, rec.id)["status"] == "aprovada"
    undone = client.post(
        f"/lotes/{lid}/recomendacoes/{rec.id}/desfazer", data={"acao": "aprovar"}, headers=hx(csrf)
    )
    assert undone.status_code == 200 and "Ação desfeita" in text(undone)
    assert api_status(client, planner, rec.id)["status"] == "pendente"
    twice = client.post(
        f"/lotes/{lid}/recomendacoes/{rec.id}/desfazer", data={"acao": "aprovar"}, headers=hx(csrf)
    )
    assert twice.status_code == 409 and "Não há ação recente sua para desfazer" in text(twice)
    # Someone else's action is not mine to undo.
    client.post(f"/lotes/{lid}/recomendacoes/{rec.id}/vetar", data={"motivo": "Reforma"}, headers=hx(csrf))
    other = make_user(papel="planejador")
    other_csrf = sign_in(client, other)
    theirs = client.post(
        f"/lotes/{lid}/recomendacoes/{rec.id}/desfazer", data={"acao": "vetar"}, headers=hx(other_csrf)
    )
    assert theirs.status_code == 409
    assert api_status(client, planner, rec.id)["vetado"] is True


@pytest.mark.parametrize(
    ("acao", "status", "vetado", "data"),
    [
        ("recusar", "aprovada", False, {"motivoRecusa": "custo"}),
        ("executar", "aprovada", False, {}),
        ("restaurar", "pendente", True, {}),
    ],
)
def test_undo_restores_the_state_before(client, net, planner, acao, status, vetado, data):
    csrf = sign_in(client, planner)
    lid = net["lote"].id
    rec = make_rec(net["lote"], net["tenis"], net["cd"], net["paulista"], status=status, vetado=vetado)
    assert (
        client.post(f"/lotes/{lid}/recomendacoes/{rec.id}/{acao}", data=data, headers=hx(csrf)).status_code
        == 200
    )
    undone = client.post(
        f"/lotes/{lid}/recomendacoes/{rec.id}/desfazer", data={"acao": acao}, headers=hx(csrf)
    )
    assert undone.status_code == 200
    after = api_status(client, planner, rec.id)
    assert (after["status"], after["vetado"], after["motivoRecusa"]) == (status, vetado, None)
    if vetado:
        assert after["motivoVeto"] == "Loja em reforma"


# --- the API's motivo on recusar -------------------------------------------------------------


def test_api_refusal_without_a_body_still_works(client, net, planner):
    rec = net["recs"]["alta"]
    response = client.post(f"{API}/recomendacoes/{rec.id}/recusar", headers=auth_headers(client, planner))
    assert response.status_code == 200
    assert (response.get_json()["status"], response.get_json()["motivoRecusa"]) == ("recusada", None)


def test_api_refusal_with_a_reason_is_stored_and_in_history(client, net, planner):
    rec = net["recs"]["alta"]
    headers = auth_headers(client, planner)
    response = client.post(
        f"{API}/recomendacoes/{rec.id}/recusar", json={"motivo": "estoque_errado"}, headers=headers
    )
    assert response.status_code == 200
    assert response.get_json()["motivoRecusa"] == "estoque_errado"
    history = client.get(f"{API}/historico?status=recusada", headers=headers).get_json()
    assert [(h["id"], h["motivoRecusa"]) for h in history] == [(str(rec.id), "estoque_errado")]


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"motivo": "preguica"}, ["body", "motivo"]),
        ({"motivo": "outro"}, ["body", "motivoTexto"]),
        ({"motivo": "outro", "motivoTexto": "   "}, ["body", "motivoTexto"]),
    ],
)
def test_api_refusal_with_a_bad_reason_is_a_422(client, net, planner, body, loc):
    rec = net["recs"]["alta"]
    headers = auth_headers(client, planner)
    response = client.post(f"{API}/recomendacoes/{rec.id}/recusar", json=body, headers=headers)
    assert response.status_code == 422
    assert [d["loc"] for d in response.get_json()["detail"]] == [loc]
    assert api_status(client, planner, rec.id)["status"] == "pendente"


def test_learning_does_not_hold_a_wrong_stock_against_the_route(client, net, planner):
    headers = auth_headers(client, planner)
    recs = net["recs"]
    client.post(
        f"{API}/recomendacoes/{recs['alta'].id}/recusar", json={"motivo": "estoque_errado"}, headers=headers
    )
    routes = client.get(f"{API}/metricas/aprendizado", headers=headers).get_json()["rotas"]
    cd_paulista = [
        r for r in routes if r["origemId"] == str(net["cd"].id) and r["destinoId"] == str(net["paulista"].id)
    ]
    assert cd_paulista == []
    client.post(
        f"{API}/recomendacoes/{recs['media'].id}/recusar", json={"motivo": "loja_recusa"}, headers=headers
    )
    routes = client.get(f"{API}/metricas/aprendizado", headers=headers).get_json()["rotas"]
    cd_moema = [
        r for r in routes if r["origemId"] == str(net["cd"].id) and r["destinoId"] == str(net["moema"].id)
    ]
    assert [(r["rejeitadas"], r["fator"] < 1) for r in cd_moema] == [(1, True)]


# --- two planners at once --------------------------------------------------------------------


@pytest.mark.committing
def test_two_planners_approving_everything_at_once_change_each_row_once(app, client):
    import threading

    from tests.factories import PASSWORD, make_loja, make_lote, make_produto

    with app.app_context():
        cd, loja, produto = make_loja(is_cd=True), make_loja(), make_produto()
        lote = make_lote()
        for _ in range(40):
            make_rec(lote, produto, cd, loja)
        planners = [make_user(papel="planejador", name=f"Planejador {i}") for i in range(2)]
        db.session.commit()
        lid, emails = lote.id, [p.email for p in planners]
    barrier = threading.Barrier(2)
    bodies: list = [None, None]

    def planner(i: int) -> None:
        own = app.test_client()
        assert own.post("/login", data={"email": emails[i], "senha": PASSWORD}).status_code == 302
        csrf = own.get_cookie("csrf_access_token").value
        barrier.wait()
        response = own.post(f"/lotes/{lid}/acoes", data={"acao": "aprovar", "todas": "1"}, headers=hx(csrf))
        bodies[i] = (response.status_code, text(response))

    threads = [threading.Thread(target=planner, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert [code for code, _ in bodies] == [200, 200]
    changed = [int(re.search(r"(\d+) aprovadas?[;.]", body).group(1)) for _, body in bodies]
    # The second waits for the first one's locks, then finds every row already approved.
    assert sorted(changed) == [0, 40], changed
    assert any("40 ignoradas: já aprovadas" in body for _, body in bodies)
    with app.app_context():
        assert action_log_count() == 40
