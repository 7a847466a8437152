"""Single sign-on in a real browser: the address first on the login page, the provider (panva's
oidc-provider on loopback), back signed in; the organization's settings page."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import screenshot, sign_in
from tests.factories import PASSWORD, register_verified


def _acme(issuer: str) -> dict:
    from services.tracker import plans, sso, workspaces

    owner, _access, _refresh = register_verified("Olga Dona", "olga@acme.test", PASSWORD)
    workspace = workspaces.list_workspaces(owner)[0]
    organization = workspace.organization
    plans.assign_plan(organization, "enterprise")
    sso.put_settings(
        owner,
        organization.id,
        {
            "issuer": issuer,
            "client_id": "giro-acme",
            "client_secret": "acme-test-secret",
            "domains": ["acme.test"],
            "enabled": True,
            "enforced": False,
        },
    )
    sso.operator_verify_domain(organization, "acme.test")
    return {"org_id": str(organization.id), "slug": organization.slug}


def test_a_person_signs_in_through_the_organizations_provider(page, committed, oidc_provider, live_server):
    data = committed(lambda: _acme(oidc_provider.issuer))
    page.goto("/login?next=/tracker/")
    expect(page.get_by_label("Senha")).to_have_count(0)
    page.get_by_label("E-mail").fill("ana@acme.test")
    page.get_by_role("button", name="Continuar").click()
    # Through the provider and back: signed in, on the page asked for, a member of Acme.
    page.wait_for_url(f"{live_server}/tracker/")
    expect(page.get_by_role("link", name="AA")).to_have_attribute("href", "/perfil")
    expect(page.get_by_role("heading", level=2).first).to_contain_text("Membro")
    screenshot(page, "sso-signed-in")

    # The owner's settings page: the provider, its proven domain, the connection test.
    page.context.clear_cookies()
    page.goto("/login")
    page.get_by_label("E-mail").fill("olga@elsewhere.test")
    page.get_by_role("button", name="Continuar").click()
    expect(page.get_by_label("Senha")).to_be_visible()
    sign_in_with_password(page, "olga@acme.test")
    page.goto(f"/tracker/o/{data['org_id']}/sso")
    expect(page.get_by_text("comprovado", exact=True)).to_be_visible()
    page.get_by_role("button", name="Testar a conexão").click()
    expect(page.get_by_role("status")).to_contain_text("Chaves de assinatura obtidas")
    screenshot(page, "tracker-sso-settings")


def sign_in_with_password(page, email: str) -> None:
    """An owner's way around the provider (break-glass): the login page's password link."""
    page.goto("/login")
    page.get_by_role("link", name="Entrar com e-mail e senha").click()
    sign_in(page, email, PASSWORD, go=False)
