"""Real responses of the tracker's lists, each checked against the schema its OpenAPI document declares.

The issue list and the single issue are written without marshmallow (rows shaped
once, encoded by orjson); these checks keep them, and every other list, what the
document promises.
"""

from __future__ import annotations

import orjson
import pytest

from tests.openapi_responses import assert_documented
from tests.tracker.collab_support import comment
from tests.tracker.custom_fields_support import make_field, on_plan
from tests.tracker.support import (
    API,
    add_member,
    issues_url,
    make_issue,
    make_label,
    make_project,
    project_url,
    register,
    statuses,
)

PROJECT = "/tracker/api/v1/workspaces/{slug}/projects/{project_id}"
ISSUES = PROJECT + "/issues"
ISSUE = ISSUES + "/{key}"
ORGANIZATION = "/tracker/api/v1/organizations/{organization_id}"


@pytest.fixture
def world(client):
    """An enterprise organization with a second member, labels, custom fields, a parent with a
    sub-issue, a relation, comments, notifications, a webhook with deliveries and audit entries."""
    owner = register(client, name="Dona Ana")
    member = register(client, name="Beto")
    add_member(client, owner, member)
    on_plan(client, owner, "enterprise")
    hook = client.post(
        f"{API}/organizations/{owner.org_id}/webhooks",
        json={"url": "https://hooks.example.com/giro", "events": ["issue.created", "comment.created"]},
        headers=owner.headers,
    )
    assert hook.status_code == 201, hook.get_json()
    project = make_project(client, owner)
    bug = make_label(client, owner, project, "bug")
    ux = make_label(client, owner, project, "ux", "#00ff00")
    make_field(client, owner, project, name="Cliente", type="text")
    make_field(client, owner, project, name="Pontos", type="number")
    make_field(client, owner, project, name="Entrega", type="date")
    make_field(client, owner, project, name="Canal", type="select", options=["loja", "site"])
    make_field(client, owner, project, name="Lojas", type="multi_select", options=["sp", "rj", "bh"])
    parent = make_issue(
        client,
        owner,
        project,
        title="Checkout lento no calçado",
        description="Passos: abrir o carrinho",
        type="bug",
        priority="high",
        assignee_id=member.user_id,
        label_ids=[ux["id"], bug["id"]],
        start_date="2026-11-01",
        due_date="2026-12-01",
        estimate=5,
        custom_fields={
            "cliente": "Loja 12",
            "pontos": 2.5,
            "entrega": "2026-12-05",
            "canal": "site",
            "lojas": ["rj", "sp"],
        },
    )
    child = make_issue(client, owner, project, title="Medir o carrinho", parent_id=parent["id"])
    plain = make_issue(client, owner, project, title="Sem nada")
    related = client.post(
        f"{issues_url(owner, project)}/{parent['key']}/relations",
        json={"type": "blocks", "related_issue_id": plain["id"]},
        headers=owner.headers,
    )
    assert related.status_code == 201, related.get_json()
    comment(client, owner, project, parent["key"], "Vi isso na loja 12, @Beto")
    comment(client, owner, project, parent["key"], "Segue o print", who=member)
    return {
        "owner": owner,
        "member": member,
        "project": project,
        "parent": parent,
        "child": child,
        "plain": plain,
        "hook": hook.get_json(),
        "labels": (bug, ux),
    }


def _get(client, url, who, **query):
    response = client.get(url, query_string=query, headers=who.headers)
    assert response.status_code == 200, response.get_json()
    return response


def test_the_issue_list_answers_its_documented_shape(client, world):
    owner, project = world["owner"], world["project"]
    response = _get(client, issues_url(owner, project), owner)
    assert_documented(client, "tracker", ISSUES, response)
    body = response.get_json()
    assert body["total"] == 3 and body["page"] == 1 and body["per_page"] == 50
    by_key = {issue["key"]: issue for issue in body["issues"]}
    parent = by_key[world["parent"]["key"]]
    # The list shows the issue exactly as its creation answered it (same schema, other route).
    assert parent == {**world["parent"], "children_count": 1, "updated_at": parent["updated_at"]}
    assert [label["name"] for label in parent["labels"]] == ["bug", "ux"]
    assert parent["assignee"] == {"id": world["member"].user_id, "name": "Beto", "avatar_url": None}
    assert parent["created_by"] == {"id": owner.user_id, "name": "Dona Ana"}
    assert parent["status"] == {
        key: statuses(client, owner, project)["todo"][key] for key in ("id", "name", "color", "category")
    }
    assert parent["custom_fields"] == {
        "cliente": "Loja 12",
        "pontos": 2.5,
        "entrega": "2026-12-05",
        "canal": "site",
        "lojas": ["sp", "rj"],
    }
    assert parent["priority"] == "high" and parent["estimate"] == 5 and parent["due_date"] == "2026-12-01"
    child = by_key[world["child"]["key"]]
    assert child["parent_id"] == parent["id"] and child["assignee"] is None and child["labels"] == []
    assert child["custom_fields"] == dict.fromkeys(("cliente", "pontos", "entrega", "canal", "lojas"))
    # Filtered and paged, the same shape.
    filtered = _get(
        client,
        issues_url(owner, project),
        owner,
        assignee_id=world["member"].user_id,
        label_id=world["labels"][0]["id"],
    )
    assert_documented(client, "tracker", ISSUES, filtered)
    assert [issue["key"] for issue in filtered.get_json()["issues"]] == [parent["key"]]
    empty = _get(client, issues_url(owner, project), owner, q="nada de nada", per_page=1)
    assert_documented(client, "tracker", ISSUES, empty)
    assert empty.get_json() == {"issues": [], "total": 0, "page": 1, "per_page": 1}


def test_one_issue_answers_its_documented_shape(client, world):
    owner, project, parent = world["owner"], world["project"], world["parent"]
    response = _get(client, f"{issues_url(owner, project)}/{parent['key'].lower()}", world["member"])
    assert_documented(client, "tracker", ISSUE, response)
    body = response.get_json()
    assert body["children"] == [{k: world["child"][k] for k in ("id", "key", "title")}]
    assert body["children_count"] == 1
    [relation] = body["relations"]
    assert relation["type"] == "blocks"
    assert relation["issue"] == {k: world["plain"][k] for k in ("id", "key", "title")}
    # The PATCH answer (marshmallow's dump) and the read agree on every member.
    patched = client.patch(f"{issues_url(owner, project)}/{parent['key']}", json={}, headers=owner.headers)
    assert patched.get_json() == body
    inverse = _get(client, f"{issues_url(owner, project)}/{world['plain']['key']}", owner).get_json()
    assert inverse["relations"][0]["type"] == "is_blocked_by"
    assert inverse["relations"][0]["issue"]["key"] == parent["key"]


def test_every_other_tracker_list_answers_its_documented_shape(client, world):
    owner, member, project = world["owner"], world["member"], world["project"]
    slug, org = owner.slug, owner.org_id
    checks = [
        (PROJECT.rsplit("/", 1)[0], f"{API}/workspaces/{slug}/projects", owner),
        (PROJECT + "/labels", project_url(owner, project) + "/labels", owner),
        (PROJECT + "/statuses", project_url(owner, project) + "/statuses", owner),
        (PROJECT + "/custom-fields", project_url(owner, project) + "/custom-fields", owner),
        (ORGANIZATION + "/members", f"{API}/organizations/{org}/members", owner),
        (ISSUE + "/comments", f"{issues_url(owner, project)}/{world['parent']['key']}/comments", owner),
        (ISSUE + "/activity", f"{issues_url(owner, project)}/{world['parent']['key']}/activity", owner),
        ("/tracker/api/v1/notifications", f"{API}/notifications", member),
        (ORGANIZATION + "/webhooks", f"{API}/organizations/{org}/webhooks", owner),
        (
            ORGANIZATION + "/webhooks/{webhook_id}/deliveries",
            f"{API}/organizations/{org}/webhooks/{world['hook']['id']}/deliveries",
            owner,
        ),
        (ORGANIZATION + "/audit-log", f"{API}/organizations/{org}/audit-log", owner),
    ]
    for template, url, who in checks:
        response = _get(client, url, who)
        assert_documented(client, "tracker", template, response)
        members = [value for value in response.get_json().values() if isinstance(value, list)]
        assert members and members[0], f"{template} answered an empty list: nothing was checked"


def test_the_check_bites_on_a_fast_body_that_breaks_the_schema(client, world):
    owner, project = world["owner"], world["project"]
    response = _get(client, issues_url(owner, project), owner)
    body = response.get_json()
    body["issues"][0]["status"] = {"id": body["issues"][0]["status"]["id"]}
    response.set_data(orjson.dumps(body))
    with pytest.raises(AssertionError, match="status"):
        assert_documented(client, "tracker", ISSUES, response)
