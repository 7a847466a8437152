"""Pages and the Swagger UI work under the Content-Security-Policy; the ``page``
fixture fails any test on a CSP violation."""

from __future__ import annotations

import pytest

from tests.browser.conftest import sign_in
from tests.factories import PASSWORD


@pytest.mark.parametrize(
    ("path", "operation"),
    [("/api/v1/docs", "/api/v1/auth/login"), ("/tracker/api/v1/docs", "/tracker/api/v1/auth/register")],
)
def test_swagger_ui_renders_every_operation(page, path, operation):
    page.goto(path)
    page.locator(".opblock").first.wait_for()
    assert page.locator(f'.opblock-summary-path[data-path="{operation}"]').count() == 1
    assert page.get_by_role("button", name="Authorize").is_visible()


def _labelled_issue() -> dict:
    from services.tracker import accounts, issues, workspaces

    owner, _access, _refresh = accounts.register("Olga Dona", "olga@tracker.test", PASSWORD)
    slug = workspaces.list_workspaces(owner)[0].slug
    project = workspaces.create_project(owner, slug, {"name": "Loja Virtual", "key": "WEB"})
    label = workspaces.create_label(owner, slug, project.id, {"name": "Checkout", "color": "#b42318"})
    issues.create_issue(owner, slug, project.id, {"title": "Checkout quebra", "label_ids": [label.id]})
    return {"slug": slug, "project": str(project.id)}


def test_colours_from_data_reach_the_page_without_inline_styles(page, committed):
    team = committed(_labelled_issue)
    sign_in(page, "olga@tracker.test", PASSWORD)
    page.goto(f"/tracker/w/{team['slug']}/p/{team['project']}/issues")
    chip = page.locator(".label-chip", has_text="Checkout")
    # data-vars="--c: #b42318" became the chip's custom property, and so its border.
    assert chip.evaluate("e => getComputedStyle(e).borderTopColor") == "rgb(180, 35, 24)"
