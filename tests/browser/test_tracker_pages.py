"""The tracker in a real browser: the board (drag, keyboard, quick create), the list, the issue page."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import screenshot, sign_in
from tests.factories import PASSWORD, register_verified

API = "/tracker/api/v1"


def _team() -> dict:
    """Two organizations: Olga's, with a project, issues and a member, and Bruno's."""
    from services.tracker import issues, organizations, workspaces

    owner, _access, _refresh = register_verified("Olga Dona", "olga@tracker.test", PASSWORD)
    other, _access, _refresh = register_verified("Bruno Fora", "bruno@tracker.test", PASSWORD)
    slug = workspaces.list_workspaces(owner)[0].slug
    org_id = workspaces.list_workspaces(owner)[0].organization_id
    invitation = organizations.invite(owner, org_id, "carla@tracker.test", "member")
    member, _access, _refresh = register_verified("Carla Membro", "carla@tracker.test", PASSWORD)
    organizations.accept_invitation(member, invitation.id)
    project = workspaces.create_project(
        owner, slug, {"name": "Loja Virtual", "key": "WEB", "description": "Site e app da rede"}
    )
    by_category = {s.category: s for s in workspaces.list_statuses(owner, slug, project.id)}
    label = workspaces.create_label(owner, slug, project.id, {"name": "Checkout", "color": "#b42318"})
    seeds = [
        ("Checkout quebra no Safari", "urgent", "bug", "todo", [label.id], member.id),
        ("Filtro de numeração no catálogo", "high", "story", "todo", [], None),
        ("Fotos da coleção verão", "medium", "task", "in_progress", [], member.id),
        ("Cupom de primeira compra", "low", "task", "backlog", [], None),
        ("Migrar frete para nova API", "none", "task", "done", [], None),
    ]
    for title, priority, kind, category, labels, assignee in seeds:
        issues.create_issue(
            owner,
            slug,
            project.id,
            {
                "title": title,
                "priority": priority,
                "type": kind,
                "status_id": by_category[category].id,
                "label_ids": labels,
                "assignee_id": assignee,
                "description": "Passos:\n\n1. abrir o **carrinho**\n2. pagar\n\n<script>alert(1)</script>",
            },
        )
    return {
        "slug": slug,
        "project": str(project.id),
        "statuses": {category: str(status.id) for category, status in by_category.items()},
        "other_slug": workspaces.list_workspaces(other)[0].slug,
    }


def _api_issue(page, data: dict, key: str) -> dict:
    login = page.request.post(f"{API}/auth/login", data={"email": "olga@tracker.test", "password": PASSWORD})
    token = login.json()["access_token"]
    response = page.request.get(
        f"{API}/workspaces/{data['slug']}/projects/{data['project']}/issues/{key}",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status == 200
    return response.json()


def _board(data: dict) -> str:
    return f"/tracker/w/{data['slug']}/p/{data['project']}/board"


def test_drag_a_card_across_columns_and_it_persists(page, committed):
    data = committed(_team)
    sign_in(page, "olga@tracker.test", PASSWORD)
    page.get_by_role("link", name="Tracker").click()
    expect(page.get_by_role("heading", name="Novo espaço de trabalho")).to_be_visible()
    screenshot(page, "tracker-home")
    page.get_by_role("link", name="Olga Dona").click()
    expect(page.get_by_role("link", name=re.compile("Loja Virtual"))).to_contain_text("4 abertas de 5")
    screenshot(page, "tracker-workspace")
    page.get_by_role("link", name=re.compile("Loja Virtual")).click()
    expect(page).to_have_url(re.compile(r"/board$"))
    todo, progress = data["statuses"]["todo"], data["statuses"]["in_progress"]
    card = page.locator("#card-WEB-1")
    expect(page.locator(f"#cards-{todo}")).to_contain_text("Checkout quebra no Safari")
    screenshot(page, "tracker-board")

    with page.expect_response(lambda r: r.url.endswith("/WEB-1/move")) as moved:
        card.locator(".issue-card-title").drag_to(page.locator(f"#cards-{progress}"))
    assert moved.value.status == 200
    expect(page.locator(f"#cards-{progress} #card-WEB-1")).to_be_visible()
    expect(page.locator(f'[data-count-for="{progress}"]')).to_have_text("2")
    assert _api_issue(page, data, "WEB-1")["status"]["category"] == "in_progress"
    page.reload()
    expect(page.locator(f"#cards-{progress} #card-WEB-1")).to_be_visible()


def test_a_refused_drop_puts_the_card_back(page, committed):
    data = committed(_team)
    sign_in(page, "carla@tracker.test", PASSWORD)
    page.goto(_board(data))
    todo, progress = data["statuses"]["todo"], data["statuses"]["in_progress"]

    def suspend() -> None:
        from extensions import db
        from models.tracker import Organization

        for organization in db.session.query(Organization).all():
            organization.suspended = True

    committed(suspend)
    with page.expect_response(lambda r: r.url.endswith("/WEB-1/move")) as moved:
        page.locator("#card-WEB-1 .issue-card-title").drag_to(page.locator(f"#cards-{progress}"))
    assert moved.value.status == 403
    expect(page.locator("#board-error").get_by_role("alert")).to_contain_text("suspensa")
    expect(page.locator(f"#cards-{todo} #card-WEB-1")).to_be_visible()
    expect(page.locator(f'[data-count-for="{todo}"]')).to_have_text("2")

    def status_category() -> str:
        from extensions import db
        from models.tracker import Issue

        return db.session.query(Issue).filter_by(number=1).one().status.category

    assert committed(status_category) == "todo"


def test_keyboard_users_move_cards_with_the_status_select(page, committed):
    data = committed(_team)
    sign_in(page, "olga@tracker.test", PASSWORD)
    page.goto(_board(data))
    done = data["statuses"]["done"]
    select = page.get_by_label("Status de WEB-2")
    select.focus()
    with page.expect_response(lambda r: r.url.endswith("/WEB-2/move")):
        select.select_option(label="Concluído")
    expect(page.locator(f"#cards-{done} #card-WEB-2")).to_be_visible()
    expect(page.get_by_label("Status de WEB-2")).to_be_focused()
    expect(page.get_by_role("status").filter(has_text="WEB-2")).to_contain_text("Concluído")
    assert _api_issue(page, data, "WEB-2")["status"]["category"] == "done"


def test_quick_create_adds_a_card_to_the_column(page, committed):
    data = committed(_team)
    sign_in(page, "olga@tracker.test", PASSWORD)
    page.goto(_board(data))
    backlog = data["statuses"]["backlog"]
    field = page.get_by_label("Nova tarefa em Backlog")
    field.fill("Trocar banner da home")
    field.press("Enter")
    expect(page.locator(f"#cards-{backlog}")).to_contain_text("Trocar banner da home")
    expect(field).to_have_value("")
    expect(page.locator(f'[data-count-for="{backlog}"]')).to_have_text("2")
    assert _api_issue(page, data, "WEB-6")["status"]["category"] == "backlog"
    field.press("Enter")
    expect(page.locator(f"#cards-{backlog}").locator("xpath=..").get_by_role("alert")).to_contain_text(
        "Campo obrigatório"
    )


def test_a_member_of_another_organization_cannot_open_the_board(page, committed):
    data = committed(_team)
    sign_in(page, "bruno@tracker.test", PASSWORD)
    response = page.goto(_board(data))
    assert response.status == 404
    expect(page.get_by_role("alert")).to_contain_text("Página não encontrada")
    expect(page.locator("main")).not_to_contain_text("Loja Virtual")
    expect(page.locator("main")).not_to_contain_text("Checkout")
    page.goto("/tracker/")
    expect(page.locator("main")).not_to_contain_text(data["slug"])


def test_list_filters_are_in_the_url(page, committed):
    data = committed(_team)
    sign_in(page, "olga@tracker.test", PASSWORD)
    page.goto(_board(data))
    page.get_by_role("link", name="Lista").click()
    expect(page.locator("#issue-results")).to_contain_text("5 tarefas")
    page.wait_for_load_state("load")  # htmx binds the filters once the page has loaded
    page.locator("summary", has_text="Prioridade").click()
    page.get_by_label("Urgente").check()
    page.get_by_label("Alta", exact=True).check()
    expect(page.locator("#issue-results")).to_contain_text("2 tarefas")
    expect(page).to_have_url(re.compile(r"priority=urgent.*priority=high"))
    page.get_by_label("Ordenar por").select_option("priority")
    page.get_by_label("Direção").select_option("asc")
    expect(page).to_have_url(re.compile(r"order=asc"))
    rows = page.locator("#issue-results tbody tr")
    expect(rows.first).to_contain_text("WEB-2")
    screenshot(page, "tracker-list")
    shared = page.url
    page.goto(shared)
    expect(page.locator("#issue-results")).to_contain_text("2 tarefas")
    expect(page.locator("#issue-results tbody tr").first).to_contain_text("WEB-2")
    page.get_by_label("Buscar tarefas").fill("safari")
    expect(page.locator("#issue-results")).to_contain_text("1 tarefa")


def test_issue_page_edits_in_place(page, committed):
    data = committed(_team)
    sign_in(page, "olga@tracker.test", PASSWORD)
    page.goto(f"/tracker/w/{data['slug']}/p/{data['project']}/issues/WEB-1")
    expect(page.locator(".markdown strong")).to_have_text("carrinho")
    expect(page.locator(".markdown")).to_contain_text("<script>alert(1)</script>")
    assert page.locator(".markdown script").count() == 0

    title = page.get_by_label("Título", exact=True)
    title.fill("Checkout falha no Safari 17")
    with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/WEB-1")):
        title.press("Tab")
    page.get_by_label("Prioridade").select_option("high")
    expect(page.locator("#issue-fields")).to_contain_text("Alterações salvas")

    page.get_by_label("Chave da outra tarefa").fill("WEB-3")
    page.get_by_role("button", name="Relacionar").click()
    expect(page.locator("#issue-relations")).to_contain_text("WEB-3")
    page.get_by_label("Título da subtarefa").fill("Reproduzir no iPhone")
    page.get_by_role("button", name="Adicionar").click()
    expect(page.locator("#issue-children")).to_contain_text("Reproduzir no iPhone")
    screenshot(page, "tracker-issue")

    issue = _api_issue(page, data, "WEB-1")
    assert issue["title"] == "Checkout falha no Safari 17"
    assert issue["priority"] == "high"
    assert [r["issue"]["key"] for r in issue["relations"]] == ["WEB-3"]
    assert [c["title"] for c in issue["children"]] == ["Reproduzir no iPhone"]


def test_board_on_a_phone(page, committed):
    data = committed(_team)
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, "carla@tracker.test", PASSWORD)
    page.goto(_board(data))
    expect(page.get_by_role("heading", name="A fazer")).to_be_visible()
    # Columns scroll sideways inside the board; the page itself does not.
    screenshot(page, "tracker-board-phone")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.evaluate("document.getElementById('board-columns').scrollWidth") > 390
    for path, name in (
        (f"/tracker/w/{data['slug']}/p/{data['project']}/issues", "tracker-list-phone"),
        (f"/tracker/w/{data['slug']}/p/{data['project']}/issues/WEB-1", "tracker-issue-phone"),
    ):
        page.goto(path)
        screenshot(page, name)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, path


def test_owner_invites_changes_a_role_and_the_invitee_accepts(page, committed):
    data = committed(_team)
    sign_in(page, "olga@tracker.test", PASSWORD)
    page.goto("/tracker/")
    page.get_by_role("link", name="Pessoas").click()
    expect(page.get_by_role("heading", name=re.compile("Pessoas de"))).to_be_visible()
    page.wait_for_load_state("load")  # htmx binds the role selects once the page has loaded

    with page.expect_response(lambda r: r.url.endswith("/role")) as changed:
        page.get_by_label("Papel de Carla Membro").select_option("admin")
    assert changed.value.status == 200
    expect(page.get_by_label("Papel de Carla Membro")).to_have_value("admin")

    page.get_by_label("E-mail").fill("dani@tracker.test")
    page.locator("#invite-role").select_option("viewer")
    page.get_by_role("button", name="Enviar convite").click()
    expect(page.get_by_role("status")).to_contain_text("Convite criado para dani@tracker.test")
    expect(page.locator("#invitations")).to_contain_text("dani@tracker.test")
    screenshot(page, "tracker-people")

    def dani():

        register_verified("Dani Nova", "dani@tracker.test", PASSWORD)

    committed(dani)
    page.locator("header").get_by_role("button", name="Sair").click()
    sign_in(page, "dani@tracker.test", PASSWORD)
    page.goto("/tracker/")
    expect(page.locator("#my-invitations")).to_contain_text("Olga Dona")
    page.get_by_role("button", name="Aceitar").click()
    expect(page.locator(f'a[href="/tracker/w/{data["slug"]}"]')).to_be_visible()
    expect(page.locator("#my-invitations")).to_have_count(0)


def test_settings_reorder_the_board_columns(page, committed):
    data = committed(_team)
    sign_in(page, "olga@tracker.test", PASSWORD)
    page.goto(_board(data))
    page.get_by_role("link", name="Configurações").click()
    expect(page.get_by_role("heading", name="Status (colunas do quadro)")).to_be_visible()
    page.wait_for_load_state("load")  # htmx binds the forms once the page has loaded
    page.get_by_label("Nome", exact=True).fill("Em revisão")
    page.locator("#new-st-cat").select_option("in_progress")
    page.get_by_role("button", name="Adicionar status").click()
    expect(page.locator("#statuses tbody tr")).to_have_count(6)
    with page.expect_response(lambda r: r.url.endswith("/move")):
        page.get_by_role("button", name="Mover Em revisão para antes").click()
    with page.expect_response(lambda r: r.url.endswith("/move")):
        page.get_by_role("button", name="Mover Em revisão para antes").click()
    screenshot(page, "tracker-settings")
    page.goto(_board(data))
    headings = page.locator(".board-column h2").all_inner_texts()
    names = [h.split("\n")[0].strip() for h in headings]
    assert names.index("Em revisão") == names.index("Concluído") - 1, names
