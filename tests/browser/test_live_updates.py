"""Live updates in a real browser: two people on the same batch (or board), each in their own
browser context; what one decides (or moves) shows on the other's open page within 5 s,
without a reload."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import sign_in
from tests.browser.test_remanejamento_pages import _network_with_batch
from tests.factories import PASSWORD, make_user, register_verified

WITHIN = 5_000  # ms: the page asks every 4 s


def _second_page(browser, live_server):
    context = browser.new_context(
        base_url=live_server, viewport={"width": 1280, "height": 860}, locale="pt-BR"
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    return context, page


def _two_planners() -> dict:
    data = _network_with_batch()
    make_user(name="Pedro Planejador", email="pedro@giro.test", papel="planejador")
    return {**data, "other": "pedro@giro.test"}


def test_a_row_approved_by_another_planner_turns_approved_on_the_open_page(
    page, browser, live_server, committed
):
    data = committed(_two_planners)
    sign_in(page, data["planner"], PASSWORD)
    page.goto(f"/lotes/{data['lote']}")
    first = page.locator("#recs tbody tr.rec").first
    row_id = first.get_attribute("id")
    expect(first).to_contain_text("Pendente")
    # The row next to it is selected here: a live swap keeps the selection.
    second = page.locator("#recs tbody tr.rec").nth(1)
    second.get_by_role("checkbox").check()

    context, other = _second_page(browser, live_server)
    try:
        sign_in(other, data["other"], PASSWORD)
        other.goto(f"/lotes/{data['lote']}")
        other.locator(f"#{row_id}").get_by_role("button", name="Aprovar").click()
        expect(other.locator(f"#{row_id}")).to_contain_text("Aprovada")
    finally:
        context.close()

    row = page.locator(f"#{row_id}")
    expect(row).to_contain_text("Aprovada", timeout=WITHIN)
    expect(row).to_contain_text("Pedro Planejador")
    expect(row.get_by_role("button", name="Executar")).to_be_visible()
    expect(second.get_by_role("checkbox")).to_be_checked()
    expect(page.locator("#sel-count")).to_have_text("1 selecionada")


def test_a_row_with_a_veto_being_typed_waits_until_the_form_closes(page, browser, live_server, committed):
    data = committed(_two_planners)
    sign_in(page, data["planner"], PASSWORD)
    page.goto(f"/lotes/{data['lote']}")
    row_id = page.locator("#recs tbody tr.rec").first.get_attribute("id")
    row = page.locator(f"#{row_id}")
    row.get_by_role("button", name="Vetar").click()
    row.get_by_label("Motivo do veto").fill("Loja em invent")

    context, other = _second_page(browser, live_server)
    try:
        sign_in(other, data["other"], PASSWORD)
        other.goto(f"/lotes/{data['lote']}")
        other.locator(f"#{row_id}").get_by_role("button", name="Aprovar").click()
        expect(other.locator(f"#{row_id}")).to_contain_text("Aprovada")
    finally:
        context.close()

    # Two rounds later the typed reason is still there, untouched.
    page.wait_for_timeout(WITHIN + 3_000)
    expect(row.get_by_label("Motivo do veto")).to_have_value("Loja em invent")
    expect(row).to_contain_text("Pendente")
    page.keyboard.press("Escape")  # the form closes: the waiting state comes in
    expect(row).to_contain_text("Aprovada", timeout=WITHIN)


def _board_of_two() -> dict:
    from services.tracker import issues, organizations, workspaces

    owner, _access, _refresh = register_verified("Olga Dona", "olga@tracker.test", PASSWORD)
    workspace = workspaces.list_workspaces(owner)[0]
    invitation = organizations.invite(owner, workspace.organization_id, "maria@tracker.test", "member")
    maria, _access, _refresh = register_verified("Maria Membro", "maria@tracker.test", PASSWORD)
    organizations.accept_invitation(maria, invitation.id)
    project = workspaces.create_project(owner, workspace.slug, {"name": "Loja Virtual", "key": "WEB"})
    by_category = {s.category: s for s in workspaces.list_statuses(owner, workspace.slug, project.id)}
    for title in ("Checkout quebra no Safari", "Filtro de numeração"):
        issues.create_issue(
            owner, workspace.slug, project.id, {"title": title, "status_id": by_category["todo"].id}
        )
    return {
        "board": f"/tracker/w/{workspace.slug}/p/{project.id}/board",
        "todo": str(by_category["todo"].id),
        "done": str(by_category["done"].id),
    }


def test_a_card_moved_by_a_teammate_moves_on_the_open_board(page, browser, live_server, committed):
    data = committed(_board_of_two)
    sign_in(page, "maria@tracker.test", PASSWORD)
    page.goto(data["board"])
    expect(page.locator(f"#cards-{data['todo']} #card-WEB-1")).to_be_visible()

    context, other = _second_page(browser, live_server)
    try:
        sign_in(other, "olga@tracker.test", PASSWORD)
        other.goto(data["board"])
        with other.expect_response(lambda r: r.url.endswith("/WEB-1/move")) as moved:
            other.get_by_label("Status de WEB-1").select_option(data["done"])
        assert moved.value.status == 200
    finally:
        context.close()

    expect(page.locator(f"#cards-{data['done']} #card-WEB-1")).to_be_visible(timeout=WITHIN)
    expect(page.locator(f"[data-count-for='{data['done']}']")).to_have_text("1")
    expect(page.locator(f"#cards-{data['todo']} .issue-card")).to_have_count(1)
    # The board still works after the swap: its own move goes through.
    with page.expect_response(lambda r: r.url.endswith("/WEB-2/move")) as own:
        page.get_by_label("Status de WEB-2").select_option(data["done"])
    assert own.value.status == 200
    expect(page.locator(f"#cards-{data['done']} .issue-card")).to_have_count(2)
