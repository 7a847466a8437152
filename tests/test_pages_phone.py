"""Store managers' pages and pt-BR formatting: the gerente's own dashboard, numbers and dates
in pt-BR whatever the browser says (unless the account chose otherwise), role names, favicon."""

from __future__ import annotations

import re

from tests.factories import auth_headers, make_loja, make_produto, make_user, set_stock
from tests.test_pages_remanejamento import hx, sign_in, small_network, text

ENGLISH = {"Accept-Language": "en-US,en;q=0.9"}


def test_store_manager_dashboard_shows_only_its_store(client, ctx):
    net = small_network()
    manager = make_user(papel="gerente_loja", loja=net["paulista"], name="Gabriela Gerente")
    sign_in(client, manager)
    body = text(client.get("/"))
    assert "Olá, Gabriela" in body and "Loja Paulista" in body
    # No network-wide figures it cannot act on.
    assert "pendentes de decisão" not in body and "Decisões mais urgentes" not in body
    # Paulista's stock: 2 + 0 + 1 units of the sneaker; nothing sold, nothing at risk.
    assert '<span class="figure">3</span><span>unidades em estoque</span>' in body
    # It sends nothing this week; it receives 6 pending units from the CD and 3 approved from Moema.
    send, receive = body.split('id="enviar-title"')[1].split('id="receber-title"')
    assert "Nada a fazer neste lote." in send
    assert "Origem: CD Cajamar · 6 un." in receive and "Origem: Loja Moema · 3 un." in receive
    # The executed one is counted, not listed; Moema's own transfers are nowhere.
    assert "Loja Curitiba" not in receive
    assert "Bota Couro" not in body
    assert f"origemId={net['paulista'].id}" in send
    assert f"lojaDestinoId={net['paulista'].id}" in receive


def test_planner_dashboard_is_unchanged_for_planners(client, ctx):
    net = small_network()
    planner = make_user(papel="planejador")
    sign_in(client, planner)
    body = text(client.get("/"))
    assert "Decisões mais urgentes" in body and net["lote"].semana in body


def test_numbers_and_dates_are_pt_br_under_an_english_browser(client, ctx):
    loja = make_loja(nome="Loja Paulista", codigo="SP01")
    produto = make_produto(nome="Tênis Corrida Leve", sku="TCL-01", tamanhos=("37", "38"))
    set_stock(loja, produto, **{"37": 12345, "38": 0})
    user = make_user(papel="planejador")
    csrf = sign_in(client, user)
    body = text(client.get(f"/lojas/{loja.id}", headers=ENGLISH))
    assert '<span class="qty">12.345</span>' in body and "12,345" not in body
    cell = text(
        client.get(
            f"/lojas/{loja.id}/celula",
            query_string={"produtoId": str(produto.id), "tamanho": "37"},
            headers={**ENGLISH, **hx()},
        )
    )
    # The chart says its unit and its dates (dd/MM/yyyy), never an ISO date.
    assert "12.345 un." in cell and "Vendas diárias em unidades, de " in cell
    assert re.search(r"de \d{2}/\d{2}/\d{4} a \d{2}/\d{2}/\d{4}", cell)
    assert not re.search(r"\d{4}-\d{2}-\d{2}", cell)

    # An account that chose English formats gets it.
    saved = client.post(
        "/perfil/preferencias",
        data={"csrf_token": csrf, "notifEmail": "on", "idioma": "en"},
        headers=hx(csrf),
    )
    assert saved.status_code == 200
    body = text(client.get(f"/lojas/{loja.id}"))
    assert '<span class="qty">12,345</span>' in body
    client.post("/perfil/preferencias", data={"csrf_token": csrf, "idioma": ""}, headers=hx(csrf))
    assert '<span class="qty">12.345</span>' in text(client.get(f"/lojas/{loja.id}", headers=ENGLISH))


def test_language_preference_through_the_api(client, ctx):
    user = make_user(papel="visualizador")
    headers = auth_headers(client, user)
    url = "/api/v1/users/me/preferences"
    body = {"notifEmail": True, "notifPush": False, "digestSemanal": True}
    assert client.get(url, headers=headers).get_json()["idioma"] is None
    assert client.put(url, json={**body, "idioma": "en"}, headers=headers).get_json()["idioma"] == "en"
    # Absent keeps it; null goes back to pt-BR; anything else is refused in the dialect.
    assert client.put(url, json=body, headers=headers).get_json()["idioma"] == "en"
    assert client.put(url, json={**body, "idioma": None}, headers=headers).get_json()["idioma"] is None
    bad = client.put(url, json={**body, "idioma": "fr"}, headers=headers)
    assert bad.status_code == 422 and bad.get_json()["detail"][0]["loc"] == ["body", "idioma"]


def test_profile_names_the_role_and_favicon_is_served(client, ctx):
    loja = make_loja(nome="Loja Paulista", codigo="SP01")
    manager = make_user(papel="gerente_loja", loja=loja)
    sign_in(client, manager)
    body = text(client.get("/perfil"))
    assert "<strong>Gerente de loja</strong>" in body and "gerente_loja" not in body
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.mimetype == "image/svg+xml" and b"<svg" in icon.data


def test_a_transfer_already_out_of_stock_says_so_not_zero_days(client, ctx):
    from tests.factories import make_rec

    net = small_network()
    make_rec(net["lote"], net["tenis"], net["cd"], net["moema"], tamanho="37", dias_ate_ruptura=0)
    sign_in(client, make_user(papel="planejador"))
    body = text(client.get(f"/lotes/{net['lote'].id}"))
    assert 'data-label="Ruptura em"><span class="urgent">em ruptura</span>' in body
    assert ">0 d<" not in body
    # The others still count their days.
    assert ">3 d<" in body
