"""Search in a real browser: the box on a project's list, the mode toggle, the results with the
matched words highlighted, and "Tarefas parecidas" on the issue page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import screenshot, sign_in
from tests.factories import PASSWORD, register_verified

pytestmark = pytest.mark.usefixtures("search_indexing")

ISSUES = [
    ("Cobrança duplicada no cartão", "O pagamento aparece duas vezes na fatura do cliente."),
    ("Pagamento recusado pelo banco", "A cobrança volta recusada para cartões de débito."),
    ("Fatura com cobrança repetida", "O cliente viu a mesma cobrança na fatura."),
    ("Tela de login lenta no celular", "O login demora vinte segundos na rede móvel."),
    ("Etiqueta de envio sem CEP", "A expedição imprime a etiqueta sem o CEP."),
    ("Foto do produto não carrega", "A vitrine mostra a imagem quebrada."),
]


def _desk() -> dict:
    from extensions import db
    from models.tracker import Membership, Organization
    from services.tracker import issues, plans, workspaces

    user, _access, _refresh = register_verified("Sara Busca", "sara@tracker.test", PASSWORD)
    organization = db.session.scalar(
        db.select(Organization).join(Membership).where(Membership.user_id == user.id)
    )
    plans.assign_plan(organization, "pro")
    slug = workspaces.list_workspaces(user)[0].slug
    project = workspaces.create_project(user, slug, {"name": "Suporte", "key": "SUP"})
    keys = {
        title: issues.create_issue(user, slug, project.id, {"title": title, "description": text}).key
        for title, text in ISSUES
    }
    return {"slug": slug, "project_id": str(project.id), "keys": keys}


def test_search_from_the_list_with_the_mode_toggle_then_similar_issues(page, committed):
    desk = committed(_desk)
    sign_in(page, "sara@tracker.test", PASSWORD)
    page.goto(f"/tracker/w/{desk['slug']}/p/{desk['project_id']}/issues")
    box = page.get_by_role("search").filter(has=page.get_by_label("Buscar nas tarefas"))
    box.get_by_label("Buscar nas tarefas").fill("pagamento duplicado")
    box.get_by_label("híbrida").check()
    box.get_by_role("button", name="Buscar").click()
    page.wait_for_load_state("load")
    results = page.locator(".search-results li")
    expect(results.first).to_be_visible()
    expect(page.locator(".search-results")).to_contain_text("Fatura com cobrança repetida")
    expect(page.locator(".search-results mark").first).to_be_visible()
    expect(page.get_by_label("híbrida")).to_be_checked()
    screenshot(page, "tracker-search")

    page.get_by_role("link", name=re.compile("Cobrança duplicada no cartão")).click()
    similar = page.locator("#issue-similar")
    expect(similar.get_by_role("heading", name="Tarefas parecidas")).to_be_visible()
    expect(similar).to_contain_text("Fatura com cobrança repetida")
    expect(similar).not_to_contain_text("Tela de login lenta no celular")
