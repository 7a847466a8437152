"""A store manager confirms a receipt on a 390 px phone: no sideways scroll, 44 px targets,
axe-core clean."""

from __future__ import annotations

from datetime import timedelta

import pytest
from playwright.sync_api import expect

from tests.browser.audit import assert_accessible, scroll_width, widest
from tests.browser.conftest import CHROMIUM, screenshot, sign_in
from tests.factories import PASSWORD, make_loja, make_lote, make_produto, make_rec, make_user

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def phone(browser, live_server):
    context = browser.new_context(
        base_url=live_server, viewport=PHONE, locale="pt-BR", is_mobile=True, has_touch=True
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()
    assert CHROMIUM


def _receipts_network() -> dict:
    from services.clock import today

    cd = make_loja(nome="CD Cajamar", codigo="CD01", cidade="Cajamar", is_cd=True)
    store = make_loja(nome="Loja Paulista Grande Avenida", codigo="SP01")
    other = make_loja(nome="Loja Moema", codigo="SP02")
    tenis = make_produto(nome="Tênis Corrida Leve Amortecido", sku="TCL-01", tamanhos=("37", "38", "39"))
    lote = make_lote(today())
    make_rec(
        lote,
        tenis,
        cd,
        store,
        tamanho="37",
        quantidade=12,
        status="executada",
        executada_data=today() - timedelta(days=9),
    )
    make_rec(lote, tenis, other, store, tamanho="38", quantidade=3, status="executada")
    make_rec(lote, tenis, store, other, tamanho="39", quantidade=4, status="aprovada")
    manager = make_user(
        name="Gabriela Gerente", email="gabi.receipts@giro.test", papel="gerente_loja", loja=store
    )
    return {"manager": manager.email, "store": str(store.id)}


def test_manager_confirms_a_receipt_on_a_phone(phone, committed):
    data = committed(_receipts_network)
    sign_in(phone, data["manager"], PASSWORD)
    page = phone
    page.get_by_role("main").get_by_role("link", name="Recebimentos").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Recebimentos e envios")
    page.wait_for_load_state("networkidle")
    assert scroll_width(page) <= PHONE["width"], widest(page, PHONE["width"])
    buttons = page.get_by_role("button", name="Confirmar recebimento")
    expect(buttons).to_have_count(2)
    for target in (buttons.first, page.get_by_label("Quantidade recebida").first):
        box = target.bounding_box()
        assert box and box["height"] >= 44 and box["width"] >= 44, box
    assert_accessible(page)
    screenshot(page, "receipts-phone")

    page.get_by_label("Quantidade recebida").first.fill("11")
    buttons.first.click()
    page.wait_for_load_state("load")
    expect(page.get_by_role("button", name="Confirmar recebimento")).to_have_count(1)
    expect(page.get_by_text("Atrasada", exact=True)).to_have_count(0)
    assert scroll_width(page) <= PHONE["width"]
