"""Platform administration in a real browser: statistics, and a ban that locks a person out."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import screenshot, sign_in
from tests.conftest import SUPERADMIN_EMAIL
from tests.factories import PASSWORD, register_verified


def _platform() -> dict:
    from services.tracker import issues, workspaces

    register_verified("Raiz Admin", SUPERADMIN_EMAIL, PASSWORD)
    user, _access, _refresh = register_verified("Beto Banido", "beto@tracker.test", PASSWORD)
    register_verified("Ana Ativa", "ana@tracker.test", PASSWORD)
    slug = workspaces.list_workspaces(user)[0].slug
    project = workspaces.create_project(user, slug, {"name": "Vitrines", "key": "VIT"})
    for title in ("Montar vitrine de inverno", "Trocar manequins", "Etiquetas de preço"):
        issues.create_issue(user, slug, project.id, {"title": title})
    return {"banned": user.email}


def test_an_admin_bans_a_user_who_then_cannot_sign_in(page, committed):
    data = committed(_platform)
    sign_in(page, SUPERADMIN_EMAIL, PASSWORD)
    page.get_by_role("link", name="Plataforma").first.click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Administração")
    expect(page.get_by_role("table")).to_contain_text("Organizações no plano Gratuito")
    expect(page.locator("canvas#chart-plans")).to_be_visible()
    page.wait_for_function("() => window.Chart && Chart.getChart(document.getElementById('chart-plans'))")
    screenshot(page, "admin-stats")

    page.get_by_role("link", name="Usuários").first.click()
    page.get_by_label("Buscar usuário").fill("beto")
    expect(page.locator("#user-results tbody tr")).to_have_count(1)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name=f"Bloquear {data['banned']}").click()
    expect(page.locator("#user-results tbody tr").first).to_contain_text("Bloqueado")
    screenshot(page, "admin-users")

    page.get_by_role("button", name="Sair").click()
    expect(page).to_have_url(re.compile(r"/login"))
    sign_in(page, data["banned"], PASSWORD)
    expect(page.get_by_role("alert")).to_contain_text("Conta bloqueada")
    expect(page).to_have_url(re.compile(r"/login"))


def test_organizations_and_plans_pages(page, committed):
    committed(_platform)
    sign_in(page, SUPERADMIN_EMAIL, PASSWORD)
    page.goto("/admin/organizations")
    expect(page.locator("#org-results")).to_contain_text("3 organizações")
    # The change is saved by an htmx POST: wait for it before filtering by plan.
    with page.expect_response(
        lambda r: r.request.method == "POST" and "/admin/organizations/" in r.url
    ) as saved:
        page.get_by_label("Plano de Beto Banido").select_option("pro")
    assert saved.value.ok
    expect(page.get_by_label("Plano de Beto Banido")).to_have_value("pro")
    page.get_by_label("Plano", exact=True).select_option("pro")
    expect(page.locator("#org-results")).to_contain_text("1 organização")
    page.goto("/admin/plans")
    page.get_by_label("Identificador").fill("business")
    page.get_by_label("Nome", exact=True).last.fill("Business")
    page.locator("#plan-create").get_by_label("Preço (R$ por mês)").fill("490")
    for field, value in (
        ("Membros", "40"),
        ("Projetos", "20"),
        ("Tarefas", "5000"),
        ("Armazenamento", "500"),
    ):
        page.locator("#plan-create").get_by_label(field, exact=True).fill(value)
    page.locator("#plan-create").get_by_label("SSO").check()
    page.get_by_role("button", name="Criar plano").click()
    expect(page.get_by_role("status")).to_contain_text("Plano business criado")
    expect(page.locator("#plan-business")).to_be_visible()
    screenshot(page, "admin-plans")
