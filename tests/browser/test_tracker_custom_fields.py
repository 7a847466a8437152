"""Custom fields in a real browser: edited inline on the issue page, shown as list columns."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import screenshot, sign_in
from tests.factories import PASSWORD, register_verified


def _project_with_fields() -> dict:
    from extensions import db
    from models.tracker import Organization
    from services.tracker import custom_fields, issues, plans, workspaces

    owner, _access, _refresh = register_verified("Olga Dona", "olga@fields.test", PASSWORD)
    workspace = workspaces.list_workspaces(owner)[0]
    plans.assign_plan(db.session.get(Organization, workspace.organization_id), "pro")
    project = workspaces.create_project(owner, workspace.slug, {"name": "Loja Virtual", "key": "WEB"})
    for name, kind, options in (
        ("Canal", "select", ["loja", "site", "app"]),
        ("Regiões", "multi_select", ["sul", "sudeste", "norte"]),
        ("Pontos", "number", []),
        ("Entrega", "date", []),
    ):
        custom_fields.create_field(
            owner, workspace.slug, project.id, custom_fields.FieldDefinition(name, kind, options, False)
        )
    issues.create_issue(
        owner,
        workspace.slug,
        project.id,
        {"title": "Checkout quebra no Safari", "custom_fields": {"canal": "site", "pontos": 3}},
    )
    return {"slug": workspace.slug, "project": str(project.id)}


def test_custom_fields_are_edited_inline_and_listed_as_columns(page, committed):
    data = committed(_project_with_fields)
    sign_in(page, "olga@fields.test", PASSWORD)
    base = f"/tracker/w/{data['slug']}/p/{data['project']}"
    page.goto(f"{base}/issues/WEB-1")
    expect(page.get_by_label("Canal")).to_have_value("site")
    page.get_by_label("Canal").select_option("app")
    expect(page.locator("#issue-fields")).to_contain_text("Alterações salvas")
    with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/WEB-1")):
        page.get_by_label("sudeste").check()
    expect(page.get_by_label("sudeste")).to_be_checked()
    page.reload()
    expect(page.locator("#issue-timeline")).to_contain_text("mudou canal")
    expect(page.locator("#issue-timeline")).to_contain_text("sudeste")
    screenshot(page, "tracker-custom-fields")

    page.goto(f"{base}/issues?cols=canal,regioes")
    table = page.locator("#issue-results table")
    expect(table.get_by_role("columnheader", name="Canal")).to_be_visible()
    expect(table.get_by_role("cell", name="app")).to_be_visible()
    expect(table.get_by_role("cell", name="sudeste")).to_be_visible()
