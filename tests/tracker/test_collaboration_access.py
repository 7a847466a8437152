"""Creating an organization, and isolation of every collaboration route between organizations."""

from __future__ import annotations

import pytest

from tests.tracker.collab_support import comment, inbox, issue_url, received
from tests.tracker.support import (
    API,
    add_member,
    assert_error,
    make_issue,
    make_project,
    register,
)

ISSUE = "/workspaces/{slug}/projects/{project_id}/issues/{key}"
ROUTES = [
    ("get", ISSUE + "/comments", None),
    ("post", ISSUE + "/comments", {"body": "intruso"}),
    ("patch", ISSUE + "/comments/{comment_id}", {"body": "intruso"}),
    ("delete", ISSUE + "/comments/{comment_id}", None),
    ("get", ISSUE + "/activity", None),
    ("post", ISSUE + "/watch", None),
    ("delete", ISSUE + "/watch", None),
]


# --- POST /organizations ----------------------------------------------------------------------


def test_a_signed_in_person_creates_an_organization_they_own(client):
    person = register(client)
    response = client.post(f"{API}/organizations", json={"name": "  Loja Açaí  "}, headers=person.headers)
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    assert created["name"] == "Loja Açaí" and created["slug"] == "loja-acai"
    assert (created["role"], created["plan"], created["suspended"]) == ("owner", "free", False)
    workspace = created["workspace"]
    assert workspace["organization_id"] == created["id"] and workspace["name"] == "Loja Açaí"
    mine = client.get(f"{API}/auth/me", headers=person.headers).get_json()["organizations"]
    assert [o["id"] for o in mine] == [person.org_id, created["id"]]
    slugs = [
        w["slug"] for w in client.get(f"{API}/workspaces", headers=person.headers).get_json()["workspaces"]
    ]
    assert workspace["slug"] in slugs
    members = client.get(f"{API}/organizations/{created['id']}/members", headers=person.headers).get_json()
    assert [(m["user"]["id"], m["role"]) for m in members["members"]] == [(person.user_id, "owner")]
    # Work starts at once, within the free plan's limits (3 projects).
    for n in range(3):
        client.post(
            f"{API}/workspaces/{workspace['slug']}/projects",
            json={"name": f"P{n}", "key": f"P{n}X"},
            headers=person.headers,
        )
    fourth = client.post(
        f"{API}/workspaces/{workspace['slug']}/projects",
        json={"name": "P3", "key": "PQX"},
        headers=person.headers,
    )
    body = assert_error(fourth, 402, "PLAN_LIMIT_REACHED")
    assert (body["resource"], body["limit"]) == ("projects", 3)


def test_the_same_name_twice_gets_distinct_slugs(client):
    person = register(client)
    first = client.post(f"{API}/organizations", json={"name": "Equipe"}, headers=person.headers).get_json()
    second = client.post(f"{API}/organizations", json={"name": "Equipe"}, headers=person.headers).get_json()
    assert first["slug"] != second["slug"]
    assert first["workspace"]["slug"] != second["workspace"]["slug"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "name"),
        ({"name": "   "}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"name": 5}, "name"),
        ({"name": "A", "plan": "pro"}, "plan"),
    ],
    ids=["missing", "blank", "too-long", "not-a-string", "unknown-field"],
)
def test_organization_create_validation(client, body, field):
    person = register(client)
    response = client.post(f"{API}/organizations", json=body, headers=person.headers)
    assert field in {d["field"] for d in assert_error(response, 400, "VALIDATION_ERROR")["details"]}
    assert len(client.get(f"{API}/auth/me", headers=person.headers).get_json()["organizations"]) == 1


def test_organization_create_needs_a_bearer_token(client):
    assert_error(client.post(f"{API}/organizations", json={"name": "X"}), 401, "UNAUTHORIZED")


# --- isolation ----------------------------------------------------------------------------------


@pytest.fixture
def world(client):
    """Organization A with an issue, a comment and a watcher; B, a stranger to it."""
    a = register(client)
    project = make_project(client, a)
    issue = make_issue(client, a, project, title="Secret")
    created = comment(client, a, project, issue["key"], "segredo")
    ids = {"slug": a.slug, "project_id": project["id"], "key": issue["key"], "comment_id": created["id"]}
    return a, register(client), project, issue, ids


@pytest.mark.parametrize(("method", "path", "body"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_other_organizations_are_not_found(client, world, method, path, body):
    a, b, project, issue, ids = world
    response = getattr(client, method)(API + path.format(**ids), json=body, headers=b.headers)
    assert_error(response, 404, "NOT_FOUND")
    comments = client.get(issue_url(a, project, issue["key"]) + "/comments", headers=a.headers).get_json()
    assert [c["body"] for c in comments["comments"]] == ["segredo"]
    history = client.get(issue_url(a, project, issue["key"]) + "/activity", headers=a.headers).get_json()
    assert [e["kind"] for e in history["activity"]] == ["created", "comment_added"]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_every_route_needs_a_bearer_token(client, world, method, path, body):
    *_, ids = world
    assert_error(getattr(client, method)(API + path.format(**ids), json=body), 401, "UNAUTHORIZED")


def test_a_stranger_watching_or_mentioned_hears_nothing(client, world):
    a, b, project, issue, _ids = world
    assert_error(
        client.post(issue_url(a, project, issue["key"]) + "/watch", headers=b.headers), 404, "NOT_FOUND"
    )
    comment(client, a, project, issue["key"], f"@{b.email} olhe")
    assert received(client, b) == []


def test_one_inbox_spans_my_organizations_and_only_mine(client):
    a, b = register(client), register(client)
    both = register(client)
    add_member(client, a, both)
    add_member(client, b, both)
    in_a = make_issue(client, a, make_project(client, a, key="AAA"), assignee_id=both.user_id)
    in_b = make_issue(client, b, make_project(client, b, key="BBB"), assignee_id=both.user_id)
    assert received(client, both) == [("assigned", in_a["key"]), ("assigned", in_b["key"])]
    assert inbox(client, a)["total"] == inbox(client, b)["total"] == 0
    notification = inbox(client, both)["notifications"][0]["id"]
    # Marking someone else's notification read does nothing.
    assert (
        client.post(f"{API}/notifications/read", json={"ids": [notification]}, headers=a.headers).status_code
        == 204
    )
    assert inbox(client, both)["unread"] == 2
