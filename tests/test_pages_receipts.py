"""A store's receipts page: transfers arriving to confirm, leaving to send, on a phone."""

from __future__ import annotations

from datetime import timedelta

from services.clock import today
from tests.factories import auth_headers, make_loja, make_lote, make_produto, make_rec, make_user
from tests.stock.support import API
from tests.test_pages_remanejamento import sign_in, text


def network():
    cd = make_loja(nome="CD Cajamar", codigo="CD01", is_cd=True)
    paulista = make_loja(nome="Loja Paulista", codigo="SP01")
    moema = make_loja(nome="Loja Moema", codigo="SP02")
    tenis = make_produto(nome="Tênis Corrida Leve", sku="TCL-01", tamanhos=("37", "38", "39"))
    lote = make_lote()
    arriving = make_rec(
        lote,
        tenis,
        cd,
        paulista,
        tamanho="37",
        quantidade=6,
        status="executada",
        executada_data=today() - timedelta(days=9),
    )
    waiting = make_rec(lote, tenis, moema, paulista, tamanho="38", quantidade=3, status="aprovada")
    leaving = make_rec(lote, tenis, paulista, moema, tamanho="39", quantidade=4, status="aprovada")
    return {
        "cd": cd,
        "paulista": paulista,
        "moema": moema,
        "arriving": arriving,
        "waiting": waiting,
        "leaving": leaving,
    }


def test_manager_confirms_a_receipt_from_the_dashboard_link(client, ctx):
    net = network()
    manager = make_user(papel="gerente_loja", loja=net["paulista"])
    csrf = sign_in(client, manager)
    page_url = f"/lojas/{net['paulista'].id}/recebimentos"
    dashboard = text(client.get("/"))
    assert f'href="{page_url}"' in dashboard
    # One executed transfer on its way: the link says so.
    assert '<span class="badge new">1<span class="sr-only"> a confirmar</span></span>' in dashboard

    body = text(client.get(page_url))
    incoming, outgoing = body.split('id="incoming-title"')[1].split('id="outgoing-title"')
    assert "Origem: CD Cajamar · 6 un." in incoming and "há 9 dias" in incoming and "Atrasada" in incoming
    assert "Origem: Loja Moema · 3 un." in incoming and "Aguardando envio" in incoming
    # Only an executed transfer can be confirmed, its quantity prefilled.
    assert incoming.count("Confirmar recebimento") == 1
    assert 'name="quantidadeRecebida" type="number"' in incoming and 'max="6"' in incoming
    assert 'value="6"' in incoming
    assert "Destino: Loja Moema · 4 un." in outgoing and "Separar e enviar" in outgoing

    action = f"{page_url}/{net['arriving'].id}"
    response = client.post(action, data={"quantidadeRecebida": "5", "csrf_token": csrf})
    assert response.status_code == 303 and response.headers["Location"].endswith(page_url)
    rec = client.get(
        f"{API}/recomendacoes/{net['arriving'].id}", headers=auth_headers(client, manager)
    ).get_json()
    assert rec["quantidadeRecebida"] == 5
    assert "CD Cajamar" not in text(client.get(page_url)).split('id="outgoing-title"')[0]


def test_refused_receipts_say_why_in_place(client, ctx):
    net = network()
    csrf = sign_in(client, make_user(papel="gerente_loja", loja=net["paulista"]))
    page_url = f"/lojas/{net['paulista'].id}/recebimentos"
    action = f"{page_url}/{net['arriving'].id}"
    too_many = client.post(action, data={"quantidadeRecebida": "7", "csrf_token": csrf})
    assert too_many.status_code == 422
    assert "A quantidade recebida vai de zero à quantidade enviada." in text(too_many)
    not_a_number = client.post(action, data={"quantidadeRecebida": "muitas", "csrf_token": csrf})
    assert not_a_number.status_code == 422 and 'aria-invalid="true"' in text(not_a_number)
    not_sent = client.post(
        f"{page_url}/{net['waiting'].id}", data={"quantidadeRecebida": "3", "csrf_token": csrf}
    )
    assert not_sent.status_code == 409 and "Só uma recomendação executada pode ser recebida" in text(not_sent)
    # Leaving its store: seen, but not its manager's to receive.
    leaving = client.post(
        f"{page_url}/{net['leaving'].id}", data={"quantidadeRecebida": "4", "csrf_token": csrf}
    )
    assert leaving.status_code == 403 and "Só o gerente da loja de destino" in text(leaving)


def test_another_stores_manager_gets_not_found(client, ctx):
    net = network()
    sign_in(client, make_user(papel="gerente_loja", loja=net["moema"]))
    assert client.get(f"/lojas/{net['paulista'].id}/recebimentos").status_code == 404
    assert client.get("/lojas/nope/recebimentos").status_code == 404
    # A planner opens any store's.
    client.post("/logout")
    sign_in(client, make_user(papel="planejador"))
    assert "Confirmar recebimento" in text(client.get(f"/lojas/{net['paulista'].id}/recebimentos"))


def test_a_transfer_on_its_way_shows_when_it_should_arrive(client, ctx):
    """Three earlier transfers from the CD reached Loja Paulista 4 days after they left: the one
    on its way since 9 days ago should have arrived 5 days ago, and the page says when; the one
    not sent yet has no date."""
    from datetime import UTC, datetime

    from flask_babel import format_date

    net = network()
    earlier, produto = make_lote(today() - timedelta(days=40)), make_produto()
    for _ in range(3):
        make_rec(
            earlier,
            produto,
            net["cd"],
            net["paulista"],
            status="executada",
            executada_data=today() - timedelta(days=30),
            recebida_em=datetime.now(UTC),
            recebida_data=today() - timedelta(days=26),
            quantidade_recebida=5,
        )
    sign_in(client, make_user(papel="gerente_loja", loja=net["paulista"]))
    body = text(client.get(f"/lojas/{net['paulista'].id}/recebimentos"))
    incoming = body.split('id="incoming-title"')[1].split('id="outgoing-title"')[0]
    expected = format_date(today() - timedelta(days=5), "short")
    assert incoming.count("chegada prevista em") == 1
    assert f"chegada prevista em {expected}" in incoming
