"""Tracker and admin pages through the test client: tenants, roles, fragments, the same rules as the API."""

from __future__ import annotations

import pytest

from tests.tracker.support import (
    API,
    PASSWORD,
    Tenant,
    add_member,
    issues_url,
    make_issue,
    make_label,
    make_project,
    register,
    statuses,
    superadmin,
)

HX = {"HX-Request": "true"}


def sign_in(client, tenant: Tenant) -> dict:
    """Sign in through the login page; returns the headers a page write needs (CSRF)."""
    client.delete_cookie("access_token_cookie")
    response = client.post("/login", data={"email": tenant.email, "senha": PASSWORD})
    assert response.status_code == 302, response.get_data(as_text=True)
    return {"X-CSRF-TOKEN": client.get_cookie("csrf_access_token").value}


def board_path(tenant: Tenant, project: dict) -> str:
    return f"/tracker/w/{tenant.slug}/p/{project['id']}/board"


def list_path(tenant: Tenant, project: dict) -> str:
    return f"/tracker/w/{tenant.slug}/p/{project['id']}/issues"


def api_issue(client, tenant: Tenant, project: dict, key: str) -> dict:
    response = client.get(f"{issues_url(tenant, project)}/{key}", headers=tenant.headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


@pytest.fixture
def team(client):
    """An owner with a project and two issues, a viewer and a member of the same organization."""
    owner = register(client, name="Olga Dona")
    viewer = register(client, name="Vitor Leitor")
    member = register(client, name="Maria Membro")
    add_member(client, owner, viewer, role="viewer")
    add_member(client, owner, member, role="member")
    project = make_project(client, owner, key="WEB", name="Website")
    by_category = statuses(client, owner, project)
    first = make_issue(
        client, owner, project, title="Checkout quebra no Safari", priority="urgent", type="bug"
    )
    second = make_issue(
        client,
        owner,
        project,
        title="Nova vitrine de sandálias",
        status_id=by_category["in_progress"]["id"],
        description="**Importante** <script>alert('x')</script> [clique](javascript:alert(1)) [ok](https://giro.test)",
    )
    return {
        "owner": owner,
        "viewer": viewer,
        "member": member,
        "project": project,
        "statuses": by_category,
        "first": first,
        "second": second,
    }


def test_anonymous_people_go_to_login(client):
    response = client.get("/tracker/")
    assert response.status_code == 302
    assert response.headers["Location"].startswith("/login")
    assert client.get("/admin/").status_code == 302


def test_index_lists_only_my_workspaces(client, team):
    outsider = register(client, name="Otto Fora")
    sign_in(client, team["owner"])
    body = client.get("/tracker/").get_data(as_text=True)
    assert f"/tracker/w/{team['owner'].slug}" in body
    assert outsider.slug not in body
    # The plan as the pages name it, not its id.
    assert '<span class="badge">Gratuito</span>' in body and '<span class="badge">free</span>' not in body
    workspace = client.get(f"/tracker/w/{team['owner'].slug}").get_data(as_text=True)
    assert "Website" in workspace and "WEB" in workspace
    assert "2 abertas de 2" in workspace


def test_board_groups_cards_by_status_and_htmx_gets_only_the_columns(client, team):
    sign_in(client, team["owner"])
    path = board_path(team["owner"], team["project"])
    full = client.get(path)
    assert full.status_code == 200
    body = full.get_data(as_text=True)
    assert "<html" in body and "Sortable.min.js" in body
    assert "HX-Request" in full.headers["Vary"]
    todo = team["statuses"]["todo"]["id"]
    in_progress = team["statuses"]["in_progress"]["id"]
    todo_column = body.split(f'id="cards-{todo}"')[1].split("</ol>")[0]
    progress_column = body.split(f'id="cards-{in_progress}"')[1].split("</ol>")[0]
    assert "WEB-1" in todo_column and "WEB-2" not in todo_column
    assert "WEB-2" in progress_column
    fragment = client.get(path + "?q=safari", headers=HX)
    text = fragment.get_data(as_text=True)
    assert "<html" not in text and 'id="board-columns"' in text
    assert "WEB-1" in text and "WEB-2" not in text
    assert "HX-Request" in fragment.headers["Vary"]


def test_the_board_filters_to_my_issues(client, team):
    owner, project = team["owner"], team["project"]
    make_issue(client, owner, project, title="Revisar fotos", assignee_id=team["member"].user_id)
    sign_in(client, team["member"])
    mine = client.get(board_path(owner, project) + "?mine=1", headers=HX).get_data(as_text=True)
    assert "WEB-3" in mine and "WEB-1" not in mine and "WEB-2" not in mine
    full = client.get(board_path(owner, project) + "?mine=1").get_data(as_text=True)
    assert 'name="mine" value="1" checked' in full


def test_moving_a_card_changes_the_status_through_the_service(client, team):
    csrf = sign_in(client, team["owner"])
    done = team["statuses"]["done"]["id"]
    url = f"{list_path(team['owner'], team['project'])}/WEB-1/move"
    response = client.post(url, data={"status_id": done}, headers={**csrf, **HX})
    assert response.status_code == 200
    assert 'id="card-WEB-1"' in response.get_data(as_text=True)
    assert api_issue(client, team["owner"], team["project"], "WEB-1")["status"]["id"] == done

    refused = client.post(url, data={"status_id": "not-a-status"}, headers={**csrf, **HX})
    assert refused.status_code == 422
    other = make_project(client, team["owner"], key="APP", name="App")
    foreign_status = statuses(client, team["owner"], other)["todo"]["id"]
    refused = client.post(url, data={"status_id": foreign_status}, headers={**csrf, **HX})
    assert refused.status_code == 422
    assert "Status inexistente neste projeto" in refused.get_data(as_text=True)
    assert api_issue(client, team["owner"], team["project"], "WEB-1")["status"]["id"] == done

    # Without JavaScript the status form posts and comes back to the board.
    plain = client.post(
        url, data={"status_id": team["statuses"]["todo"]["id"], "csrf_token": csrf["X-CSRF-TOKEN"]}
    )
    assert plain.status_code == 303
    assert plain.headers["Location"].endswith(board_path(team["owner"], team["project"]))


def test_writes_need_the_csrf_token(client, team):
    sign_in(client, team["owner"])
    url = f"{list_path(team['owner'], team['project'])}/WEB-1/move"
    response = client.post(url, data={"status_id": team["statuses"]["done"]["id"]}, headers=HX)
    assert response.status_code == 400
    assert api_issue(client, team["owner"], team["project"], "WEB-1")["status"]["category"] == "todo"


def test_quick_create_puts_a_card_in_the_column(client, team):
    csrf = sign_in(client, team["owner"])
    in_progress = team["statuses"]["in_progress"]["id"]
    response = client.post(
        list_path(team["owner"], team["project"]),
        data={"title": "Trocar fotos da home", "status_id": in_progress, "source": "board"},
        headers={**csrf, **HX},
    )
    assert response.status_code == 201
    assert "Trocar fotos da home" in response.get_data(as_text=True)
    created = api_issue(client, team["owner"], team["project"], "WEB-3")
    assert created["title"] == "Trocar fotos da home"
    assert created["status"]["id"] == in_progress

    empty = client.post(
        list_path(team["owner"], team["project"]),
        data={"title": "", "status_id": in_progress, "source": "board"},
        headers={**csrf, **HX},
    )
    assert empty.status_code == 422
    assert empty.headers["HX-Retarget"] == "find .form-error"
    assert "Campo obrigatório" in empty.get_data(as_text=True)


def test_viewers_see_no_edit_controls_and_their_writes_are_refused(client, team):
    csrf = sign_in(client, team["viewer"])
    owner, project = team["owner"], team["project"]
    board = client.get(board_path(owner, project)).get_data(as_text=True)
    assert "WEB-1" in board
    assert "quick-create" not in board and "card-status" not in board and "Sortable.min.js" not in board
    assert "Somente leitura" in board
    issue_page = client.get(f"{list_path(owner, project)}/WEB-1").get_data(as_text=True)
    assert (
        "title-input" not in issue_page
        and "Excluir issue" not in issue_page
        and "Editar descrição" not in issue_page
    )

    move = client.post(
        f"{list_path(owner, project)}/WEB-1/move",
        data={"status_id": team["statuses"]["done"]["id"]},
        headers={**csrf, **HX},
    )
    assert move.status_code == 403
    assert "só permite leitura" in move.get_data(as_text=True)
    edit = client.post(
        f"{list_path(owner, project)}/WEB-1",
        data={"part": "title", "title": "Hackeado"},
        headers={**csrf, **HX},
    )
    assert edit.status_code == 403
    create = client.post(
        list_path(owner, project), data={"title": "Não deveria", "source": "board"}, headers={**csrf, **HX}
    )
    assert create.status_code == 403
    delete = client.post(f"{list_path(owner, project)}/WEB-1/delete", headers={**csrf, **HX})
    assert delete.status_code == 403
    first = api_issue(client, owner, project, "WEB-1")
    assert first["title"] == "Checkout quebra no Safari"
    assert first["status"]["category"] == "todo"
    total = client.get(issues_url(owner, project), headers=owner.headers).get_json()["total"]
    assert total == 2


def test_members_of_another_organization_get_404_everywhere(client, team):
    outsider = register(client, name="Otto Fora")
    csrf = sign_in(client, outsider)
    owner, project = team["owner"], team["project"]
    for path in (
        f"/tracker/w/{owner.slug}",
        board_path(owner, project),
        list_path(owner, project),
        f"{list_path(owner, project)}/WEB-1",
        f"/tracker/w/{outsider.slug}/p/{project['id']}/board",
        f"/tracker/w/{owner.slug}/p/not-a-uuid/board",
    ):
        response = client.get(path)
        assert response.status_code == 404, path
        body = response.get_data(as_text=True)
        assert "Website" not in body and "Checkout" not in body
    move = client.post(
        f"{list_path(owner, project)}/WEB-1/move",
        data={"status_id": team["statuses"]["done"]["id"]},
        headers={**csrf, **HX},
    )
    assert move.status_code == 404
    assert api_issue(client, owner, project, "WEB-1")["status"]["category"] == "todo"


def test_suspended_organizations_answer_403(client, team):
    root = superadmin(client)
    response = client.patch(
        f"{API}/admin/organizations/{team['owner'].org_id}", json={"suspended": True}, headers=root.headers
    )
    assert response.status_code == 200
    sign_in(client, team["member"])
    board = client.get(board_path(team["owner"], team["project"]))
    assert board.status_code == 403
    assert "suspensa" in board.get_data(as_text=True)


def test_list_applies_every_filter_and_is_shareable(client, team):
    owner, project = team["owner"], team["project"]
    label = make_label(client, owner, project, "Mobile", "#7a5af8")
    make_issue(client, owner, project, title="Safari no iPad", priority="high", label_ids=[label["id"]])
    make_issue(
        client, owner, project, title="Safari lento", priority="low", assignee_id=team["member"].user_id
    )
    sign_in(client, owner)
    path = list_path(owner, project)

    by_priority = client.get(f"{path}?priority=urgent&priority=high", headers=HX).get_data(as_text=True)
    assert "WEB-1" in by_priority and "WEB-3" in by_priority
    assert "WEB-2" not in by_priority and "WEB-4" not in by_priority
    assert "2 tarefas" in by_priority

    by_label = client.get(f"{path}?label_id={label['id']}", headers=HX).get_data(as_text=True)
    assert "WEB-3" in by_label and "WEB-1" not in by_label
    by_assignee = client.get(f"{path}?assignee_id={team['member'].user_id}", headers=HX).get_data(
        as_text=True
    )
    assert "WEB-4" in by_assignee and "WEB-3" not in by_assignee
    by_status = client.get(f"{path}?status_id={team['statuses']['in_progress']['id']}", headers=HX)
    assert "WEB-2" in by_status.get_data(as_text=True) and "WEB-1" not in by_status.get_data(as_text=True)
    by_type = client.get(f"{path}?type=bug", headers=HX).get_data(as_text=True)
    assert "WEB-1" in by_type and "WEB-2" not in by_type

    sorted_page = client.get(f"{path}?q=safari&order_by=priority&order=asc&per_page=25")
    body = sorted_page.get_data(as_text=True)
    assert "<html" in body
    assert body.index("WEB-4") < body.index("WEB-3") < body.index("WEB-1")
    # The shared URL shows the filters it carries.
    assert 'value="safari"' in body
    assert '<option value="priority" selected' in body and '<option value="asc" selected' in body

    paged = client.get(f"{path}?per_page=1&order_by=created_at&order=asc&page=2", headers=HX).get_data(
        as_text=True
    )
    assert "WEB-2" in paged and "WEB-1" not in paged
    assert "Página 2 de 4" in paged
    assert "per_page=1" in paged and "page=3" in paged

    bad = client.get(f"{path}?priority=soon")
    assert bad.status_code == 400
    assert "Filtro inválido" in bad.get_data(as_text=True)


def test_issue_page_renders_markdown_safely(client, team):
    sign_in(client, team["owner"])
    body = client.get(f"{list_path(team['owner'], team['project'])}/WEB-2").get_data(as_text=True)
    assert "<strong>Importante</strong>" in body
    assert "<script>alert" not in body
    assert 'href="javascript:' not in body
    assert 'href="https://giro.test" rel="noopener noreferrer nofollow"' in body


def test_inline_edits_go_through_the_service(client, team):
    owner, project = team["owner"], team["project"]
    label = make_label(client, owner, project, "Checkout", "#b42318")
    csrf = sign_in(client, owner)
    url = f"{list_path(owner, project)}/WEB-1"

    title = client.post(
        url, data={"part": "title", "title": "Checkout falha no Safari 17"}, headers={**csrf, **HX}
    )
    assert title.status_code == 200
    assert 'id="issue-title"' in title.get_data(as_text=True) and "<html" not in title.get_data(as_text=True)

    fields = client.post(
        url,
        data={
            "part": "fields",
            "labels_present": "1",
            "status_id": team["statuses"]["in_progress"]["id"],
            "priority": "high",
            "type": "bug",
            "assignee_id": team["member"].user_id,
            "label_ids": label["id"],
            "start_date": "2026-11-20",
            "due_date": "2026-11-30",
            "estimate": "3",
            "parent_key": "",
        },
        headers={**csrf, **HX},
    )
    assert fields.status_code == 200
    assert "Alterações salvas" in fields.get_data(as_text=True)
    issue = api_issue(client, owner, project, "WEB-1")
    assert issue["title"] == "Checkout falha no Safari 17"
    assert issue["priority"] == "high"
    assert issue["status"]["category"] == "in_progress"
    assert issue["assignee"]["id"] == team["member"].user_id
    assert [lbl["name"] for lbl in issue["labels"]] == ["Checkout"]
    assert issue["due_date"] == "2026-11-30" and issue["estimate"] == 3

    description = client.post(
        url, data={"part": "description", "description": "# Passos\n1. abrir"}, headers={**csrf, **HX}
    )
    assert "<h1>Passos</h1>" in description.get_data(as_text=True)

    bad_dates = client.post(
        url,
        data={"part": "fields", "start_date": "2026-12-10", "due_date": "2026-12-01"},
        headers={**csrf, **HX},
    )
    assert bad_dates.status_code == 422
    assert "O prazo não pode ser anterior ao início" in bad_dates.get_data(as_text=True)
    empty_title = client.post(url, data={"part": "title", "title": ""}, headers={**csrf, **HX})
    assert empty_title.status_code == 422
    assert "Campo obrigatório" in empty_title.get_data(as_text=True)
    bad_parent = client.post(url, data={"part": "fields", "parent_key": "WEB-999"}, headers={**csrf, **HX})
    assert bad_parent.status_code == 422
    assert api_issue(client, owner, project, "WEB-1")["due_date"] == "2026-11-30"

    parent = client.post(url, data={"part": "fields", "parent_key": "web-2"}, headers={**csrf, **HX})
    assert parent.status_code == 200
    assert api_issue(client, owner, project, "WEB-1")["parent_id"] == team["second"]["id"]


def test_sub_issues_relations_and_delete(client, team):
    owner, project = team["owner"], team["project"]
    csrf = sign_in(client, owner)
    url = f"{list_path(owner, project)}/WEB-1"

    child = client.post(
        list_path(owner, project),
        data={"title": "Reproduzir no iOS", "parent_id": team["first"]["id"], "source": "children"},
        headers={**csrf, **HX},
    )
    assert child.status_code == 200
    assert 'id="issue-children"' in child.get_data(as_text=True) and "Reproduzir no iOS" in child.get_data(
        as_text=True
    )
    assert [c["key"] for c in api_issue(client, owner, project, "WEB-1")["children"]] == ["WEB-3"]

    related = client.post(
        f"{url}/relations", data={"type": "blocks", "related_key": "web-2"}, headers={**csrf, **HX}
    )
    assert related.status_code == 200
    assert "bloqueia" in related.get_data(as_text=True)
    inverse = api_issue(client, owner, project, "WEB-2")["relations"]
    assert [(r["type"], r["issue"]["key"]) for r in inverse] == [("is_blocked_by", "WEB-1")]

    again = client.post(
        f"{url}/relations", data={"type": "relates_to", "related_key": "WEB-2"}, headers={**csrf, **HX}
    )
    assert again.status_code == 409
    assert "já estão relacionadas" in again.get_data(as_text=True)
    unknown = client.post(
        f"{url}/relations", data={"type": "blocks", "related_key": "ZZZ-1"}, headers={**csrf, **HX}
    )
    assert unknown.status_code == 422

    relation_id = api_issue(client, owner, project, "WEB-1")["relations"][0]["id"]
    removed = client.post(f"{url}/relations/{relation_id}/delete", headers={**csrf, **HX})
    assert removed.status_code == 200
    assert api_issue(client, owner, project, "WEB-2")["relations"] == []

    deleted = client.post(f"{url}/delete", headers={**csrf, **HX})
    assert deleted.headers["HX-Redirect"] == board_path(owner, project)
    gone = client.get(f"{issues_url(owner, project)}/WEB-3", headers=owner.headers)
    assert gone.status_code == 404


def test_workspace_and_project_creation(client, team):
    owner = team["owner"]
    csrf = sign_in(client, owner)
    created = client.post(
        "/tracker/workspaces",
        data={"organization_id": owner.org_id, "name": "Lojas Físicas"},
        headers={**csrf, **HX},
    )
    assert created.status_code == 200
    slug = created.headers["HX-Redirect"].rsplit("/", 1)[1]
    bad = client.post(
        f"/tracker/w/{slug}/projects", data={"name": "Vitrines", "key": "1X"}, headers={**csrf, **HX}
    )
    assert bad.status_code == 422
    assert "começando por uma letra" in bad.get_data(as_text=True)
    project = client.post(
        f"/tracker/w/{slug}/projects", data={"name": "Vitrines", "key": "vit"}, headers={**csrf, **HX}
    )
    assert "/board" in project.headers["HX-Redirect"]
    duplicate = client.post(
        f"/tracker/w/{slug}/projects", data={"name": "Outra", "key": "VIT"}, headers={**csrf, **HX}
    )
    assert duplicate.status_code == 409
    assert "Já existe um projeto com essa chave" in duplicate.get_data(as_text=True)
    projects = client.get(f"{API}/workspaces/{slug}/projects", headers=owner.headers).get_json()["projects"]
    assert [p["key"] for p in projects] == ["VIT"]

    csrf = sign_in(client, team["member"])
    refused = client.post(
        f"/tracker/w/{slug}/projects", data={"name": "X", "key": "XX"}, headers={**csrf, **HX}
    )
    assert refused.status_code == 403
    assert "novo projeto" not in client.get(f"/tracker/w/{slug}").get_data(as_text=True).lower()


# --- admin ---------------------------------------------------------------------------------------


def test_admin_pages_are_for_superadmins_only(client, team):
    sign_in(client, team["owner"])
    for path in ("/admin/", "/admin/users", "/admin/organizations", "/admin/plans", "/admin/workspaces"):
        assert client.get(path).status_code == 403, path
    assert "/admin/" not in client.get("/tracker/").get_data(as_text=True)
    csrf = sign_in(client, team["owner"])
    refused = client.post(
        f"/admin/users/{team['member'].user_id}", data={"banned": "true"}, headers={**csrf, **HX}
    )
    assert refused.status_code == 403

    root = superadmin(client)
    sign_in(client, root)
    stats = client.get("/admin/")
    body = stats.get_data(as_text=True)
    assert stats.status_code == 200
    assert 'href="/admin/"' in body and "chart.umd.min.js" in body
    assert "Organizações no plano" in body and "<table" in body


def test_admin_bans_and_restores_a_user(client, team):
    root = superadmin(client)
    csrf = sign_in(client, root)
    found = client.get("/admin/users?q=maria", headers=HX).get_data(as_text=True)
    assert team["member"].email in found and team["owner"].email not in found
    response = client.post(
        f"/admin/users/{team['member'].user_id}", data={"banned": "true"}, headers={**csrf, **HX}
    )
    assert response.status_code == 200
    assert "Bloqueado" in response.get_data(as_text=True)
    login = client.post(f"{API}/auth/login", json={"email": team["member"].email, "password": PASSWORD})
    assert login.status_code == 403
    unknown = client.post("/admin/users/not-a-uuid", data={"banned": "true"}, headers=csrf)
    assert unknown.status_code == 404 and "Página não encontrada" in unknown.get_data(as_text=True)
    self_ban = client.post(f"/admin/users/{root.user_id}", data={"banned": "true"}, headers={**csrf, **HX})
    assert self_ban.status_code == 403
    assert "não pode bloquear" in self_ban.get_data(as_text=True)
    client.post(f"/admin/users/{team['member'].user_id}", data={"banned": "false"}, headers={**csrf, **HX})
    granted = client.post(
        f"/admin/users/{team['member'].user_id}", data={"superadmin": "true"}, headers={**csrf, **HX}
    )
    assert "Superadmin" in granted.get_data(as_text=True)
    assert (
        client.post(
            f"{API}/auth/login", json={"email": team["member"].email, "password": PASSWORD}
        ).status_code
        == 200
    )


def test_admin_changes_plans_and_organizations(client, team):
    root = superadmin(client)
    csrf = sign_in(client, root)
    bad = client.post("/admin/plans", data={"id": "X", "name": ""}, headers={**csrf, **HX})
    assert bad.status_code == 422
    assert 'id="new-plan-id-error"' in bad.get_data(as_text=True)
    created = client.post(
        "/admin/plans",
        data={
            "id": "business",
            "name": "Business",
            "price_brl": "490",
            "limits.members": "50",
            "limits.projects": "20",
            "limits.issues": "10000",
            "limits.storage_bytes.valor": "1,5",
            "limits.storage_bytes.unidade": "GB",
            "features.sso": "on",
        },
        headers={**csrf, **HX},
    )
    assert created.status_code == 200 and "HX-Redirect" in created.headers
    plans = client.get(f"{API}/admin/plans", headers=root.headers).get_json()["plans"]
    business = next(p for p in plans if p["id"] == "business")
    assert business["features"]["sso"] is True and business["features"]["audit_log"] is False
    assert business["limits"]["members"] == 50
    # Storage is typed in MB or GB (a comma as the decimal mark) and stored in bytes.
    assert business["limits"]["storage_bytes"] == 1536 * 1024 * 1024

    edited = client.post(
        "/admin/plans/business",
        data={"name": "Business+", "price_brl": "590", "limits.members": "60", "features.audit_log": "on"},
        headers={**csrf, **HX},
    )
    assert edited.status_code == 200 and "Plano salvo" in edited.get_data(as_text=True)
    plans = client.get(f"{API}/admin/plans", headers=root.headers).get_json()["plans"]
    business = next(p for p in plans if p["id"] == "business")
    assert business["name"] == "Business+" and business["limits"]["members"] == 60
    assert business["features"]["audit_log"] is True and business["features"]["sso"] is False

    org_url = f"/admin/organizations/{team['owner'].org_id}"
    changed = client.post(org_url, data={"plan": "business"}, headers={**csrf, **HX})
    assert changed.status_code == 200 and 'value="business" selected' in changed.get_data(as_text=True)
    unknown = client.post(org_url, data={"plan": "nope"}, headers={**csrf, **HX})
    assert unknown.status_code == 422
    assert "Plano desconhecido" in unknown.get_data(as_text=True)
    suspended = client.post(org_url, data={"suspended": "true"}, headers={**csrf, **HX})
    assert "Suspensa" in suspended.get_data(as_text=True)
    orgs = client.get(f"{API}/admin/organizations?plan=business", headers=root.headers).get_json()
    assert orgs["total"] == 1 and orgs["organizations"][0]["suspended"] is True
    listed = client.get("/admin/organizations?plan=business", headers=HX).get_data(as_text=True)
    assert "1 organização" in listed


def test_admin_renames_workspaces(client, team):
    root = superadmin(client)
    csrf = sign_in(client, root)
    workspace_id = client.get(
        f"{API}/workspaces/{team['owner'].slug}", headers=team["owner"].headers
    ).get_json()["id"]
    listed = client.get(f"/admin/workspaces?organization_id={team['owner'].org_id}").get_data(as_text=True)
    assert team["owner"].slug in listed and root.slug not in listed
    renamed = client.post(
        f"/admin/workspaces/{workspace_id}",
        data={"name": "Time Web", "slug": "time-web"},
        headers={**csrf, **HX},
    )
    assert renamed.status_code == 200 and 'value="time-web"' in renamed.get_data(as_text=True)
    taken = client.post(
        f"/admin/workspaces/{workspace_id}",
        data={"name": "Time Web", "slug": root.slug},
        headers={**csrf, **HX},
    )
    assert taken.status_code == 409
    assert "Já existe um espaço de trabalho com esse endereço" in taken.get_data(as_text=True)
    assert client.get(f"{API}/workspaces/time-web", headers=team["owner"].headers).status_code == 200


def test_the_new_issue_page_works_without_javascript(client, team):
    owner, project = team["owner"], team["project"]
    csrf = sign_in(client, owner)
    form = client.get(f"{list_path(owner, project)}/new")
    assert form.status_code == 200 and 'name="title"' in form.get_data(as_text=True)
    token = csrf["X-CSRF-TOKEN"]
    missing = client.post(list_path(owner, project), data={"title": "", "csrf_token": token})
    assert missing.status_code == 422
    assert 'id="new-title-error"' in missing.get_data(as_text=True)
    created = client.post(
        list_path(owner, project),
        data={
            "title": "Banner de Black Friday",
            "priority": "high",
            "type": "story",
            "status_id": team["statuses"]["backlog"]["id"],
            "description": "Texto do **banner**",
            "csrf_token": token,
        },
    )
    assert created.status_code == 303
    assert created.headers["Location"].endswith(f"{list_path(owner, project)}/WEB-3")
    issue = api_issue(client, owner, project, "WEB-3")
    assert (issue["priority"], issue["type"], issue["status"]["category"]) == ("high", "story", "backlog")
    assert issue["description"] == "Texto do **banner**"
    sign_in(client, team["viewer"])
    assert "Nova tarefa" not in client.get(board_path(owner, project)).get_data(as_text=True)
    refused = client.get(f"{list_path(owner, project)}/new")
    assert refused.status_code == 403
    assert "só permite leitura" in refused.get_data(as_text=True)


def test_owners_create_labels_from_the_issue_page(client, team):
    owner, project = team["owner"], team["project"]
    csrf = sign_in(client, owner)
    labels_url = f"/tracker/w/{owner.slug}/p/{project['id']}/labels"
    created = client.post(
        labels_url,
        data={"issue_key": "WEB-1", "name": "Pagamento", "color": "#7a5af8"},
        headers={**csrf, **HX},
    )
    assert created.status_code == 200
    assert 'id="issue-fields"' in created.get_data(as_text=True) and "Pagamento" in created.get_data(
        as_text=True
    )
    duplicate = client.post(
        labels_url,
        data={"issue_key": "WEB-1", "name": "Pagamento", "color": "#7a5af8"},
        headers={**csrf, **HX},
    )
    assert duplicate.status_code == 409
    bad_color = client.post(
        labels_url, data={"issue_key": "WEB-1", "name": "X", "color": "roxo"}, headers={**csrf, **HX}
    )
    assert bad_color.status_code == 422
    assert "Use uma cor como #1a2b3c" in bad_color.get_data(as_text=True)
    names = [
        lbl["name"]
        for lbl in client.get(
            f"{API}/workspaces/{owner.slug}/projects/{project['id']}/labels", headers=owner.headers
        ).get_json()["labels"]
    ]
    assert names == ["Pagamento"]

    csrf = sign_in(client, team["member"])
    page = client.get(f"{list_path(owner, project)}/WEB-1").get_data(as_text=True)
    assert "Nova etiqueta" not in page
    refused = client.post(
        labels_url, data={"issue_key": "WEB-1", "name": "Outra", "color": "#000000"}, headers={**csrf, **HX}
    )
    assert refused.status_code == 403


def test_a_new_organization_gets_its_first_steps_until_they_are_taken(client, team):
    """Project, colleague, task: the owner of a new organization sees the three steps with
    those taken marked; once all are taken, or to a member who does not run it, none."""
    newcomer = register(client, name="Nina Nova")
    sign_in(client, newcomer)
    home = client.get("/tracker/").get_data(as_text=True)
    assert "Primeiros passos" in home and "0 de 3" in home
    assert f"/o/{newcomer.org_id}/members" in home
    project = make_project(client, newcomer, key="OPS", name="Operações")
    home = client.get("/tracker/").get_data(as_text=True)
    assert "1 de 3" in home and '<li class="done"><a' in home
    add_member(client, newcomer, team["member"])
    make_issue(client, newcomer, project, title="Primeira tarefa")
    assert "Primeiros passos" not in client.get("/tracker/").get_data(as_text=True)
    # A member sees the organization, not the steps of running it (their own organization's
    # steps are theirs: they run it).
    sign_in(client, team["member"])
    home = client.get("/tracker/").get_data(as_text=True)
    assert "Nina Nova" in home and f'id="steps-{newcomer.org_id}"' not in home
