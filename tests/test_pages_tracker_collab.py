"""Onboarding and working together through the pages: sign-up, a new organization, comments
(with their permissions and mentions), the issue timeline, watching, and the inbox. Every
outcome is checked back through the REST API or the page a person would open next."""

from __future__ import annotations

import re

import pytest

from tests.factories import captured_mail, link_token
from tests.test_pages_tracker import HX, sign_in
from tests.tracker.collab_support import change_address, comment, inbox, issue_url
from tests.tracker.support import (
    API,
    PASSWORD,
    add_member,
    make_issue,
    make_project,
    register,
    statuses,
)


@pytest.fixture
def team(client):
    """An owner, an admin, two members and a viewer of one organization, a project, an issue."""
    owner = register(client, name="Olga Dona")
    admin = register(client, name="Artur Admin")
    member = register(client, name="Maria Membro")
    other = register(client, name="Nina Nova")
    viewer = register(client, name="Vitor Leitor")
    add_member(client, owner, admin, role="admin")
    add_member(client, owner, member, role="member")
    add_member(client, owner, other, role="member")
    add_member(client, owner, viewer, role="viewer")
    project = make_project(client, owner, key="WEB", name="Website")
    issue = make_issue(client, owner, project, title="Checkout quebra no Safari", priority="medium")
    return {
        "owner": owner,
        "admin": admin,
        "member": member,
        "other": other,
        "viewer": viewer,
        "project": project,
        "issue": issue,
    }


def page_of(team, key: str | None = None) -> str:
    owner, project = team["owner"], team["project"]
    return f"/tracker/w/{owner.slug}/p/{project['id']}/issues/{key or team['issue']['key']}"


def api_comments(client, team) -> list[dict]:
    url = issue_url(team["owner"], team["project"], team["issue"]["key"]) + "/comments"
    response = client.get(url, headers=team["owner"].headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["comments"]


def unread_badge(html: str) -> str:
    found = re.search(r'id="inbox-count"[^>]*>([^<]*)', html)
    assert found, html
    return found.group(1).strip()


# --- sign-up and a new organization ---------------------------------------------------------


def test_sign_up_makes_the_account_its_organization_and_sends_the_confirmation(client):
    form = client.get("/signup")
    assert form.status_code == 200
    assert 'name="password"' in form.get_data(as_text=True)
    with captured_mail() as outbox:
        response = client.post(
            "/signup", data={"name": "Beatriz Nova", "email": "bia@loja.test", "password": PASSWORD}
        )
    html = response.get_data(as_text=True)
    assert response.status_code == 200, html
    assert "Confira seu e-mail" in html and "bia@loja.test" in html
    assert len(outbox) == 1 and outbox[0]["To"] == "bia@loja.test"

    # Signed in at once, owner of an organization with a default workspace.
    tracker = client.get("/tracker/").get_data(as_text=True)
    assert "Beatriz Nova" in tracker and "Proprietário" in tracker
    login = client.post(f"{API}/auth/login", json={"email": "bia@loja.test", "password": PASSWORD})
    headers = {"Authorization": f"Bearer {login.get_json()['access_token']}"}
    me = client.get(f"{API}/auth/me", headers=headers).get_json()
    assert me["email_verified"] is False
    assert [(o["name"], o["role"]) for o in me["organizations"]] == [("Beatriz Nova", "owner")]
    assert len(client.get(f"{API}/workspaces", headers=headers).get_json()["workspaces"]) == 1

    # The e-mailed link proves the address, as the API's would.
    token = link_token(outbox[0])
    assert client.post("/verify-email", data={"token": token}).status_code == 200
    assert client.get(f"{API}/auth/me", headers=headers).get_json()["email_verified"] is True


def test_sign_up_refuses_bad_fields_in_portuguese_and_makes_nothing(client):
    with captured_mail() as outbox:
        response = client.post("/signup", data={"name": "", "email": "not-an-address", "password": "short"})
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert html.count('aria-invalid="true"') == 3
    assert "not-an-address" in html and 'value="short"' not in html
    assert outbox == []
    login = client.post(f"{API}/auth/login", json={"email": "not-an-address", "password": "short"})
    assert login.status_code in (400, 401)


def test_sign_up_with_a_known_address_answers_the_same_and_warns_its_owner(client):
    known = register(client, name="Dona Antiga")
    with captured_mail() as outbox:
        response = client.post("/signup", data={"name": "Outra", "email": known.email, "password": PASSWORD})
    assert response.status_code == 200
    assert "Confira seu e-mail" in response.get_data(as_text=True)
    assert len(outbox) == 1 and "token=" not in outbox[0].get_content()


def test_login_page_offers_sign_up(client):
    assert 'href="/signup"' in client.get("/login").get_data(as_text=True)


def test_a_signed_in_person_creates_an_organization_and_lands_in_its_workspace(client):
    person = register(client, name="Carla Criadora")
    headers = sign_in(client, person)
    index = client.get("/tracker/").get_data(as_text=True)
    assert "Nova organização" in index

    response = client.post("/tracker/organizations", data={"name": "Sapataria Aurora"}, headers=headers)
    assert response.status_code == 303
    assert response.location.startswith("/tracker/w/sapataria-aurora")
    mine = client.get(f"{API}/auth/me", headers=person.headers).get_json()["organizations"]
    assert ("Sapataria Aurora", "owner") in [(o["name"], o["role"]) for o in mine]
    workspace = client.get(response.location)
    assert workspace.status_code == 200 and "Novo projeto" in workspace.get_data(as_text=True)


def test_creating_an_organization_without_a_name_says_so_in_place(client):
    person = register(client)
    headers = sign_in(client, person)
    response = client.post("/tracker/organizations", data={"name": "  "}, headers={**headers, **HX})
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert 'id="organization-form"' in html and 'aria-invalid="true"' in html
    assert len(client.get(f"{API}/auth/me", headers=person.headers).get_json()["organizations"]) == 1


# --- comments -------------------------------------------------------------------------------


def test_a_member_comments_and_the_timeline_shows_it_rendered_safely(client, team):
    headers = sign_in(client, team["member"])
    body = "Reproduzi no **Safari 17**. <script>alert(1)</script>"
    response = client.post(page_of(team) + "/comments", data={"body": body}, headers={**headers, **HX})
    html = response.get_data(as_text=True)
    assert response.status_code == 200, html
    assert html.startswith('\n<section id="issue-timeline"') or 'id="issue-timeline"' in html[:200]
    assert "<strong>Safari 17</strong>" in html and "<script>alert" not in html
    assert [c["body"] for c in api_comments(client, team)] == [body]


def test_an_empty_comment_is_refused_in_place(client, team):
    headers = sign_in(client, team["member"])
    response = client.post(page_of(team) + "/comments", data={"body": "   "}, headers={**headers, **HX})
    assert response.status_code == 422
    assert 'id="comment-body-error"' in response.get_data(as_text=True)
    assert api_comments(client, team) == []


def test_only_the_author_edits_a_comment_and_it_is_marked_edited(client, team):
    written = comment(
        client, team["owner"], team["project"], team["issue"]["key"], "Primeira versão", who=team["member"]
    )
    url = f"{page_of(team)}/comments/{written['id']}"

    # Another member (even the owner) gets no edit control and a refusal.
    headers = sign_in(client, team["owner"])
    page = client.get(page_of(team)).get_data(as_text=True)
    assert f'action="{url}"' not in page
    refused = client.post(url, data={"body": "Sequestrado"}, headers={**headers, **HX})
    assert refused.status_code == 403
    assert "Só o autor pode editar" in refused.get_data(as_text=True)
    assert api_comments(client, team)[0]["body"] == "Primeira versão"

    headers = sign_in(client, team["member"])
    assert f'action="{url}"' in client.get(page_of(team)).get_data(as_text=True)
    edited = client.post(url, data={"body": "Segunda versão"}, headers={**headers, **HX})
    html = edited.get_data(as_text=True)
    assert edited.status_code == 200
    assert "Segunda versão" in html and "(editado)" in html
    stored = api_comments(client, team)[0]
    assert stored["body"] == "Segunda versão" and stored["edited"] is True


@pytest.mark.parametrize(
    ("deleter", "allowed"), [("member", True), ("owner", True), ("admin", True), ("other", False)]
)
def test_who_deletes_a_comment(client, team, deleter, allowed):
    written = comment(
        client, team["owner"], team["project"], team["issue"]["key"], "Apague-me", who=team["member"]
    )
    headers = sign_in(client, team[deleter])
    url = f"{page_of(team)}/comments/{written['id']}/delete"
    assert (f'action="{url}"' in client.get(page_of(team)).get_data(as_text=True)) is allowed
    response = client.post(url, headers={**headers, **HX})
    html = response.get_data(as_text=True)
    if allowed:
        assert response.status_code == 200
        assert "excluiu um comentário" in html and "Apague-me" not in html
        assert api_comments(client, team) == []
    else:
        assert response.status_code == 403
        assert "Só o autor, um dono ou um admin" in html
        assert [c["body"] for c in api_comments(client, team)] == ["Apague-me"]


def test_a_viewer_reads_comments_but_cannot_write_one(client, team):
    comment(client, team["owner"], team["project"], team["issue"]["key"], "Visível para todos")
    headers = sign_in(client, team["viewer"])
    page = client.get(page_of(team)).get_data(as_text=True)
    assert "Visível para todos" in page and 'id="comment-form"' not in page
    response = client.post(page_of(team) + "/comments", data={"body": "Oi"}, headers={**headers, **HX})
    assert response.status_code == 403
    assert len(api_comments(client, team)) == 1


def test_a_plain_form_comment_comes_back_to_the_issue(client, team):
    csrf = sign_in(client, team["member"])["X-CSRF-TOKEN"]
    response = client.post(page_of(team) + "/comments", data={"body": "Sem JavaScript", "csrf_token": csrf})
    assert response.status_code == 303
    assert response.location.endswith(page_of(team) + "#issue-timeline")


# --- mentions and the inbox -----------------------------------------------------------------


def test_the_comment_box_offers_the_organizations_people_to_mention(client, team):
    sign_in(client, team["member"])
    page = client.get(page_of(team)).get_data(as_text=True)
    members = re.search(r'data-members="([^"]*)"', page).group(1)
    for person in ("owner", "admin", "other", "viewer"):
        assert team[person].email in members
    assert "mentions.js" in page


def test_a_mention_reaches_the_inbox_with_an_unread_count_and_is_marked_read(client, team):
    member_headers = sign_in(client, team["member"])
    text = f"@{team['other'].email} pode revisar o checkout?"
    posted = client.post(page_of(team) + "/comments", data={"body": text}, headers={**member_headers, **HX})
    assert posted.status_code == 200

    headers = sign_in(client, team["other"])
    tracker = client.get("/tracker/").get_data(as_text=True)
    assert unread_badge(tracker).startswith("1")
    page = client.get("/tracker/notifications")
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert "Maria Membro" in html and "mencionou você em" in html and team["issue"]["key"] in html
    [notification] = inbox(client, team["other"])["notifications"]
    assert notification["kind"] == "mentioned" and notification["read"] is False

    read = client.post(
        "/tracker/notifications/read", data={"ids": notification["id"]}, headers={**headers, **HX}
    )
    fragment = read.get_data(as_text=True)
    assert read.status_code == 200
    # The navigation's badge is replaced along with the list.
    assert 'id="inbox-count" hx-swap-oob="true"' in fragment and unread_badge(fragment) == ""
    assert inbox(client, team["other"])["unread"] == 0
    assert unread_badge(client.get("/tracker/").get_data(as_text=True)) == ""


def test_mark_all_read_and_the_unread_filter(client, team):
    key = team["issue"]["key"]
    for n in range(3):
        comment(
            client,
            team["owner"],
            team["project"],
            key,
            f"@{team['other'].email} nota {n}",
            who=team["member"],
        )
    headers = sign_in(client, team["other"])
    unread = client.get("/tracker/notifications?unread=1").get_data(as_text=True)
    assert unread.count('class="inbox-item unread"') == 3
    response = client.post("/tracker/notifications/read", data={"all": "1"}, headers={**headers, **HX})
    assert response.status_code == 200
    assert inbox(client, team["other"])["unread"] == 0
    assert "Nenhum aviso não lido" in client.get("/tracker/notifications?unread=1").get_data(as_text=True)
    everything = client.get("/tracker/notifications").get_data(as_text=True)
    assert everything.count('class="inbox-item"') == 3


def test_an_invalid_inbox_filter_is_a_400_page(client, team):
    sign_in(client, team["other"])
    response = client.get("/tracker/notifications?page=0")
    assert response.status_code == 400
    assert "Filtro inválido" in response.get_data(as_text=True)


def test_the_inbox_page_turns_email_off(client, team):
    headers = sign_in(client, team["other"])
    response = client.post(
        "/tracker/notifications/preferences", data={"email": "0"}, headers={**headers, **HX}
    )
    assert response.status_code == 200 and "Preferência salva" in response.get_data(as_text=True)
    prefs = client.get(f"{API}/notifications/preferences", headers=team["other"].headers).get_json()
    assert prefs == {"email": False}
    client.post("/tracker/notifications/preferences", data={"email": "1"}, headers={**headers, **HX})
    assert client.get(f"{API}/notifications/preferences", headers=team["other"].headers).get_json() == {
        "email": True
    }


def test_watching_from_the_issue_page_brings_its_comments_to_the_inbox(client, team):
    headers = sign_in(client, team["other"])
    assert "Acompanhar" in client.get(page_of(team)).get_data(as_text=True)
    response = client.post(page_of(team) + "/watch", data={"watch": "1"}, headers={**headers, **HX})
    assert response.status_code == 200 and "Deixar de acompanhar" in response.get_data(as_text=True)
    comment(client, team["owner"], team["project"], team["issue"]["key"], "Novidade", who=team["member"])
    assert [n["kind"] for n in inbox(client, team["other"])["notifications"]] == ["commented"]

    response = client.post(page_of(team) + "/watch", data={"watch": "0"}, headers={**headers, **HX})
    assert 'aria-pressed="false"' in response.get_data(as_text=True)
    comment(client, team["owner"], team["project"], team["issue"]["key"], "Mais uma", who=team["member"])
    assert len(inbox(client, team["other"])["notifications"]) == 1


# --- the timeline ---------------------------------------------------------------------------


def test_the_timeline_shows_field_changes_between_comments(client, team):
    headers = sign_in(client, team["owner"])
    by_category = statuses(client, team["owner"], team["project"])
    comment(
        client, team["owner"], team["project"], team["issue"]["key"], "Antes da mudança", who=team["member"]
    )
    changed = client.post(
        page_of(team),
        data={"part": "fields", "priority": "urgent", "status_id": by_category["in_progress"]["id"]},
        headers={**headers, **HX},
    )
    assert changed.status_code == 200
    comment(
        client, team["owner"], team["project"], team["issue"]["key"], "Depois da mudança", who=team["member"]
    )

    html = client.get(page_of(team)).get_data(as_text=True)
    timeline = html[html.index('id="issue-timeline"') :]
    created = timeline.index("criou a tarefa")
    before = timeline.index("Antes da mudança")
    priority = timeline.index("mudou a prioridade de")
    status = timeline.index("mudou o status de")
    after = timeline.index("Depois da mudança")
    assert created < before < min(priority, status) < after
    line = timeline[priority : timeline.index("</li>", priority)]
    assert "Média" in line and "Urgente" in line and "Olga Dona" in timeline[created - 200 : created]
    assert "Em andamento" in timeline[status : timeline.index("</li>", status)]


def test_a_long_timeline_shows_its_newest_entries_and_loads_the_older_ones(client, team):
    key = team["issue"]["key"]
    for n in range(55):
        comment(client, team["owner"], team["project"], key, f"Comentário número {n:02d}", who=team["member"])
    sign_in(client, team["member"])
    html = client.get(page_of(team)).get_data(as_text=True)
    assert "Comentário número 54" in html and "Comentário número 05" in html
    assert "Comentário número 04" not in html and "criou a tarefa" not in html
    assert "Mostrar 6 entradas anteriores" in html
    older = client.get(page_of(team) + "/timeline?skip=50", headers=HX).get_data(as_text=True)
    assert "Comentário número 04" in older and "Comentário número 00" in older and "criou a tarefa" in older
    assert "Comentário número 05" not in older and "timeline-older" not in older


# --- isolation ------------------------------------------------------------------------------


def test_another_organization_sees_nothing_of_an_issue_its_comments_or_its_timeline(client, team):
    comment(client, team["owner"], team["project"], team["issue"]["key"], "Segredo da casa")
    outsider = register(client, name="Fora Daqui")
    headers = sign_in(client, outsider)
    for response in (
        client.get(page_of(team)),
        client.get(page_of(team) + "/timeline?skip=0", headers=HX),
        client.post(page_of(team) + "/comments", data={"body": "Oi"}, headers={**headers, **HX}),
        client.post(page_of(team) + "/watch", data={"watch": "1"}, headers={**headers, **HX}),
        client.post(
            f"{page_of(team)}/comments/{api_comments(client, team)[0]['id']}/delete",
            headers={**headers, **HX},
        ),
    ):
        assert response.status_code == 404
        assert "Segredo da casa" not in response.get_data(as_text=True)
    assert len(api_comments(client, team)) == 1
    assert "Segredo" not in client.get("/tracker/notifications").get_data(as_text=True)


def test_a_mention_reads_as_the_persons_name_and_code_keeps_the_address(client, team):
    """Stored as typed (the address notifies the person); shown by name, the address in its
    title. In code the address stays as written, and an address of no member stays as is."""
    member_headers = sign_in(client, team["member"])
    other = team["other"].email
    text = f"@{other} pode revisar? `@{other}` no código; @ninguem@fora.test não é membro."
    posted = client.post(page_of(team) + "/comments", data={"body": text}, headers={**member_headers, **HX})
    assert posted.status_code == 200
    fragment = posted.get_data(as_text=True)
    assert f'<span class="mention" title="{other}">@Nina Nova</span> pode revisar?' in fragment
    assert f"<code>@{other}</code>" in fragment
    assert "@ninguem@fora.test não é membro" in fragment
    page = client.get(page_of(team)).get_data(as_text=True)
    assert f'title="{other}">@Nina Nova</span>' in page


def test_a_mention_keeps_naming_the_person_after_they_change_address(client, team):
    """The page names a mention by who it was written to, with their name of today: after
    they move to another address, and through an edit that keeps the old one."""
    old = team["other"].email
    text = f"@{old} pode revisar? @ninguem@fora.test nunca foi membro."
    member_headers = sign_in(client, team["member"])
    posted = client.post(page_of(team) + "/comments", data={"body": text}, headers={**member_headers, **HX})
    assert posted.status_code == 200
    [created] = api_comments(client, team)

    change_address(client, team["other"], "nina.costa@loja.test", name="Nina Costa")
    sign_in(client, team["member"])
    page = client.get(page_of(team)).get_data(as_text=True)
    assert f'<span class="mention" title="{old}">@Nina Costa</span> pode revisar?' in page
    assert "@ninguem@fora.test nunca foi membro." in page

    # The author edits, keeping the old address and adding the admin: only the admin is told.
    edited = client.post(
        f"{page_of(team)}/comments/{created['id']}",
        data={"body": f"{text} E @{team['admin'].email}?"},
        headers={**sign_in(client, team["member"]), **HX},
    )
    fragment = edited.get_data(as_text=True)
    assert edited.status_code == 200, fragment
    assert f'title="{old}">@Nina Costa</span>' in fragment
    assert f'title="{team["admin"].email}">@Artur Admin</span>' in fragment
    assert [n["kind"] for n in inbox(client, team["other"])["notifications"]] == ["mentioned"]
    assert [n["kind"] for n in inbox(client, team["admin"])["notifications"]] == ["mentioned"]
