"""Phone first, pt-BR everywhere, accessible: a store manager's phone (390 × 844) under an
English browser, the admin's pages on a phone and a desktop, axe-core on every page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.audit import assert_accessible, scroll_width, widest
from tests.browser.conftest import CHROMIUM, screenshot, sign_in
from tests.browser.test_remanejamento_pages import _network_with_batch
from tests.factories import PASSWORD, make_loja, make_user, set_stock

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def phone(browser, live_server):
    """A phone whose browser speaks English: the pages must still format in pt-BR."""
    context = browser.new_context(
        base_url=live_server, viewport=PHONE, locale="en-US", is_mobile=True, has_touch=True
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    yield page
    context.close()
    assert not refused, refused
    assert CHROMIUM


def _fits_and_accessible(page, width: int = PHONE["width"]) -> None:
    page.wait_for_load_state("networkidle")
    assert scroll_width(page) <= width, f"{page.url} scrolls sideways: {widest(page, width)}"
    assert_accessible(page)


def _manager_network() -> dict:
    data = _network_with_batch()
    paulista = make_loja(
        nome="Loja Paulista Grande", codigo="SP09", cidade="São Paulo", lat=-23.56, lng=-46.65
    )
    from sqlalchemy import select

    from extensions import db
    from models.stock import Produto

    produto = db.session.scalar(select(Produto).where(Produto.sku == "TCL-01"))
    set_stock(paulista, produto, **{"37": 1234, "38": 0, "39": 2, "40": 5})
    from models.stock import Loja

    sp01 = db.session.scalar(select(Loja).where(Loja.codigo == "SP01"))
    manager = make_user(name="Gabriela Gerente", email="gabi@giro.test", papel="gerente_loja", loja=sp01)
    return {
        **data,
        "manager": manager.email,
        "big": str(paulista.id),
        "sp01": str(sp01.id),
        "produto": str(produto.id),
    }


def test_store_manager_phone_in_english_browser(phone, committed):
    data = committed(_manager_network)
    sign_in(phone, data["manager"], PASSWORD)
    page = phone
    # Its own store's figures and transfers, nothing network-wide.
    expect(page.get_by_role("heading", level=1)).to_contain_text("Olá, Gabriela")
    expect(page.get_by_role("heading", name="Para receber")).to_be_visible()
    expect(page.get_by_text("Decisões mais urgentes")).to_have_count(0)
    _fits_and_accessible(page)
    screenshot(page, "dashboard-phone")

    # pt-BR numbers under an English browser: 1.234, never 1,234.
    page.goto(f"/lojas/{data['big']}")
    expect(page.get_by_role("link", name="Tamanho 37 1.234 un.")).to_be_visible()
    _fits_and_accessible(page)
    page.get_by_role("link", name=re.compile(r"^Tamanho 39 ")).click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("tam. 39")
    # Dates in pt-BR (dd/mm/aaaa) on the chart's caption and axis.
    expect(dialog.locator("figcaption")).to_contain_text(
        re.compile(r"de \d{2}/\d{2}/\d{4} a \d{2}/\d{2}/\d{4}")
    )
    assert_accessible(page)
    screenshot(page, "store-stock-phone")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    for path in (
        "/lojas",
        f"/lojas/{data['sp01']}",
        "/lotes",
        f"/lotes/{data['lote']}",
        "/grade",
        f"/grade/{data['produto']}",
        "/historico",
        "/regras",
        "/perfil",
        "/tracker/",
    ):
        page.goto(path)
        _fits_and_accessible(page)
        if path == f"/grade/{data['produto']}":
            # The store column stays in view while the sizes scroll.
            assert (
                page.locator("table.matrix tbody th[scope=row]").first.evaluate(
                    "e => getComputedStyle(e).position"
                )
                == "sticky"
            )
            screenshot(page, "grade-phone")


def _admin_network() -> dict:
    data = _network_with_batch()
    make_user(name="Sofia Super", email="sofia@giro.test", papel="admin", superadmin=True)
    return data


@pytest.mark.parametrize("viewport", [PHONE, {"width": 1280, "height": 860}], ids=["phone", "desktop"])
def test_admin_pages_fit_and_pass_axe(browser, live_server, committed, viewport):
    data = committed(_admin_network)
    context = browser.new_context(base_url=live_server, viewport=viewport, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        sign_in(page, "sofia@giro.test", PASSWORD)
        _fits_and_accessible(page, viewport["width"])
        # An organization, so the tracker's people page has someone to list.
        page.goto("/tracker/")
        for path in (
            "/administracao/acessos",
            "/administracao/lojas",
            "/administracao/importacoes",
            "/admin/",
            "/admin/users",
            "/admin/organizations",
            "/admin/plans",
            "/admin/workspaces",
            "/tracker/",
            f"/lotes/{data['lote']}",
        ):
            page.goto(path)
            _fits_and_accessible(page, viewport["width"])
        # Grant a role from the page.
        page.goto("/administracao/acessos")
        # The search swaps the list in after a pause: choose the role in the list it brings.
        with page.expect_response(lambda r: "/administracao/acessos?" in r.url and "q=paula" in r.url):
            page.get_by_label("Buscar conta").fill("paula")
        # Paula is listed before the search too: wait until the list is the search's own
        # (hers alone), or the choice lands in a row the swap is about to replace.
        expect(page.locator("#account-rows li.admin-item")).to_have_count(1)
        row = page.locator("li.admin-item", has_text="paula@giro.test")
        row.get_by_label("Papel").select_option("visualizador")
        row.get_by_role("button", name="Salvar").click()
        expect(page.locator("li.admin-item", has_text="paula@giro.test")).to_contain_text(
            "Acesso salvo: Visualizador"
        )
        if viewport is not PHONE:
            screenshot(page, "stock-admin-accounts")

        # Upload a CSV: the file is checked whole, errors by line, and the log lists it.
        page.goto("/administracao/importacoes")
        page.get_by_label("Tipo", exact=True).select_option("stores")
        page.get_by_label("Arquivo", exact=True).set_input_files(
            files=[
                {
                    "name": "lojas.csv",
                    "mimeType": "text/csv",
                    "buffer": b"codigo,nome,cidade,lat,lng,is_cd,bloqueada\nSP77,Loja Nova,Santos,,,false,talvez\n",
                }
            ]
        )
        page.get_by_role("button", name="Importar").click()
        expect(page.get_by_role("alert")).to_contain_text("lojas.csv recusado; nada foi importado.")
        expect(page.get_by_role("alert")).to_contain_text("Linha 2")
        expect(page.locator(".import-log")).to_contain_text("Recusado")
        _fits_and_accessible(page, viewport["width"])

        # What-if on the rules page.
        page.goto("/regras")
        page.get_by_label("Quantidade mínima por transferência").fill("4")
        page.get_by_role("button", name="Simular").click()
        expect(page.locator("#whatif")).to_contain_text("Nada foi salvo")
        _fits_and_accessible(page, viewport["width"])
        if viewport is not PHONE:
            page.locator("#whatif").scroll_into_view_if_needed()
            screenshot(page, "rules-whatif")
    finally:
        context.close()
