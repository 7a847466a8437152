"""Isolation: another organization's resources answer 404 NOT_FOUND on every route, whatever the verb."""

from __future__ import annotations

import pytest

from tests.tracker.support import (
    API,
    add_member,
    assert_error,
    make_issue,
    make_label,
    make_project,
    register,
    statuses,
)

WS = "/workspaces/{slug}"
PROJECT = WS + "/projects/{project_id}"
ISSUE = PROJECT + "/issues/{key}"

ROUTES = [
    ("get", "/organizations/{org_id}/members", None),
    ("patch", "/organizations/{org_id}/members/{member_id}", {"role": "viewer"}),
    ("delete", "/organizations/{org_id}/members/{member_id}", None),
    ("get", "/organizations/{org_id}/invitations", None),
    ("post", "/organizations/{org_id}/invitations", {"email": "x@x.test"}),
    ("delete", "/organizations/{org_id}/invitations/{invitation_id}", None),
    ("post", "/invitations/{invitation_id}/accept", None),
    ("post", "/workspaces", {"organization_id": "{org_id}", "name": "Intruder"}),
    ("get", WS, None),
    ("patch", WS, {"name": "Taken over"}),
    ("get", WS + "/projects", None),
    ("post", WS + "/projects", {"name": "Intruder", "key": "INT"}),
    ("get", PROJECT, None),
    ("patch", PROJECT, {"name": "Taken over"}),
    ("delete", PROJECT, None),
    ("get", PROJECT + "/statuses", None),
    ("post", PROJECT + "/statuses", {"name": "S", "color": "#000000", "category": "todo"}),
    ("patch", PROJECT + "/statuses/{status_id}", {"name": "S"}),
    ("delete", PROJECT + "/statuses/{status_id}", None),
    ("get", PROJECT + "/labels", None),
    ("post", PROJECT + "/labels", {"name": "L", "color": "#000000"}),
    ("delete", PROJECT + "/labels/{label_id}", None),
    ("get", PROJECT + "/issues", None),
    ("post", PROJECT + "/issues", {"title": "Intruder"}),
    ("get", ISSUE, None),
    ("patch", ISSUE, {"title": "Taken over"}),
    ("delete", ISSUE, None),
    ("post", ISSUE + "/relations", {"type": "relates_to", "related_issue_id": "{other_issue_id}"}),
    ("delete", ISSUE + "/relations/{relation_id}", None),
]


@pytest.fixture
def world(client):
    """Organization A with one of everything, and B, a stranger to it."""
    a = register(client)
    member = register(client)
    add_member(client, a, member)
    project = make_project(client, a)
    issue = make_issue(client, a, project, title="Secret")
    other = make_issue(client, a, project)
    relation = client.post(
        f"{API}/workspaces/{a.slug}/projects/{project['id']}/issues/{issue['key']}/relations",
        json={"type": "relates_to", "related_issue_id": other["id"]},
        headers=a.headers,
    ).get_json()
    invitation = client.post(
        f"{API}/organizations/{a.org_id}/invitations",
        json={"email": "pending@tracker.test"},
        headers=a.headers,
    ).get_json()
    ids = {
        "org_id": a.org_id,
        "member_id": member.user_id,
        "invitation_id": invitation["id"],
        "slug": a.slug,
        "project_id": project["id"],
        "status_id": statuses(client, a, project)["backlog"]["id"],
        "label_id": make_label(client, a, project, "secret")["id"],
        "key": issue["key"],
        "other_issue_id": other["id"],
        "relation_id": relation["id"],
    }
    return a, register(client), ids


def _fill(value, ids):
    if isinstance(value, str):
        return value.format(**ids)
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    return value


@pytest.mark.parametrize(("method", "path", "body"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_other_organizations_are_not_found(client, world, method, path, body):
    a, b, ids = world
    response = getattr(client, method)(API + path.format(**ids), json=_fill(body, ids), headers=b.headers)
    assert_error(response, 404, "NOT_FOUND")
    # Nothing changed for A.
    issue = client.get(API + ISSUE.format(**ids), headers=a.headers)
    assert issue.status_code == 200 and issue.get_json()["title"] == "Secret"
    assert len(issue.get_json()["relations"]) == 1


def test_a_project_reached_through_ones_own_workspace_slug_is_still_not_found(client, world):
    _a, b, ids = world
    url = f"{API}/workspaces/{b.slug}/projects/{ids['project_id']}"
    for method in ("get", "patch", "delete"):
        assert_error(
            getattr(client, method)(
                url, json={"name": "x"} if method == "patch" else None, headers=b.headers
            ),
            404,
            "NOT_FOUND",
        )
    assert_error(client.get(url + "/issues", headers=b.headers), 404, "NOT_FOUND")


def test_lists_show_only_ones_own_organizations(client, world):
    a, b, _ids = world
    assert [
        w["slug"] for w in client.get(f"{API}/workspaces", headers=b.headers).get_json()["workspaces"]
    ] == [b.slug]
    organizations = client.get(f"{API}/organizations", headers=b.headers).get_json()["organizations"]
    assert [o["id"] for o in organizations] == [b.org_id]
    me = client.get(f"{API}/auth/me", headers=b.headers).get_json()
    assert [o["id"] for o in me["organizations"]] == [b.org_id]
    assert client.get(f"{API}/invitations", headers=b.headers).get_json()["invitations"] == []
    assert a.org_id != b.org_id


def test_unknown_and_malformed_ids_are_not_found(client, world):
    a, _b, ids = world
    for path in (
        "/workspaces/no-such-workspace",
        f"/workspaces/{a.slug}/projects/not-a-uuid",
        f"/workspaces/{a.slug}/projects/00000000-0000-0000-0000-000000000000/issues",
        f"/organizations/{ids['slug']}/members",
    ):
        assert_error(client.get(API + path, headers=a.headers), 404, "NOT_FOUND")


@pytest.mark.parametrize(("method", "path", "body"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_every_route_needs_a_bearer_token(client, world, method, path, body):
    _a, _b, ids = world
    response = getattr(client, method)(API + path.format(**ids), json=_fill(body, ids))
    assert_error(response, 401, "UNAUTHORIZED")
    assert response.headers["WWW-Authenticate"] == "Bearer"
