"""A planner clears a large batch in a real browser: everything the filter matches approved at
once, a dense table, refusals with a reason (and undo), the keyboard, and Back/Forward that
keep the table and its controls in agreement."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import screenshot, sign_in
from tests.factories import PASSWORD, make_rec, make_user
from tests.test_pages_remanejamento import small_network


def _big_batch() -> dict:
    """The small network plus 60 pending high-priority transfers, 2 refused and 1 vetoed."""
    net = small_network()
    for i in range(60):
        make_rec(net["lote"], net["tenis"], net["cd"], net["paulista"], prioridade="alta", score=40 + i)
    for _ in range(2):
        make_rec(net["lote"], net["tenis"], net["cd"], net["paulista"], prioridade="alta", status="recusada")
    make_rec(net["lote"], net["tenis"], net["cd"], net["paulista"], prioridade="alta", vetado=True)
    planner = make_user(name="Paula Planejadora", email="paula@giro.test", papel="planejador")
    return {"lote": str(net["lote"].id), "planner": planner.email, "baixa": str(net["recs"]["baixa"].id)}


def test_select_everything_matching_then_approve_shows_the_counts(page, committed):
    data = committed(_big_batch)
    page.set_viewport_size({"width": 1366, "height": 768})
    sign_in(page, data["planner"], PASSWORD)
    page.goto(f"/lotes/{data['lote']}?prioridade=alta")
    expect(page.locator("#recs tbody tr")).to_have_count(50)
    matching = page.get_by_label("Selecionar todas as 64 que correspondem ao filtro")
    matching.check()
    expect(page.locator("#sel-count")).to_have_text("64 selecionadas")
    page.get_by_role("button", name="Aprovar selecionadas").click()
    expect(page.locator("#bulk-result")).to_have_text("61 aprovadas; 3 ignoradas: 2 já recusadas, 1 vetada.")
    screenshot(page, "batch-bulk")
    # Every page changed, not only the one shown: the vetoed one alone is still pending.
    page.get_by_label("Situação").select_option("pendente")
    expect(page.locator("#recs tbody tr")).to_have_count(1)
    expect(page.locator("#recs tbody tr")).to_contain_text("Vetada")
    page.get_by_label("Situação").select_option("aprovada")
    expect(page.locator("#recs .pager")).to_contain_text("61 recomendações")
    page.get_by_label("Situação").select_option("")

    # Dense mode: one line per recommendation, at least 20 on a 1366×768 screen; kept in the URL.
    page.get_by_label("Modo denso").check()
    expect(page).to_have_url(re.compile(r"densa=1"))
    expect(page.locator("#recs.dense")).to_be_attached()
    page.locator("#recs thead").evaluate("el => el.scrollIntoView({block: 'start'})")
    visible = page.evaluate(
        """() => Array.from(document.querySelectorAll('#recs tbody tr')).filter(r => {
            const box = r.getBoundingClientRect();
            return box.top >= 0 && box.bottom <= window.innerHeight;
        }).length"""
    )
    assert visible >= 20, visible
    heights = page.evaluate(
        "() => Array.from(document.querySelectorAll('#recs tbody tr')).map(r => r.getBoundingClientRect().height)"
    )
    assert max(heights) < 36, max(heights)
    page.evaluate("() => window.scrollTo(0, 0)")
    screenshot(page, "batch-dense")
    page.reload()
    expect(page.get_by_label("Modo denso")).to_be_checked()
    expect(page.locator("#recs.dense")).to_be_attached()


def test_refuse_with_a_reason_then_history_shows_it_and_undo_and_keys(page, committed):
    data = committed(_big_batch)
    sign_in(page, data["planner"], PASSWORD)
    page.goto(f"/lotes/{data['lote']}?prioridade=baixa")
    row = page.locator(f"#rec-{data['baixa']}")
    row.get_by_role("link", name="Recusar").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Motivo da recusa")
    dialog.get_by_label("A loja recusa").check()
    dialog.get_by_label(re.compile("Detalhes")).fill("Sem espaço no depósito")
    dialog.get_by_role("button", name="Recusar").click()
    expect(dialog).to_be_hidden()
    expect(row).to_contain_text("Recusada")
    expect(row).to_contain_text("A loja recusa")
    toast = page.locator("#toast")
    expect(toast).to_contain_text("Recomendação recusada")

    # Undo, within its few seconds: back to pending.
    toast.get_by_role("button", name="Desfazer").click()
    expect(toast).to_contain_text("Ação desfeita")
    expect(row).to_contain_text("Pendente")

    # The keyboard: j moves to the row, r opens the refusal's reasons, ? the help.
    page.locator("body").click(position={"x": 5, "y": 300})
    page.keyboard.press("j")
    expect(row).to_have_class(re.compile("is-current"))
    page.keyboard.press("r")
    expect(dialog).to_be_visible()
    dialog.get_by_label("Estoque errado").check()
    dialog.get_by_role("button", name="Recusar").click()
    expect(row).to_contain_text("Estoque errado")
    page.locator("body").click(position={"x": 5, "y": 300})
    page.keyboard.press("?")
    help_dialog = page.get_by_role("dialog", name="Atalhos de teclado")
    expect(help_dialog).to_be_visible()
    page.keyboard.press("Escape")
    expect(help_dialog).to_be_hidden()

    page.get_by_role("link", name="Histórico").click()
    page.wait_for_load_state("load")
    expect(page.locator("#history")).to_contain_text("Estoque errado")


def _controls(page) -> tuple[str, str]:
    return (
        page.get_by_label("Prioridade").input_value(),
        page.get_by_label("Situação").input_value(),
    )


def _table_priorities(page) -> set[str]:
    return set(page.locator("#recs tbody tr td:nth-child(2)").all_inner_texts())


def test_back_and_forward_keep_table_and_controls_in_agreement(page, committed):
    data = committed(_big_batch)
    sign_in(page, data["planner"], PASSWORD)
    page.goto(f"/lotes/{data['lote']}")
    page.wait_for_load_state("load")
    page.get_by_label("Prioridade").select_option("baixa")
    expect(page).to_have_url(re.compile(r"prioridade=baixa"))
    expect(page.locator("#recs tbody tr")).to_have_count(1)
    page.get_by_label("Situação").select_option("pendente")
    expect(page).to_have_url(re.compile(r"status=pendente"))
    # Empty filters never reach the address bar.
    assert "=&" not in page.url and not page.url.endswith("=")

    page.go_back()
    expect(page).not_to_have_url(re.compile(r"status="))
    expect(page.get_by_label("Situação")).to_have_value("")
    expect(page.get_by_label("Prioridade")).to_have_value("baixa")
    assert _table_priorities(page) == {"Baixa"}

    page.go_back()
    expect(page).not_to_have_url(re.compile(r"prioridade="))
    expect(page.get_by_label("Prioridade")).to_have_value("")
    expect(page.locator("#recs tbody tr")).to_have_count(50)
    expect(page.locator("#recs .pager")).to_contain_text("68 recomendações")

    page.go_forward()
    expect(page).to_have_url(re.compile(r"prioridade=baixa"))
    expect(page.get_by_label("Prioridade")).to_have_value("baixa")
    expect(page.locator("#recs tbody tr")).to_have_count(1)
    assert _controls(page) == ("baixa", "")

    # A new change after Back/Forward keeps the other filter.
    page.get_by_label("Situação").select_option("pendente")
    expect(page).to_have_url(re.compile(r"prioridade=baixa"))
    expect(page).to_have_url(re.compile(r"status=pendente"))
    page.reload()
    assert _controls(page) == ("baixa", "pendente")
    assert _table_priorities(page) == {"Baixa"}
