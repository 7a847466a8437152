"""An owner adds a webhook in a real browser, keeps the secret shown once, and reads the last
deliveries a real receiver answered (one delivered, one waiting for its retry)."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from extensions import db
from tests.browser.conftest import screenshot, sign_in
from tests.factories import PASSWORD, register_verified
from tests.tracker.test_webhooks import Receiver


def _owner_with_project() -> tuple[str, str]:
    from services.tracker import accounts, workspaces

    user, _access, _refresh = register_verified("Olga Dona", "olga@tracker.test", PASSWORD)
    slug = workspaces.list_workspaces(user)[0].slug
    project = workspaces.create_project(
        user, slug, {"name": "Loja Virtual", "key": "WEB", "description": None}
    )
    db.session.flush()
    return accounts.my_organizations(user)[0].id, (user.id, slug, project.id)


def _issue(owner_id, slug, project_id, title: str) -> None:
    from models.auth import User
    from services.tracker import issues

    issues.create_issue(db.session.get(User, owner_id), slug, project_id, {"title": title})


def test_an_owner_adds_a_webhook_and_reads_its_deliveries(page, committed):
    receiver = Receiver()
    try:
        _org_id, (owner_id, slug, project_id) = committed(_owner_with_project)
        sign_in(page, "olga@tracker.test", PASSWORD)
        page.goto("/tracker/")
        page.get_by_role("link", name="Webhooks").click()
        expect(page.get_by_role("heading", name=re.compile("Webhooks de"))).to_be_visible()
        page.get_by_label("Endereço (URL)").fill(receiver.url)
        page.get_by_label("Tarefa excluída").uncheck()
        page.get_by_role("button", name="Adicionar webhook").click()
        expect(page.get_by_role("status")).to_contain_text("Guarde o segredo agora")
        assert len(page.get_by_label("Segredo", exact=True).input_value()) == 64

        receiver.statuses = [200, 500]
        committed(lambda: _issue(owner_id, slug, project_id, "Checkout não finaliza com Pix"))
        committed(lambda: _issue(owner_id, slug, project_id, "Frete grátis some no carrinho"))
        assert len(receiver.requests) == 2
        page.reload()
        deliveries = page.get_by_role("table", name="Últimas entregas")
        expect(deliveries).to_contain_text("Entregue")
        expect(deliveries).to_contain_text("Aguardando nova tentativa")
        expect(deliveries).to_contain_text("HTTP 500")
        # Reloaded, the page no longer shows the secret.
        expect(page.get_by_label("Segredo", exact=True)).to_have_count(0)
        screenshot(page, "tracker-webhooks")

        page.get_by_role("button", name="Desativar").click()
        expect(page.locator(".webhook h3 .badge")).to_have_text("Desativado")
    finally:
        receiver.close()
