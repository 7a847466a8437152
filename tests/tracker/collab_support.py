"""Helpers for the collaboration tests (comments, activity, notifications): HTTP only."""

from __future__ import annotations

from tests.factories import captured_mail, link_token
from tests.tracker.support import API, PASSWORD, Tenant, add_member, issues_url, make_project, register


def issue_url(owner: Tenant, project: dict, key: str) -> str:
    """An issue's URL, through the workspace of the organization's owner (any member uses it)."""
    return f"{issues_url(owner, project)}/{key}"


def comment(client, owner: Tenant, project: dict, key: str, body: str, who: Tenant | None = None) -> dict:
    response = client.post(
        issue_url(owner, project, key) + "/comments", json={"body": body}, headers=(who or owner).headers
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def activity(client, owner: Tenant, project: dict, key: str, who: Tenant | None = None, **query) -> dict:
    response = client.get(
        issue_url(owner, project, key) + "/activity",
        query_string={"per_page": 100, **query},
        headers=(who or owner).headers,
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def kinds(client, owner: Tenant, project: dict, key: str) -> list[tuple]:
    """The issue's history as (kind, field) pairs, oldest first."""
    return [(e["kind"], e["field"]) for e in activity(client, owner, project, key)["activity"]]


def inbox(client, who: Tenant, **query) -> dict:
    response = client.get(f"{API}/notifications", query_string=query, headers=who.headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def received(client, who: Tenant) -> list[tuple[str, str]]:
    """(kind, issue key) of every notification of ``who``, oldest first."""
    return [
        (n["kind"], n["issue"]["key"]) for n in reversed(inbox(client, who, per_page=100)["notifications"])
    ]


def change_address(client, who: Tenant, email: str, name: str | None = None) -> None:
    """``who`` moves to ``email`` (and to ``name``, given one) as a person does: the profile page
    (any account has it), then the link e-mailed to the new address. Leaves the pages signed out."""
    client.delete_cookie("access_token_cookie")
    signed_in = client.post("/login", data={"email": who.email, "senha": PASSWORD})
    assert signed_in.status_code == 302, signed_in.get_data(as_text=True)
    form = {"email": email, "senhaAtual": PASSWORD} | ({"nome": name} if name else {})
    with captured_mail() as outbox:
        response = client.post(
            "/perfil", data=form, headers={"X-CSRF-TOKEN": client.get_cookie("csrf_access_token").value}
        )
    assert response.status_code == 200, response.get_data(as_text=True)
    client.delete_cookie("access_token_cookie")
    link = next(m for m in outbox if m["To"] == email)
    verified = client.post(f"{API}/auth/verify-email", json={"token": link_token(link)})
    assert verified.status_code == 204, verified.get_json()


def watch(client, owner: Tenant, project: dict, key: str, who: Tenant) -> None:
    response = client.post(issue_url(owner, project, key) + "/watch", headers=who.headers)
    assert response.status_code == 204, response.get_json()


def team(client, *roles: str) -> tuple[Tenant, list[Tenant], dict]:
    """An owner, one member per role given (in that order), and a project."""
    owner = register(client)
    people = []
    for role in roles:
        person = register(client)
        add_member(client, owner, person, role)
        people.append(person)
    return owner, people, make_project(client, owner)


def small_plan(client, root: Tenant, owner: Tenant, storage_bytes: int) -> None:
    """Put ``owner``'s organization on a plan with ``storage_bytes`` of storage."""
    created = client.post(
        f"{API}/admin/plans",
        json={
            "id": "small",
            "name": "Small",
            "price_brl": 0,
            "limits": {"members": 10, "projects": 5, "issues": 100, "storage_bytes": storage_bytes},
        },
        headers=root.headers,
    )
    assert created.status_code == 201, created.get_json()
    assigned = client.patch(
        f"{API}/admin/organizations/{owner.org_id}", json={"plan": "small"}, headers=root.headers
    )
    assert assigned.status_code == 200, assigned.get_json()
