"""Signing in and out, the profile, stores and a store's stock, in a real browser."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import screenshot, sign_in
from tests.factories import PASSWORD, make_loja, make_produto, make_user, set_stock


def _planner_and_store():
    user = make_user(name="Paula Planejadora", email="paula@giro.test", papel="planejador")
    loja = make_loja(nome="Loja Paulista", codigo="SP01", cidade="São Paulo")
    make_loja(nome="CD Cajamar", codigo="CD01", cidade="Cajamar", is_cd=True)
    produto = make_produto(nome="Tênis Corrida Leve", sku="TCL-01", tamanhos=("37", "38", "39"))
    set_stock(loja, produto, **{"37": 4, "38": 0, "39": 7})
    return {"email": user.email, "loja": str(loja.id)}


def test_sign_in_and_out(page, committed):
    data = committed(_planner_and_store)
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login"))
    screenshot(page, "login")

    sign_in(page, data["email"], "senha-errada")
    expect(page.get_by_role("alert")).to_contain_text("E-mail ou senha inválidos")

    sign_in(page, data["email"], PASSWORD)
    expect(page.get_by_role("heading", level=1)).to_contain_text("Olá, Paula")
    cookies = {c["name"]: c for c in page.context.cookies()}
    assert cookies["access_token_cookie"]["httpOnly"] is True

    page.get_by_role("button", name="Sair").click()
    expect(page).to_have_url(re.compile(r"/login"))
    page.goto("/perfil")
    expect(page).to_have_url(re.compile(r"/login"))


def test_store_stock_and_cell_detail(page, committed):
    data = committed(_planner_and_store)
    sign_in(page, data["email"], PASSWORD)
    page.get_by_role("link", name="Lojas").first.click()
    expect(page.get_by_role("cell", name="CD Cajamar CD")).to_be_visible()
    page.wait_for_load_state("load")  # htmx binds its triggers once the page has loaded
    page.get_by_label("Buscar loja").fill("paulista")
    expect(page.locator("#store-rows tr")).to_have_count(1)
    page.get_by_role("link", name="Loja Paulista").click()
    expect(page.get_by_role("heading", name="Tênis Corrida Leve")).to_be_visible()
    # A size opens its detail in place, in a dialog; the link's name holds its visible text.
    page.get_by_role("link", name="Tamanho 39 7 un.").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("tam. 39")
    expect(dialog).to_contain_text("7 un.")
    expect(dialog.locator(".x-axis")).to_be_visible()
    screenshot(page, "store-stock")
    dialog.get_by_role("button", name="Fechar").click()
    expect(dialog).to_be_hidden()


def test_profile_edits_in_place_with_inline_errors(page, committed):
    data = committed(_planner_and_store)
    sign_in(page, data["email"], PASSWORD)
    page.goto("/perfil")
    page.get_by_label("Nome").fill("")
    page.get_by_role("button", name="Salvar", exact=True).click()
    expect(page.locator("#nome-error")).to_be_visible()
    page.get_by_label("Nome").fill("Paula Souza")
    page.get_by_role("button", name="Salvar", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("Perfil salvo")
    page.reload()
    expect(page.get_by_label("Nome")).to_have_value("Paula Souza")
