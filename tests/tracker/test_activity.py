"""Activity history: every change to an issue, with who, when, and the values before and after."""

from __future__ import annotations

import pytest

from tests.tracker.collab_support import activity, comment, issue_url, kinds, team
from tests.tracker.support import API, assert_error, issues_url, make_issue, make_label, statuses


@pytest.fixture
def setup(client):
    owner, (member, viewer), project = team(client, "member", "viewer")
    return owner, member, viewer, project


def test_creating_an_issue_is_the_first_entry(client, setup):
    owner, member, _viewer, project = setup
    issue = make_issue(client, owner, project, title="Checkout quebra", headers=member.headers)
    body = activity(client, owner, project, issue["key"])
    assert (body["total"], body["page"], body["per_page"]) == (1, 1, 100)
    [entry] = body["activity"]
    assert entry["kind"] == "created" and entry["field"] is None and entry["old"] is None
    assert entry["new"] == {"key": issue["key"], "title": "Checkout quebra"}
    assert entry["actor"]["id"] == member.user_id and entry["actor"]["name"]
    assert entry["created_at"] == issue["created_at"]
    assert isinstance(entry["id"], int)


def test_each_changed_field_is_one_entry_with_old_and_new(client, setup):
    owner, member, _viewer, project = setup
    label = make_label(client, owner, project, "bug")
    done = statuses(client, owner, project)["done"]
    issue = make_issue(client, owner, project, title="Antes", estimate=3)
    changes = {
        "title": "Depois",
        "description": "Passos:\n1. abrir",
        "type": "bug",
        "priority": "high",
        "status_id": done["id"],
        "assignee_id": member.user_id,
        "start_date": "2026-11-01",
        "due_date": "2026-11-30",
        "estimate": 5,
        "label_ids": [label["id"]],
    }
    patched = client.patch(issue_url(owner, project, issue["key"]), json=changes, headers=member.headers)
    assert patched.status_code == 200, patched.get_json()
    entries = activity(client, owner, project, issue["key"])["activity"][1:]
    by_field = {e["field"]: e for e in entries}
    assert [e["field"] for e in entries] == [
        "title",
        "description",
        "type",
        "priority",
        "status",
        "assignee",
        "start_date",
        "due_date",
        "estimate",
        "labels",
    ]
    assert {e["kind"] for e in entries if e["field"] != "status"} == {"updated"}
    assert by_field["status"]["kind"] == "status_changed"
    assert by_field["status"]["old"] == {"id": issue["status"]["id"], "name": "Todo", "category": "todo"}
    assert by_field["status"]["new"] == {"id": done["id"], "name": "Done", "category": "done"}
    assert (by_field["title"]["old"], by_field["title"]["new"]) == ("Antes", "Depois")
    assert (by_field["description"]["old"], by_field["description"]["new"]) == (None, "Passos:\n1. abrir")
    assert (by_field["type"]["old"], by_field["type"]["new"]) == ("task", "bug")
    assert (by_field["priority"]["old"], by_field["priority"]["new"]) == ("none", "high")
    assert by_field["assignee"]["old"] is None
    assert by_field["assignee"]["new"]["id"] == member.user_id
    assert (by_field["due_date"]["old"], by_field["due_date"]["new"]) == (None, "2026-11-30")
    assert (by_field["estimate"]["old"], by_field["estimate"]["new"]) == (3, 5)
    assert (by_field["labels"]["old"], by_field["labels"]["new"]) == (
        [],
        [{"id": label["id"], "name": "bug"}],
    )
    assert {e["actor"]["id"] for e in entries} == {member.user_id}
    assert len({e["created_at"] for e in entries}) == 1

    cleared = client.patch(
        issue_url(owner, project, issue["key"]),
        json={"assignee_id": None, "label_ids": []},
        headers=owner.headers,
    )
    assert cleared.status_code == 200
    last = activity(client, owner, project, issue["key"])["activity"][-2:]
    assert [(e["field"], e["new"]) for e in last] == [("assignee", None), ("labels", [])]
    assert last[0]["old"]["id"] == member.user_id


def test_a_patch_that_changes_nothing_writes_nothing(client, setup):
    owner, _member, _viewer, project = setup
    issue = make_issue(client, owner, project, title="Igual", priority="low")
    same = {"title": "Igual", "priority": "low", "status_id": issue["status"]["id"], "label_ids": []}
    assert (
        client.patch(issue_url(owner, project, issue["key"]), json=same, headers=owner.headers).status_code
        == 200
    )
    assert kinds(client, owner, project, issue["key"]) == [("created", None)]


def test_a_refused_change_writes_nothing(client, setup):
    owner, _member, _viewer, project = setup
    issue = make_issue(client, owner, project)
    refused = client.patch(
        issue_url(owner, project, issue["key"]),
        json={"title": "novo", "status_id": "00000000-0000-0000-0000-000000000000"},
        headers=owner.headers,
    )
    assert_error(refused, 400, "VALIDATION_ERROR")
    assert kinds(client, owner, project, issue["key"]) == [("created", None)]


def test_sub_issues_are_recorded_on_the_parent(client, setup):
    owner, _member, _viewer, project = setup
    first = make_issue(client, owner, project, title="Épico 1")
    second = make_issue(client, owner, project, title="Épico 2")
    child = make_issue(client, owner, project, title="Filho", parent_id=first["id"])
    ref = {"id": child["id"], "key": child["key"], "title": "Filho"}
    moved = client.patch(
        issue_url(owner, project, child["key"]), json={"parent_id": second["id"]}, headers=owner.headers
    )
    assert moved.status_code == 200
    assert kinds(client, owner, project, first["key"]) == [
        ("created", None),
        ("sub_issue_added", None),
        ("sub_issue_removed", None),
    ]
    first_entries = activity(client, owner, project, first["key"])["activity"]
    assert first_entries[1]["new"] == ref and first_entries[2]["old"] == ref
    [parent_change] = activity(client, owner, project, child["key"])["activity"][1:]
    assert parent_change["field"] == "parent"
    assert parent_change["old"] == {"id": first["id"], "key": first["key"], "title": "Épico 1"}
    assert parent_change["new"] == {"id": second["id"], "key": second["key"], "title": "Épico 2"}
    assert client.delete(issue_url(owner, project, child["key"]), headers=owner.headers).status_code == 204
    second_entries = activity(client, owner, project, second["key"])["activity"]
    assert [(e["kind"], e["new"], e["old"]) for e in second_entries[1:]] == [
        ("sub_issue_added", ref, None),
        ("sub_issue_removed", None, ref),
    ]


def test_relations_are_recorded_on_both_issues(client, setup):
    owner, member, _viewer, project = setup
    blocker = make_issue(client, owner, project, title="Bloqueia")
    blocked = make_issue(client, owner, project, title="Bloqueada")
    created = client.post(
        issue_url(owner, project, blocker["key"]) + "/relations",
        json={"type": "blocks", "related_issue_id": blocked["id"]},
        headers=member.headers,
    )
    assert created.status_code == 201
    removed = client.delete(
        issue_url(owner, project, blocker["key"]) + f"/relations/{created.get_json()['id']}",
        headers=member.headers,
    )
    assert removed.status_code == 204

    def entries(issue):
        return [
            (e["kind"], e["field"], e["old"] or e["new"])
            for e in activity(client, owner, project, issue["key"])["activity"][1:]
        ]

    blocked_ref = {"id": blocked["id"], "key": blocked["key"], "title": "Bloqueada"}
    blocker_ref = {"id": blocker["id"], "key": blocker["key"], "title": "Bloqueia"}
    assert entries(blocker) == [
        ("relation_added", "blocks", blocked_ref),
        ("relation_removed", "blocks", blocked_ref),
    ]
    assert entries(blocked) == [
        ("relation_added", "is_blocked_by", blocker_ref),
        ("relation_removed", "is_blocked_by", blocker_ref),
    ]
    # Deleting a related issue is a relation removed for the issue that stays.
    client.post(
        issue_url(owner, project, blocker["key"]) + "/relations",
        json={"type": "relates_to", "related_issue_id": blocked["id"]},
        headers=member.headers,
    )
    assert client.delete(issue_url(owner, project, blocked["key"]), headers=owner.headers).status_code == 204
    assert entries(blocker)[-1] == ("relation_removed", "relates_to", blocked_ref)


def test_comments_are_recorded_without_their_text(client, setup):
    owner, member, _viewer, project = setup
    issue = make_issue(client, owner, project)
    created = comment(client, owner, project, issue["key"], "segredo", who=member)
    url = issue_url(owner, project, issue["key"]) + f"/comments/{created['id']}"
    assert client.patch(url, json={"body": "outro"}, headers=member.headers).status_code == 200
    assert client.delete(url, headers=owner.headers).status_code == 204
    entries = activity(client, owner, project, issue["key"])["activity"][1:]
    assert [(e["kind"], e["actor"]["id"]) for e in entries] == [
        ("comment_added", member.user_id),
        ("comment_edited", member.user_id),
        ("comment_deleted", owner.user_id),
    ]
    assert {str(e["new"] or e["old"]) for e in entries} == {str({"id": created["id"]})}


def test_activity_is_paged_oldest_first(client, setup):
    owner, _member, viewer, project = setup
    issue = make_issue(client, owner, project, title="t0")
    for n in range(1, 5):
        client.patch(issue_url(owner, project, issue["key"]), json={"title": f"t{n}"}, headers=owner.headers)
    first = activity(client, owner, project, issue["key"], who=viewer, per_page=2)
    last = activity(client, owner, project, issue["key"], who=viewer, per_page=2, page=3)
    assert first["total"] == last["total"] == 5
    assert [e["kind"] for e in first["activity"]] == ["created", "updated"]
    assert first["activity"][1]["new"] == "t1"
    assert [e["new"] for e in last["activity"]] == ["t4"]
    ids = [e["id"] for e in activity(client, owner, project, issue["key"])["activity"]]
    assert ids == sorted(ids)
    url = issue_url(owner, project, issue["key"]) + "/activity"
    assert_error(
        client.get(url, query_string={"per_page": 0}, headers=owner.headers), 400, "VALIDATION_ERROR"
    )
    missing = issues_url(owner, project) + "/WEB-999/activity"
    assert_error(client.get(missing, headers=owner.headers), 404, "NOT_FOUND")


def test_history_keeps_the_names_of_the_time(client, setup):
    owner, _member, _viewer, project = setup
    issue = make_issue(client, owner, project)
    status = client.post(
        f"{API}/workspaces/{owner.slug}/projects/{project['id']}/statuses",
        json={"name": "Revisão", "color": "#123456", "category": "in_progress"},
        headers=owner.headers,
    ).get_json()
    client.patch(
        issue_url(owner, project, issue["key"]), json={"status_id": status["id"]}, headers=owner.headers
    )
    client.patch(
        f"{API}/workspaces/{owner.slug}/projects/{project['id']}/statuses/{status['id']}",
        json={"name": "Em revisão"},
        headers=owner.headers,
    )
    [change] = activity(client, owner, project, issue["key"])["activity"][1:]
    assert change["new"]["name"] == "Revisão"
