"""Relations: inverses, no self or duplicate relation, no blocking cycle, deletion of both sides."""

from __future__ import annotations

import pytest

from tests.tracker.support import assert_error, issues_url, make_issue, make_label, make_project, register

INVERSES = {
    "blocks": "is_blocked_by",
    "is_blocked_by": "blocks",
    "relates_to": "relates_to",
    "duplicates": "duplicates",
}


@pytest.fixture
def trio(client):
    tenant = register(client)
    project = make_project(client, tenant)
    issues = [make_issue(client, tenant, project, title=f"Issue {n}") for n in range(1, 4)]
    return tenant, project, issues


def _relate(client, tenant, project, issue, other, relation_type):
    return client.post(
        f"{issues_url(tenant, project)}/{issue['key']}/relations",
        json={"type": relation_type, "related_issue_id": other["id"]},
        headers=tenant.headers,
    )


def _relations(client, tenant, project, issue):
    return client.get(f"{issues_url(tenant, project)}/{issue['key']}", headers=tenant.headers).get_json()[
        "relations"
    ]


@pytest.mark.parametrize("relation_type", sorted(INVERSES))
def test_each_type_creates_its_inverse(client, trio, relation_type):
    tenant, project, (a, b, _) = trio
    response = _relate(client, tenant, project, a, b, relation_type)
    assert response.status_code == 201
    body = response.get_json()
    assert body["type"] == relation_type
    assert body["issue"] == {"id": b["id"], "key": b["key"], "title": b["title"]}
    assert [(r["id"], r["type"], r["issue"]["key"]) for r in _relations(client, tenant, project, a)] == [
        (body["id"], relation_type, b["key"])
    ]
    assert [(r["type"], r["issue"]["key"]) for r in _relations(client, tenant, project, b)] == [
        (INVERSES[relation_type], a["key"])
    ]


def test_no_relation_to_itself(client, trio):
    tenant, project, (a, _, _) = trio
    assert_error(_relate(client, tenant, project, a, a, "relates_to"), 409, "CONFLICT")


def test_no_second_relation_between_the_same_pair(client, trio):
    tenant, project, (a, b, _) = trio
    assert _relate(client, tenant, project, a, b, "blocks").status_code == 201
    assert_error(_relate(client, tenant, project, a, b, "blocks"), 409, "CONFLICT")
    assert_error(_relate(client, tenant, project, a, b, "relates_to"), 409, "CONFLICT")
    assert_error(_relate(client, tenant, project, b, a, "is_blocked_by"), 409, "CONFLICT")


def test_no_blocking_cycle(client, trio):
    tenant, project, (a, b, c) = trio
    assert _relate(client, tenant, project, a, b, "blocks").status_code == 201
    assert _relate(client, tenant, project, c, b, "is_blocked_by").status_code == 201  # b blocks c
    assert_error(_relate(client, tenant, project, c, a, "blocks"), 409, "CONFLICT")
    assert_error(_relate(client, tenant, project, a, c, "is_blocked_by"), 409, "CONFLICT")
    # Non-blocking relations may close the loop; blocking in the same direction is fine.
    assert _relate(client, tenant, project, c, a, "relates_to").status_code == 201


def test_invalid_bodies(client, trio):
    tenant, project, (a, _, _) = trio
    url = f"{issues_url(tenant, project)}/{a['key']}/relations"
    body = assert_error(
        client.post(url, json={"type": "parent_of", "related_issue_id": "x"}, headers=tenant.headers),
        400,
        "VALIDATION_ERROR",
    )
    assert {d["field"] for d in body["details"]} == {"type", "related_issue_id"}
    missing = client.post(
        url,
        json={"type": "blocks", "related_issue_id": "00000000-0000-0000-0000-000000000000"},
        headers=tenant.headers,
    )
    assert assert_error(missing, 400, "VALIDATION_ERROR")["details"][0]["field"] == "related_issue_id"


def test_related_issue_of_another_organization_is_refused(client, trio):
    tenant, project, (a, _, _) = trio
    stranger = register(client)
    foreign = make_issue(client, stranger, make_project(client, stranger))
    response = _relate(client, tenant, project, a, foreign, "relates_to")
    assert assert_error(response, 400, "VALIDATION_ERROR")["details"][0]["field"] == "related_issue_id"


def test_related_issue_in_another_project_of_the_organization(client, trio):
    tenant, project, (a, _, _) = trio
    other = make_issue(client, tenant, make_project(client, tenant, key="APP", name="App"))
    response = _relate(client, tenant, project, a, other, "duplicates")
    assert response.status_code == 201 and response.get_json()["issue"]["key"] == "APP-1"


def test_deleting_a_relation_deletes_both_sides(client, trio):
    tenant, project, (a, b, c) = trio
    relation = _relate(client, tenant, project, a, b, "blocks").get_json()
    other = _relate(client, tenant, project, b, c, "relates_to").get_json()
    url = issues_url(tenant, project)
    # A relation id of another issue is not found under this one.
    assert_error(
        client.delete(f"{url}/{a['key']}/relations/{other['id']}", headers=tenant.headers), 404, "NOT_FOUND"
    )
    assert_error(
        client.delete(f"{url}/{a['key']}/relations/not-a-uuid", headers=tenant.headers), 404, "NOT_FOUND"
    )
    response = client.delete(f"{url}/{a['key']}/relations/{relation['id']}", headers=tenant.headers)
    assert response.status_code == 204
    assert _relations(client, tenant, project, a) == []
    assert [r["type"] for r in _relations(client, tenant, project, b)] == ["relates_to"]
    assert_error(
        client.delete(f"{url}/{a['key']}/relations/{relation['id']}", headers=tenant.headers),
        404,
        "NOT_FOUND",
    )
    # Deleting from the inverse side removes both as well.
    inverse_id = _relations(client, tenant, project, c)[0]["id"]
    assert (
        client.delete(f"{url}/{c['key']}/relations/{inverse_id}", headers=tenant.headers).status_code == 204
    )
    assert _relations(client, tenant, project, b) == []


def test_one_issue_lists_its_relations_sub_issues_and_labels_each_in_order(client, trio):
    tenant, project, (issue, first, second) = trio
    zeta = make_label(client, tenant, project, "zeta", "#000000")
    alpha = make_label(client, tenant, project, "alpha", "#ffffff")
    url = issues_url(tenant, project)
    assert (
        client.patch(
            f"{url}/{issue['key']}", json={"label_ids": [zeta["id"], alpha["id"]]}, headers=tenant.headers
        ).status_code
        == 200
    )
    for other in (second, first):
        assert _relate(client, tenant, project, issue, other, "relates_to").status_code == 201
    children = [make_issue(client, tenant, project, title=f"Sub {n}", parent_id=issue["id"]) for n in (1, 2)]

    body = client.get(f"{url}/{issue['key']}", headers=tenant.headers).get_json()

    assert [(label["name"], label["color"]) for label in body["labels"]] == [
        ("alpha", "#ffffff"),
        ("zeta", "#000000"),
    ]
    assert [relation["issue"]["key"] for relation in body["relations"]] == [second["key"], first["key"]]
    assert [child["key"] for child in body["children"]] == [child["key"] for child in children]
    assert body["children_count"] == 2
    bare = client.get(f"{url}/{first['key']}", headers=tenant.headers).get_json()
    assert (bare["labels"], bare["children"], bare["children_count"]) == ([], [], 0)
    assert [relation["issue"]["key"] for relation in bare["relations"]] == [issue["key"]]
