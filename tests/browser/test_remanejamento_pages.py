"""The planners' pages in a real browser: dashboard, a batch decided in place, rules, grade."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from services.clock import today
from services.stock.generation import generate_batch
from tests.browser.conftest import screenshot, sign_in
from tests.factories import PASSWORD, add_sales, make_loja, make_produto, make_user, set_stock


def _network_with_batch() -> dict:
    """A CD, four stores, three products with 30 days of sales, and the engine's batch for today."""
    planner = make_user(name="Paula Planejadora", email="paula@giro.test", papel="planejador")
    admin = make_user(name="Artur Admin", email="artur@giro.test", papel="admin")
    cd = make_loja(nome="CD Cajamar", codigo="CD01", cidade="Cajamar", lat=-23.36, lng=-46.88, is_cd=True)
    stores = [
        make_loja(nome="Loja Paulista", codigo="SP01", cidade="São Paulo", lat=-23.56, lng=-46.65),
        make_loja(nome="Loja Moema", codigo="SP02", cidade="São Paulo", lat=-23.60, lng=-46.66),
        make_loja(nome="Loja Campinas", codigo="CP01", cidade="Campinas", lat=-22.90, lng=-47.06),
        make_loja(nome="Loja Santos", codigo="ST01", cidade="Santos", lat=-23.96, lng=-46.33),
    ]
    sizes = ("37", "38", "39", "40")
    produtos = [
        make_produto(nome="Tênis Corrida Leve", sku="TCL-01", marca="Passo", cor="Preto", tamanhos=sizes),
        make_produto(nome="Sapatênis Urbano", sku="SPU-02", marca="Passo", cor="Azul", tamanhos=sizes),
        make_produto(nome="Bota Couro", sku="BTC-03", marca="Trilha", cor="Marrom", tamanhos=sizes),
    ]
    on = today()
    for produto in produtos:
        set_stock(cd, produto, **dict.fromkeys(sizes, 60))
        for i, loja in enumerate(stores):
            # Half the stores sell fast and are nearly out; the others sit on stock.
            fast = i % 2 == 0
            set_stock(loja, produto, **{s: (1 if fast else 25) for s in sizes})
            for size in sizes:
                add_sales(loja, produto, size, [3 if fast else 0] * 30, end=on)
    lote = generate_batch(on)
    return {"lote": str(lote.id), "semana": lote.semana, "planner": planner.email, "admin": admin.email}


def _units(n: int) -> str:
    """A total as the page shows it in pt-BR (dot as the thousands separator)."""
    return f"{n:,}".replace(",", ".")


def test_planner_decides_in_place_and_sees_totals_change(page, committed):
    data = committed(_network_with_batch)
    sign_in(page, data["planner"], PASSWORD)
    expect(page.get_by_role("heading", level=1)).to_contain_text("Olá, Paula")
    expect(page.locator("#chart-efetividade")).to_be_visible()
    screenshot(page, "dashboard")

    page.get_by_role("link", name=re.compile(f"Abrir o lote {data['semana']}")).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(data["semana"])
    # The flow per node, below the table.
    flow = page.locator("#fluxo table")
    expect(flow.get_by_role("rowheader", name=re.compile("CD Cajamar"))).to_be_attached()
    units = page.locator('#totais [data-total="totalUnidades"]')
    before = int(units.inner_text().replace(".", ""))
    rows = page.locator("#recs tbody tr")
    assert rows.count() > 2

    # Approve the first row in place.
    first = rows.nth(0)
    first_id = first.get_attribute("id")
    first.get_by_role("button", name="Aprovar").click()
    row = page.locator(f"#{first_id}")
    expect(row).to_contain_text("Aprovada")
    expect(row.get_by_role("button", name="Executar")).to_be_visible()

    # Veto the second one: the reason is asked inline, and the totals drop by its quantity.
    second_id = rows.nth(1).get_attribute("id")
    row = page.locator(f"#{second_id}")
    qty = int(row.locator("td.num strong").inner_text())
    row.get_by_role("button", name="Vetar").click()
    expect(row.get_by_label("Motivo do veto")).to_be_focused()
    page.keyboard.press("Escape")  # closes the form, nothing changes
    expect(row.get_by_role("button", name="Aprovar")).to_be_focused()
    row.get_by_role("button", name="Vetar").click()
    row.get_by_role("button", name="Confirmar veto").click()
    expect(row.get_by_text("Informe o motivo do veto.")).to_be_visible()
    row.get_by_label("Motivo do veto").fill("Loja em inventário")
    row.get_by_role("button", name="Confirmar veto").click()
    expect(row).to_contain_text("Loja em inventário")
    expect(units).to_have_text(_units(before - qty))
    screenshot(page, "batch")

    # Restore it: the totals come back.
    row.get_by_role("button", name="Restaurar").click()
    expect(row.get_by_role("button", name="Vetar")).to_be_visible()
    expect(units).to_have_text(_units(before))

    # Bulk: select two pending rows and approve them at once.
    pending = page.locator("#recs tbody tr", has=page.get_by_role("button", name="Aprovar"))
    pending.nth(0).get_by_role("checkbox").check()
    pending.nth(1).get_by_role("checkbox").check()
    expect(page.locator("#sel-count")).to_have_text("2 selecionadas")
    page.get_by_role("button", name="Aprovar selecionadas").click()
    expect(page.locator("#bulk-result")).to_contain_text("2 aprovadas")

    # The filters narrow the table through htmx and keep the URL shareable.
    page.get_by_label("Situação").select_option("aprovada")
    expect(page).to_have_url(re.compile(r"status=aprovada"))
    expect(page.locator("#recs tbody tr")).to_have_count(3)

    # The history lists the decisions, filtered by status.
    page.get_by_role("link", name="Histórico").click()
    page.wait_for_load_state("load")  # htmx binds the filter once the page has loaded
    page.get_by_label("Situação").select_option("aprovada")
    expect(page).to_have_url(re.compile(r"historico\?status=aprovada"))
    expect(page.locator("#history tbody tr")).to_have_count(3)
    expect(page.locator("#history")).to_contain_text("Paula Planejadora")
    screenshot(page, "history")
    page.get_by_role("link", name="Lotes", exact=True).click()
    expect(page.get_by_role("row", name=re.compile(data["semana"]))).to_contain_text("Novo")
    screenshot(page, "batches")


def test_admin_sees_rule_errors_inline(page, committed):
    data = committed(_network_with_batch)
    sign_in(page, data["admin"], PASSWORD)
    page.get_by_role("link", name="Regras").click()
    page.get_by_label("Giro (venda no destino)").fill("150")
    page.get_by_role("button", name="Salvar regras").click()
    error = page.locator("#pesoGiro-error")
    expect(error).to_contain_text("de 0 a 100")
    expect(page.get_by_label("Giro (venda no destino)")).to_have_attribute("aria-invalid", "true")
    screenshot(page, "rules-error")
    page.get_by_label("Giro (venda no destino)").fill("30")
    page.get_by_role("button", name="Salvar regras").click()
    expect(page.get_by_role("status")).to_contain_text("Regras salvas")
    expect(page.locator("#pesoGiro-error")).to_have_count(0)


def test_grade_matrix_opens_from_the_product_picker(page, committed):
    data = committed(_network_with_batch)
    sign_in(page, data["planner"], PASSWORD)
    page.get_by_role("link", name="Grade").click()
    # htmx listens once the page's deferred scripts ran: typing earlier sends nothing.
    page.wait_for_url("**/grade")
    page.wait_for_load_state("load")
    page.get_by_label("Buscar produto").fill("corrida")
    expect(page.locator("#product-rows tr")).to_have_count(1)
    page.get_by_role("link", name="Tênis Corrida Leve").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Tênis Corrida Leve")
    matrix = page.locator("#grade-matrix table")
    expect(matrix.get_by_role("rowheader", name=re.compile("CD Cajamar"))).to_be_visible()
    expect(matrix.locator("thead th")).to_have_count(7)  # store, four sizes, total, run
    expect(matrix.locator("td.run .badge").first).to_have_text(re.compile("completa|quebrada"))
    expect(matrix.locator("td.gets").first).to_be_visible()
    expect(page.get_by_label("Lote", exact=True)).to_have_value(data["lote"])
    screenshot(page, "grade")


def test_phone_width_batch_page(page, committed):
    data = committed(_network_with_batch)
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, data["planner"], PASSWORD)
    page.goto(f"/lotes/{data['lote']}")
    expect(page.locator("#totais")).to_be_visible()
    # The page itself never scrolls sideways; only the table does, inside its frame.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, "batch-phone")
