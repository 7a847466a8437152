"""Notifications: who is told what (never about their own actions), watching, the inbox,
marking read, the e-mail preference, and the e-mail outbox sent in batches by the CLI."""

from __future__ import annotations

import re
import smtplib
from datetime import timedelta

import pytest

from models.base import utcnow
from tests.factories import captured_mail
from tests.tracker.collab_support import comment, inbox, issue_url, received, team, watch
from tests.tracker.support import API, add_member, assert_error, make_issue, make_project, register, statuses


@pytest.fixture
def setup(client):
    """An owner, two members, a viewer, a project and an issue the first member created."""
    owner, (creator, other, viewer), project = team(client, "member", "member", "viewer")
    issue = make_issue(client, owner, project, title="Checkout quebra", headers=creator.headers)
    return owner, creator, other, viewer, project, issue


def _send(runner) -> str:
    result = runner.invoke(args=["tracker", "send-notifications"])
    assert result.exit_code == 0, result.output
    return result.output


def _counts(output: str) -> tuple[int, ...]:
    """(messages, sent, skipped, retried, failed) from the command's report."""
    return tuple(int(n) for n in re.findall(r"\d+", output))


# --- who is told what ---------------------------------------------------------------------


def test_the_assignee_is_told_but_never_about_their_own_assignment(client, setup):
    owner, creator, other, _viewer, project, _issue = setup
    assigned = make_issue(client, owner, project, title="Para você", assignee_id=other.user_id)
    mine = make_issue(
        client, owner, project, title="Para mim", headers=other.headers, assignee_id=other.user_id
    )
    url = issue_url(owner, project, mine["key"])
    assert client.patch(url, json={"assignee_id": creator.user_id}, headers=other.headers).status_code == 200
    # Re-sending the same assignee is no change, and tells nobody.
    assert client.patch(url, json={"assignee_id": creator.user_id}, headers=other.headers).status_code == 200
    assert received(client, other) == [("assigned", assigned["key"])]
    assert received(client, creator) == [("assigned", mine["key"])]
    assert received(client, owner) == []


def test_a_status_change_tells_the_creator_the_assignee_and_watchers(client, setup):
    owner, creator, other, viewer, project, issue = setup
    url = issue_url(owner, project, issue["key"])
    client.patch(url, json={"assignee_id": other.user_id}, headers=creator.headers)
    watch(client, owner, project, issue["key"], viewer)
    done = statuses(client, owner, project)["done"]
    # Other fields tell nobody.
    assert (
        client.patch(
            url, json={"title": "Novo título", "priority": "high"}, headers=owner.headers
        ).status_code
        == 200
    )
    assert client.patch(url, json={"status_id": done["id"]}, headers=owner.headers).status_code == 200
    assert received(client, creator) == [("status_changed", issue["key"])]
    assert received(client, other) == [("assigned", issue["key"]), ("status_changed", issue["key"])]
    assert received(client, viewer) == [("status_changed", issue["key"])]
    assert received(client, owner) == []
    # The one who moves it is not told, even when they created it.
    todo = statuses(client, owner, project)["todo"]
    assert client.patch(url, json={"status_id": todo["id"]}, headers=creator.headers).status_code == 200
    assert received(client, creator) == [("status_changed", issue["key"])]
    [latest] = inbox(client, other, per_page=1)["notifications"]
    assert latest["actor"]["id"] == creator.user_id


def test_assigning_and_moving_at_once_is_one_notification(client, setup):
    owner, creator, other, _viewer, project, issue = setup
    done = statuses(client, owner, project)["done"]
    client.patch(
        issue_url(owner, project, issue["key"]),
        json={"status_id": done["id"], "assignee_id": other.user_id},
        headers=owner.headers,
    )
    assert received(client, other) == [("assigned", issue["key"])]
    assert received(client, creator) == [("status_changed", issue["key"])]


def test_a_comment_tells_followers_and_mentioned_members_once(client, setup):
    owner, creator, other, viewer, project, issue = setup
    outsider = register(client)
    watch(client, owner, project, issue["key"], viewer)
    watch(client, owner, project, issue["key"], other)
    body = (
        f"@{other.email.upper()} e @{owner.email}, vejam. Também @{outsider.email} e eu mesmo @{creator.email}.\n\n"
        f"`@{viewer.email}` em código não menciona."
    )
    comment(client, owner, project, issue["key"], body, who=creator)
    assert received(client, other) == [("mentioned", issue["key"])]
    assert received(client, owner) == [("mentioned", issue["key"])]
    assert received(client, viewer) == [("commented", issue["key"])]
    assert received(client, creator) == []
    assert received(client, outsider) == []
    comment(client, owner, project, issue["key"], "Resolvido.", who=other)
    assert received(client, creator) == [("commented", issue["key"])]
    assert received(client, other) == [("mentioned", issue["key"])]


def test_an_edit_tells_only_the_newly_mentioned(client, setup):
    owner, creator, other, viewer, project, issue = setup
    created = comment(client, owner, project, issue["key"], f"oi @{other.email}", who=owner)
    url = issue_url(owner, project, issue["key"]) + f"/comments/{created['id']}"
    edit = client.patch(url, json={"body": f"oi @{other.email} e @{viewer.email}"}, headers=owner.headers)
    assert edit.status_code == 200
    client.patch(url, json={"body": f"oi @{other.email}, @{viewer.email}!"}, headers=owner.headers)
    assert received(client, other) == [("mentioned", issue["key"])]
    assert received(client, viewer) == [("mentioned", issue["key"])]
    assert received(client, creator) == [("commented", issue["key"])]


def test_someone_who_left_is_no_longer_told_and_their_inbox_forgets(client, setup):
    owner, creator, other, _viewer, project, issue = setup
    watch(client, owner, project, issue["key"], other)
    comment(client, owner, project, issue["key"], "primeiro", who=owner)
    assert received(client, other) == [("commented", issue["key"])]
    left = client.delete(f"{API}/organizations/{owner.org_id}/members/{other.user_id}", headers=other.headers)
    assert left.status_code == 204
    assert inbox(client, other) == {"notifications": [], "unread": 0, "total": 0, "page": 1, "per_page": 50}
    add_member(client, owner, other)
    comment(client, owner, project, issue["key"], "segundo", who=owner)
    assert received(client, other) == []  # the watch went with the membership
    assert received(client, creator) == [("commented", issue["key"])] * 2


def test_deleting_an_issue_or_a_project_takes_its_notifications(client, setup):
    owner, creator, _other, _viewer, project, issue = setup
    comment(client, owner, project, issue["key"], "um")
    other_issue = make_issue(client, owner, project, assignee_id=creator.user_id)
    assert inbox(client, creator)["total"] == 2
    assert client.delete(issue_url(owner, project, issue["key"]), headers=owner.headers).status_code == 204
    assert received(client, creator) == [("assigned", other_issue["key"])]
    deleted = client.delete(f"{API}/workspaces/{owner.slug}/projects/{project['id']}", headers=owner.headers)
    assert deleted.status_code == 204
    assert inbox(client, creator)["total"] == 0


# --- watching ---------------------------------------------------------------------------------


def test_watching_is_idempotent_and_unwatching_stops_notifications(client, setup):
    owner, _creator, _other, viewer, project, issue = setup
    url = issue_url(owner, project, issue["key"]) + "/watch"
    assert client.post(url, headers=viewer.headers).status_code == 204
    assert client.post(url, headers=viewer.headers).status_code == 204
    comment(client, owner, project, issue["key"], "um")
    assert client.delete(url, headers=viewer.headers).status_code == 204
    assert client.delete(url, headers=viewer.headers).status_code == 204
    comment(client, owner, project, issue["key"], "dois")
    assert received(client, viewer) == [("commented", issue["key"])]
    missing = issue_url(owner, project, "WEB-999") + "/watch"
    assert_error(client.post(missing, headers=viewer.headers), 404, "NOT_FOUND")


def test_the_creator_cannot_unwatch_their_own_issue(client, setup):
    owner, creator, _other, _viewer, project, issue = setup
    assert (
        client.delete(issue_url(owner, project, issue["key"]) + "/watch", headers=creator.headers).status_code
        == 204
    )
    comment(client, owner, project, issue["key"], "ainda te conta")
    assert received(client, creator) == [("commented", issue["key"])]


# --- the inbox ------------------------------------------------------------------------------


def test_the_inbox_lists_newest_first_with_unread_count_and_paging(client, setup):
    owner, creator, _other, _viewer, project, _issue = setup
    keys = [
        make_issue(client, owner, project, title=f"i{n}", assignee_id=creator.user_id)["key"]
        for n in range(4)
    ]
    body = inbox(client, creator, per_page=3)
    assert [n["issue"]["key"] for n in body["notifications"]] == keys[::-1][:3]
    assert (body["unread"], body["total"], body["page"], body["per_page"]) == (4, 4, 1, 3)
    first = body["notifications"][0]
    assert first["kind"] == "assigned" and first["read"] is False
    assert first["actor"]["id"] == owner.user_id and first["actor"]["name"]
    assert first["issue"]["title"] == "i3"
    assert first["issue"]["project_id"] == project["id"] and first["issue"]["workspace_slug"] == owner.slug
    # The issue is reachable from what the notification carries.
    path = f"{API}/workspaces/{first['issue']['workspace_slug']}/projects/{first['issue']['project_id']}"
    assert client.get(f"{path}/issues/{first['issue']['key']}", headers=creator.headers).status_code == 200
    assert [n["issue"]["key"] for n in inbox(client, creator, per_page=3, page=2)["notifications"]] == keys[
        :1
    ]


def test_marking_read_by_ids_and_all(client, setup):
    owner, creator, other, _viewer, project, _issue = setup
    for n in range(3):
        make_issue(client, owner, project, title=f"i{n}", assignee_id=creator.user_id)
    make_issue(client, owner, project, title="do outro", assignee_id=other.user_id)
    others = inbox(client, other)["notifications"]
    ids = [n["id"] for n in inbox(client, creator)["notifications"]]
    read = client.post(
        f"{API}/notifications/read", json={"ids": [ids[0], others[0]["id"]]}, headers=creator.headers
    )
    assert read.status_code == 204
    body = inbox(client, creator)
    assert [n["read"] for n in body["notifications"]] == [True, False, False]
    assert body["unread"] == 2
    unread = inbox(client, creator, unread="true")
    assert [n["id"] for n in unread["notifications"]] == ids[1:]
    assert (unread["unread"], unread["total"]) == (2, 2)
    # Somebody else's notification is not touched by my request.
    assert inbox(client, other)["unread"] == 1
    again = client.post(f"{API}/notifications/read", json={"ids": [ids[0]]}, headers=creator.headers)
    assert again.status_code == 204
    everything = client.post(f"{API}/notifications/read", json={"all": True}, headers=creator.headers)
    assert everything.status_code == 204
    body = inbox(client, creator)
    assert body["unread"] == 0 and body["total"] == 3
    assert inbox(client, creator, unread="true")["notifications"] == []
    assert inbox(client, other)["unread"] == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "ids"),
        ({"ids": [], "all": True}, "all"),
        ({"all": False}, "all"),
        ({"all": "yes"}, "all"),
        ({"ids": ["not-a-uuid"]}, "ids.0"),
        ({"ids": ["00000000-0000-0000-0000-000000000000"] * 501}, "ids"),
        ({"ids": "x"}, "ids"),
        ({"all": True, "extra": 1}, "extra"),
    ],
    ids=["neither", "both", "all-false", "all-not-boolean", "bad-id", "too-many", "not-a-list", "unknown"],
)
def test_mark_read_validation(client, body, field):
    person = register(client)
    response = client.post(f"{API}/notifications/read", json=body, headers=person.headers)
    assert field in {d["field"] for d in assert_error(response, 400, "VALIDATION_ERROR")["details"]}


def test_inbox_query_validation(client):
    person = register(client)
    for query in ({"unread": "maybe"}, {"page": 0}, {"per_page": 5000}):
        response = client.get(f"{API}/notifications", query_string=query, headers=person.headers)
        assert_error(response, 400, "VALIDATION_ERROR")
    assert inbox(client, person, per_page=500)["per_page"] == 100


def test_notification_routes_need_a_bearer_token(client):
    for response in (
        client.get(f"{API}/notifications"),
        client.post(f"{API}/notifications/read", json={"all": True}),
        client.get(f"{API}/notifications/preferences"),
        client.patch(f"{API}/notifications/preferences", json={"email": False}),
    ):
        assert_error(response, 401, "UNAUTHORIZED")


def test_the_email_preference_reads_and_changes(client):
    person = register(client)
    url = f"{API}/notifications/preferences"
    assert client.get(url, headers=person.headers).get_json() == {"email": True}
    changed = client.patch(url, json={"email": False}, headers=person.headers)
    assert changed.status_code == 200 and changed.get_json() == {"email": False}
    assert client.get(url, headers=person.headers).get_json() == {"email": False}
    for bad in ({}, {"email": "no"}, {"email": None}, {"email": True, "push": True}):
        assert_error(client.patch(url, json=bad, headers=person.headers), 400, "VALIDATION_ERROR")


# --- e-mail -----------------------------------------------------------------------------------


def test_emails_are_batched_one_message_per_person_per_run(client, runner, setup):
    owner, creator, other, _viewer, project, issue = setup
    with captured_mail() as sent:
        keys = [
            make_issue(client, owner, project, title=f"Tarefa {n}", assignee_id=other.user_id)["key"]
            for n in range(3)
        ]
        comment(client, owner, project, issue["key"], "Olhem isto", who=owner)
    assert sent == []  # nothing goes out inside a request
    with captured_mail() as sent:
        output = _send(runner)
    assert _counts(output) == (2, 4, 0, 0, 0)
    by_address = {message["To"]: message for message in sent}
    assert sorted(by_address) == sorted([other.email, creator.email])
    batch = by_address[other.email].get_content()
    assert by_address[other.email]["Subject"] == "Giro: 3 novidades nas suas issues"
    assert all(key in batch for key in keys)
    assert f"/tracker/w/{owner.slug}/p/{project['id']}/issues/{keys[0]}" in batch
    single = by_address[creator.email]
    assert single["Subject"] == f"Giro: {issue['key']} Checkout quebra"
    assert "comentou em" in single.get_content()
    # Each notification is sent once.
    with captured_mail() as sent:
        assert _counts(_send(runner)) == (0, 0, 0, 0, 0)
    assert sent == []


def test_no_email_when_turned_off_read_first_or_the_address_is_unproven(client, runner, setup):
    owner, creator, other, viewer, project, _issue = setup
    off_before = client.patch(
        f"{API}/notifications/preferences", json={"email": False}, headers=viewer.headers
    )
    assert off_before.status_code == 200
    make_issue(client, owner, project, assignee_id=viewer.user_id)  # no outbox row at all
    make_issue(client, owner, project, assignee_id=other.user_id)
    make_issue(client, owner, project, assignee_id=creator.user_id)
    client.patch(f"{API}/notifications/preferences", json={"email": False}, headers=other.headers)
    client.post(f"{API}/notifications/read", json={"all": True}, headers=creator.headers)
    # An address nobody proved may be someone else's: it gets no e-mail.
    unproven = register(client, verify=False)
    add_member(client, unproven, owner)
    theirs = make_project(client, unproven, key="UNP")
    make_issue(client, unproven, theirs, headers=owner.headers, assignee_id=unproven.user_id)
    with captured_mail() as sent:
        output = _send(runner)
    assert sent == []
    assert _counts(output) == (0, 0, 3, 0, 0)
    assert inbox(client, viewer)["unread"] == 1  # the app's inbox is kept either way


def test_a_failed_send_is_retried_later_then_given_up(client, runner, setup, monkeypatch):
    import services.tracker.notification_mail as notification_mail

    owner, creator, _other, _viewer, project, _issue = setup
    make_issue(client, owner, project, assignee_id=creator.user_id)
    working = notification_mail.send_mail

    def refuse(*_args, **_kwargs):
        raise smtplib.SMTPServerDisconnected("connection lost")

    monkeypatch.setattr(notification_mail, "send_mail", refuse)
    assert _counts(_send(runner)) == (0, 0, 0, 1, 0)
    assert _counts(_send(runner)) == (0, 0, 0, 0, 0)  # not due again before the delay
    later = utcnow() + timedelta(minutes=3)
    monkeypatch.setattr(notification_mail, "utcnow", lambda: later)
    monkeypatch.setattr(notification_mail, "send_mail", working)
    with captured_mail() as sent:
        assert _counts(_send(runner)) == (1, 1, 0, 0, 0)
    assert [message["To"] for message in sent] == [creator.email]

    make_issue(client, owner, project, assignee_id=creator.user_id)
    monkeypatch.setattr(notification_mail, "send_mail", refuse)
    outcomes = []
    for day in range(1, 7):
        moment = utcnow() + timedelta(days=day)
        monkeypatch.setattr(notification_mail, "utcnow", lambda moment=moment: moment)
        outcomes.append(_counts(_send(runner))[3:])
    # (retried, failed) per run: four retries, then given up, then nothing left to try.
    assert outcomes == [(1, 0)] * 4 + [(0, 1), (0, 0)]
