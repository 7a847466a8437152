"""From batch to shelf in a real browser: a planner approves 20 transfers, the operations
project gets its issues, the destination's manager receives from the issue page and the
issue closes."""

from __future__ import annotations

from datetime import date

from playwright.sync_api import expect

from tests.browser.conftest import screenshot, sign_in
from tests.factories import (
    PASSWORD,
    make_loja,
    make_lote,
    make_produto,
    make_rec,
    make_user,
    register_verified,
)


def _operations() -> dict:
    from services.stock import operations
    from services.stock.rules import get_rules
    from services.tracker import organizations, workspaces

    admin, _a, _r = register_verified("Ana Admin", "ana@giro.test", PASSWORD)
    admin.papel = "admin"
    workspace = workspaces.list_workspaces(admin)[0]
    project = workspaces.create_project(admin, workspace.slug, {"name": "Operações", "key": "OPS"})
    operations.configure(get_rules(for_update=True), project.id, admin)
    cd = make_loja(nome="CD Extrema", is_cd=True)
    moema = make_loja(nome="Loja Moema")
    manager = make_user(papel="gerente_loja", loja=moema, email="gm@giro.test", name="Gil Moema")
    invitation = organizations.invite(admin, workspace.organization_id, "gm@giro.test", "member")
    organizations.accept_invitation(manager, invitation.id)
    lote = make_lote(date(2026, 11, 18))
    for i in range(20):
        produto = make_produto(nome=f"Tênis {i:02d}", sku=f"T-{i:02d}", tamanhos=("38",))
        make_rec(lote, produto, cd, moema, quantidade=2, prioridade="alta", score=60 + i)
    make_user(papel="planejador", email="paula@giro.test", name="Paula Planejadora")
    return {"lote": str(lote.id), "slug": workspace.slug, "project": str(project.id)}


def test_approved_transfers_reach_the_shelf_through_the_tracker(page, committed, browser, live_server):
    data = committed(_operations)
    sign_in(page, "paula@giro.test", PASSWORD)
    page.goto(f"/lotes/{data['lote']}")
    page.get_by_label("Selecionar todas as 20 que correspondem ao filtro").check()
    page.get_by_role("button", name="Aprovar selecionadas").click()
    expect(page.locator("#bulk-result")).to_contain_text("20 aprovadas")
    page.get_by_label("Selecionar todas as 20 que correspondem ao filtro").check()
    page.get_by_role("button", name="Executar selecionadas").click()
    expect(page.locator("#bulk-result")).to_contain_text("20 executadas")

    # The store manager finds the work in the tracker and receives it from the issue page.
    context = browser.new_context(
        base_url=live_server, viewport={"width": 1280, "height": 860}, locale="pt-BR"
    )
    manager = context.new_page()
    manager.set_default_timeout(10_000)
    try:
        sign_in(manager, "gm@giro.test", PASSWORD)
        manager.goto(f"/tracker/w/{data['slug']}/p/{data['project']}/issues")
        manager.get_by_role("link", name="Lote 2026-W47 · CD Extrema → Loja Moema · 40 un.").click()
        expect(manager.locator("#issue-transfers tbody tr")).to_have_count(20)
        screenshot(manager, "operations-issue")
        # One arrived short: received on its line; the rest at once.
        manager.get_by_label("Unidades recebidas de Tênis 00 38").fill("1")
        manager.locator("#issue-transfers").get_by_role("button", name="Receber Tênis 00 38").click()
        expect(manager.locator("#issue-transfers tbody tr").first).to_contain_text(
            "recebida (1 un.), faltaram 1"
        )
        manager.get_by_role("button", name="Receber as 19 como enviadas").click()
        expect(manager.locator("#issue-transfers")).not_to_contain_text("Receber")
        expect(manager.locator("#issue-fields")).to_contain_text("Concluído")
    finally:
        context.close()
