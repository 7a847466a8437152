"""Bulk edit: many issues of a project changed at once, in one transaction, each in its history."""

from __future__ import annotations

import pytest

from tests.tracker.collab_support import activity, received, team
from tests.tracker.support import (
    assert_error,
    issues_url,
    make_issue,
    make_label,
    make_project,
    project_url,
    register,
    statuses,
)


def bulk(client, tenant, project, keys, changes, who=None):
    return client.post(
        project_url(tenant, project) + "/bulk-edit",
        json={"keys": keys, "changes": changes},
        headers=(who or tenant).headers,
    )


def get(client, tenant, project, key) -> dict:
    return client.get(f"{issues_url(tenant, project)}/{key}", headers=tenant.headers).get_json()


@pytest.fixture
def setup(client):
    owner, (member, viewer), project = team(client, "member", "viewer")
    keys = [make_issue(client, owner, project, title=f"Issue {n}")["key"] for n in range(1, 4)]
    return owner, member, viewer, project, keys


def test_status_assignee_and_priority_change_on_every_issue(client, setup):
    owner, member, _viewer, project, keys = setup
    done = statuses(client, owner, project)["done"]
    response = bulk(
        client,
        owner,
        project,
        keys[:2],
        {"status_id": done["id"], "assignee_id": member.user_id, "priority": "high"},
        who=member,
    )
    assert response.status_code == 200, response.get_json()
    assert response.get_json() == {"updated": 2}
    for key in keys[:2]:
        issue = get(client, owner, project, key)
        assert issue["status"]["id"] == done["id"] and issue["priority"] == "high"
        assert issue["assignee"]["id"] == member.user_id
        entries = activity(client, owner, project, key)["activity"]
        changed = {(e["kind"], e["field"]): e for e in entries[1:]}
        assert set(changed) == {
            ("status_changed", "status"),
            ("updated", "assignee"),
            ("updated", "priority"),
        }
        assert changed[("updated", "priority")]["old"] == "none"
        assert changed[("updated", "priority")]["new"] == "high"
        assert changed[("status_changed", "status")]["new"]["id"] == done["id"]
        assert all(e["actor"]["id"] == member.user_id for e in entries[1:])
    untouched = get(client, owner, project, keys[2])
    assert untouched["priority"] == "none" and untouched["assignee"] is None
    assert len(activity(client, owner, project, keys[2])["activity"]) == 1
    # The assignee made the change: nobody is told of their own action; the owner (creator) is.
    assert received(client, member) == []
    assert ("status_changed", keys[0]) in received(client, owner)


def test_labels_are_added_and_removed_and_unchanged_issues_are_not_counted(client, setup):
    owner, _member, _viewer, project, keys = setup
    bug = make_label(client, owner, project, "bug")
    ux = make_label(client, owner, project, "ux")
    patched = client.patch(
        f"{issues_url(owner, project)}/{keys[0]}", json={"label_ids": [bug["id"]]}, headers=owner.headers
    )
    assert patched.status_code == 200
    # keys[0] already has bug: only keys[1] and keys[2] change.
    response = bulk(client, owner, project, keys, {"add_label_ids": [bug["id"]]})
    assert response.get_json() == {"updated": 2}
    response = bulk(
        client, owner, project, keys, {"add_label_ids": [ux["id"]], "remove_label_ids": [bug["id"]]}
    )
    assert response.get_json() == {"updated": 3}
    for key in keys:
        assert [label["name"] for label in get(client, owner, project, key)["labels"]] == ["ux"]
    last = activity(client, owner, project, keys[1])["activity"][-1]
    assert (last["kind"], last["field"]) == ("updated", "labels")
    assert [label["name"] for label in last["old"]] == ["bug"]
    assert [label["name"] for label in last["new"]] == ["ux"]
    # Unassigning everyone (null) when nobody is assigned changes nothing.
    assert bulk(client, owner, project, keys, {"assignee_id": None}).get_json() == {"updated": 0}


def test_one_bad_reference_or_key_changes_nothing(client, setup):
    owner, _member, _viewer, project, keys = setup
    other = make_project(client, owner, key="APP", name="App")
    foreign_status = statuses(client, owner, other)["done"]
    foreign_label = make_label(client, owner, other, "alheia")
    outsider = register(client)
    done = statuses(client, owner, project)["done"]
    cases = [
        (keys, {"status_id": foreign_status["id"]}, "status_id"),
        (keys, {"add_label_ids": [foreign_label["id"]]}, "label_ids"),
        (keys, {"assignee_id": outsider.user_id}, "assignee_id"),
        ([*keys, "WEB-99"], {"status_id": done["id"]}, "keys"),
        ([*keys, "APP-1"], {"status_id": done["id"]}, "keys"),
        ([*keys, "nonsense"], {"status_id": done["id"]}, "keys"),
        (keys, {}, "changes"),
        (keys, {"priority": "critical"}, "changes.priority"),
        ([], {"priority": "low"}, "keys"),
        ([f"WEB-{n}" for n in range(1, 102)], {"priority": "low"}, "keys"),
    ]
    for sent_keys, changes, field in cases:
        body = assert_error(bulk(client, owner, project, sent_keys, changes), 400, "VALIDATION_ERROR")
        assert field in [d["field"] for d in body["details"]], (changes, body)
    body = assert_error(
        bulk(client, owner, project, keys, {"add_label_ids": [foreign_label["id"]], "status_id": done["id"]}),
        400,
        "VALIDATION_ERROR",
    )
    for key in keys:
        assert get(client, owner, project, key)["status"]["category"] == "todo"
        assert len(activity(client, owner, project, key)["activity"]) == 1
    unknown = assert_error(
        bulk(client, owner, project, ["WEB-1", "WEB-99"], {"priority": "low"}), 400, "VALIDATION_ERROR"
    )
    assert "WEB-99" in unknown["details"][0]["message"]
    assert get(client, owner, project, "WEB-1")["priority"] == "none"


def test_roles_and_isolation(client, setup):
    owner, _member, viewer, project, keys = setup
    assert_error(bulk(client, owner, project, keys, {"priority": "low"}, who=viewer), 403, "FORBIDDEN")
    stranger = register(client)
    assert_error(bulk(client, owner, project, keys, {"priority": "low"}, who=stranger), 404, "NOT_FOUND")
    # The stranger's own project has the same keys: only theirs change.
    theirs = make_project(client, stranger)
    make_issue(client, stranger, theirs)
    assert bulk(client, stranger, theirs, ["WEB-1"], {"priority": "low"}).get_json() == {"updated": 1}
    assert all(get(client, owner, project, key)["priority"] == "none" for key in keys)
