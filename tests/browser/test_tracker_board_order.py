"""The board's order in a real browser: a card dragged within its column, or moved with the
keyboard, is still there after a reload; and the audit log page."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import screenshot, sign_in
from tests.factories import PASSWORD, register_verified


def _board_with_three_cards() -> dict:
    """Olga's project with WEB-1..3 in Todo (the board reads WEB-3, WEB-2, WEB-1)."""
    from services.tracker import issues, workspaces

    owner, _access, _refresh = register_verified("Olga Dona", "olga@tracker.test", PASSWORD)
    slug = workspaces.list_workspaces(owner)[0].slug
    project = workspaces.create_project(owner, slug, {"name": "Loja Virtual", "key": "WEB"})
    todo = next(s for s in workspaces.list_statuses(owner, slug, project.id) if s.category == "todo")
    for title in ("Checkout quebra no Safari", "Filtro de numeração", "Fotos da coleção verão"):
        issues.create_issue(owner, slug, project.id, {"title": title, "status_id": todo.id})
    return {"board": f"/tracker/w/{slug}/p/{project.id}/board", "todo": str(todo.id)}


def _order(page, todo: str) -> list[str]:
    return page.locator(f"#cards-{todo} .issue-card").evaluate_all("cards => cards.map(c => c.dataset.key)")


def _wait_for_order(page, todo: str, keys: list[str]) -> None:
    """The column shows ``keys`` in that order, once the move's answer has been swapped in."""
    page.wait_for_function(
        "([sel, keys]) => Array.from(document.querySelectorAll(sel), c => c.dataset.key).join() === keys.join()",
        arg=[f"#cards-{todo} .issue-card", keys],
    )


def test_a_card_dragged_within_its_column_keeps_its_place_after_a_reload(page, committed):
    data = committed(_board_with_three_cards)
    sign_in(page, "olga@tracker.test", PASSWORD)
    page.goto(data["board"])
    todo = data["todo"]
    expect(page.locator(f"#cards-{todo} .issue-card")).to_have_count(3)
    assert _order(page, todo) == ["WEB-3", "WEB-2", "WEB-1"]
    source = page.locator("#card-WEB-1 .issue-card-title").bounding_box()
    target = page.locator("#card-WEB-3").bounding_box()
    with page.expect_response(lambda r: r.url.endswith("/WEB-1/move")) as moved:
        page.mouse.move(source["x"] + source["width"] / 2, source["y"] + source["height"] / 2)
        page.mouse.down()
        # Over the top part of the first card: Sortable puts the dragged card above it.
        x, y = target["x"] + target["width"] / 2, target["y"] + 4
        page.mouse.move(x, y, steps=20)
        # Sortable moves the card in the page on the drag's "dragover" events, which an emulated
        # drag fires only when the pointer moves: nudge it until the card sits on top, then drop.
        for nudge in range(50):
            if _order(page, todo) == ["WEB-1", "WEB-3", "WEB-2"]:
                break
            page.mouse.move(x, y + nudge % 2)
            page.wait_for_timeout(100)
        _wait_for_order(page, todo, ["WEB-1", "WEB-3", "WEB-2"])
        page.mouse.up()
    assert moved.value.status == 200
    expect(page.locator(f"#cards-{todo} .issue-card").first).to_have_attribute("data-key", "WEB-1")
    page.reload()
    expect(page.locator(f"#cards-{todo} .issue-card")).to_have_count(3)
    assert _order(page, todo) == ["WEB-1", "WEB-3", "WEB-2"]


def test_alt_arrows_move_a_card_in_its_column_and_it_stays(page, committed):
    data = committed(_board_with_three_cards)
    sign_in(page, "olga@tracker.test", PASSWORD)
    page.goto(data["board"])
    todo = data["todo"]
    page.locator("#card-WEB-2 .issue-card-title").focus()
    with page.expect_response(lambda r: r.url.endswith("/WEB-2/move")) as moved:
        page.keyboard.press("Alt+ArrowDown")
    assert moved.value.status == 200
    _wait_for_order(page, todo, ["WEB-3", "WEB-1", "WEB-2"])
    expect(page.locator("#card-WEB-2 .issue-card-title")).to_be_focused()
    page.reload()
    expect(page.locator(f"#cards-{todo} .issue-card")).to_have_count(3)
    assert _order(page, todo) == ["WEB-3", "WEB-1", "WEB-2"]


def _organization_with_history() -> dict:
    """An enterprise organization with people, projects, statuses and labels changed by two admins."""
    from services.tracker import organizations, plans, workspaces

    owner, _access, _refresh = register_verified("Olga Dona", "olga@tracker.test", PASSWORD)
    workspace = workspaces.list_workspaces(owner)[0]
    org_id = workspace.organization_id
    plans.assign_plan(workspace.organization, "enterprise")
    invitation = organizations.invite(owner, org_id, "carla@tracker.test", "admin")
    carla, _access, _refresh = register_verified("Carla Admin", "carla@tracker.test", PASSWORD)
    organizations.accept_invitation(carla, invitation.id)
    project = workspaces.create_project(carla, workspace.slug, {"name": "Loja Virtual", "key": "WEB"})
    workspaces.update_project(carla, workspace.slug, project.id, {"name": "Loja virtual e app"})
    workspaces.create_label(owner, workspace.slug, project.id, {"name": "Checkout", "color": "#b42318"})
    workspaces.create_status(
        owner,
        workspace.slug,
        project.id,
        {"name": "Em revisão", "color": "#175cd3", "category": "in_progress"},
    )
    organizations.invite(owner, org_id, "dani@tracker.test", "member")
    organizations.update_member(owner, org_id, carla.id, "member")
    return {"audit": f"/tracker/o/{org_id}/audit-log"}


def test_the_audit_log_page(page, committed):
    data = committed(_organization_with_history)
    sign_in(page, "olga@tracker.test", PASSWORD)
    page.goto(data["audit"])
    expect(page.get_by_role("heading", name="Log de auditoria")).to_be_visible()
    rows = page.locator("#audit-results tbody tr")
    expect(rows.first).to_contain_text("Papel alterado")
    screenshot(page, "tracker-audit-log")
    with page.expect_response(lambda r: "action=project.updated" in r.url):
        page.get_by_label("Ação", exact=True).select_option(label="Projeto alterado")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Loja virtual e app")
    expect(page.get_by_role("link", name="Baixar CSV")).to_have_attribute(
        "href", f"{data['audit']}.csv?action=project.updated"
    )
