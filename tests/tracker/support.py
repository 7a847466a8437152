"""Helpers for the tracker's API tests: every step goes through HTTP."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from tests.conftest import SUPERADMIN_EMAIL
from tests.factories import captured_mail, link_token

API = "/tracker/api/v1"
PASSWORD = "correct-horse-42"
_seq = itertools.count(1)


@dataclass
class Tenant:
    """A registered person, signed in, with the organization and workspace registration made."""

    user_id: str
    email: str
    access_token: str
    refresh_token: str
    org_id: str
    slug: str

    @property
    def headers(self) -> dict:
        return {"Authorization": f"Bearer {self.access_token}"}


def register(
    client,
    *,
    name: str | None = None,
    email: str | None = None,
    password: str = PASSWORD,
    verify: bool = True,
) -> Tenant:
    """Register through the API and, unless ``verify`` is false, follow the e-mailed link."""
    n = next(_seq)
    email = email or f"person{n}@tracker.test"
    with captured_mail() as outbox:
        response = client.post(
            f"{API}/auth/register", json={"name": name or f"Pessoa {n}", "email": email, "password": password}
        )
    assert response.status_code == 201, response.get_json()
    if verify:
        verified = client.post(f"{API}/auth/verify-email", json={"token": link_token(outbox[-1])})
        assert verified.status_code == 204, verified.get_json()
    body = response.get_json()
    headers = {"Authorization": f"Bearer {body['access_token']}"}
    me = client.get(f"{API}/auth/me", headers=headers).get_json()
    workspaces = client.get(f"{API}/workspaces", headers=headers).get_json()["workspaces"]
    return Tenant(
        user_id=body["user"]["id"],
        email=email,
        access_token=body["access_token"],
        refresh_token=body["refresh_token"],
        org_id=me["organizations"][0]["id"],
        slug=workspaces[0]["slug"],
    )


def superadmin(client) -> Tenant:
    return register(client, name="Root", email=SUPERADMIN_EMAIL)


def make_project(client, tenant: Tenant, key: str = "WEB", name: str = "Website") -> dict:
    response = client.post(
        f"{API}/workspaces/{tenant.slug}/projects", json={"name": name, "key": key}, headers=tenant.headers
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def project_url(tenant: Tenant, project: dict) -> str:
    return f"{API}/workspaces/{tenant.slug}/projects/{project['id']}"


def issues_url(tenant: Tenant, project: dict) -> str:
    return project_url(tenant, project) + "/issues"


def make_issue(client, tenant: Tenant, project: dict, headers: dict | None = None, **fields) -> dict:
    fields.setdefault("title", f"Issue {next(_seq)}")
    response = client.post(issues_url(tenant, project), json=fields, headers=headers or tenant.headers)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def statuses(client, tenant: Tenant, project: dict) -> dict[str, dict]:
    """The project's statuses by category."""
    body = client.get(project_url(tenant, project) + "/statuses", headers=tenant.headers).get_json()
    return {s["category"]: s for s in body["statuses"]}


def make_label(client, tenant: Tenant, project: dict, name: str, color: str = "#ff0000") -> dict:
    response = client.post(
        project_url(tenant, project) + "/labels", json={"name": name, "color": color}, headers=tenant.headers
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def add_member(client, owner: Tenant, member: Tenant, role: str = "member") -> None:
    """Invite ``member`` into ``owner``'s organization and accept as ``member``."""
    response = client.post(
        f"{API}/organizations/{owner.org_id}/invitations",
        json={"email": member.email, "role": role},
        headers=owner.headers,
    )
    assert response.status_code == 201, response.get_json()
    accepted = client.post(f"{API}/invitations/{response.get_json()['id']}/accept", headers=member.headers)
    assert accepted.status_code == 201, accepted.get_json()


def assert_error(response, status: int, code: str) -> dict:
    body = response.get_json()
    assert response.status_code == status, body
    assert body["error"] == code, body
    assert isinstance(body["message"], str) and body["message"]
    return body
