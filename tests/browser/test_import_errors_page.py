"""A rejected CSV on the admin's import page lists every bad line, in a real browser, on a
desktop and a phone, with axe-core on the page it leaves."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import screenshot, sign_in
from tests.factories import PASSWORD, make_user

BAD_STORES = (
    b"codigo,nome,cidade,lat,lng,is_cd,bloqueada\n"
    b"SP70,Loja Boa,Santos,,,false,false\n"
    b"SP71,Loja Ruim,Santos,,,talvez,false\n"
    b"SP70,Loja Boa,Santos,,,false,false\n"
    b"SP72,Loja Sul,Santos,-23.9,,false,false\n"
)


def _upload_bad_file(page) -> None:
    page.goto("/administracao/importacoes")
    page.get_by_label("Tipo", exact=True).select_option("stores")
    page.get_by_label("Arquivo", exact=True).set_input_files(
        files=[{"name": "lojas-ruins.csv", "mimeType": "text/csv", "buffer": BAD_STORES}]
    )
    page.get_by_role("button", name="Importar").click()
    alert = page.locator("#import-form .alert.error")
    expect(alert).to_contain_text("lojas-ruins.csv recusado; nada foi importado. 3 linhas com erro:")
    expect(alert.locator("li")).to_have_text(
        [
            "Linha 3: is_cd must be true or false, got 'talvez'",
            "Linha 4: store 'SP70' already appears on line 2",
            "Linha 5: lat and lng must both be given or both be empty",
        ]
    )
    # The log of the last imports keeps the whole list behind a disclosure.
    entry = page.locator(".import-log li.admin-item", has_text="lojas-ruins.csv")
    entry.get_by_text("Todas as linhas com erro").click()
    expect(entry.locator("details li")).to_have_count(3)


def test_the_import_page_lists_every_bad_line(page, committed):
    committed(lambda: make_user(name="Ana Admin", email="ana.import@giro.test", papel="admin"))
    sign_in(page, "ana.import@giro.test", PASSWORD)
    _upload_bad_file(page)
    screenshot(page, "stock-admin-import-errors")


def test_the_list_fits_a_phone(page, committed):
    committed(lambda: make_user(name="Beto Admin", email="beto.import@giro.test", papel="admin"))
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, "beto.import@giro.test", PASSWORD)
    _upload_bad_file(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
