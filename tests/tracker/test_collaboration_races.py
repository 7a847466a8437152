"""Comments, watches and the e-mail sender under concurrency, with real transactions."""

from __future__ import annotations

import pytest

from tests.factories import captured_mail
from tests.racing import race, seen_now, together
from tests.tracker.collab_support import issue_url, small_plan, team
from tests.tracker.support import API, make_issue, superadmin


def _storage_in_use(client, root, owner, project) -> int:
    """The counter the plan check reads, checked against the bytes computed from the data
    (through a 402 on a throwaway issue, whose own 7 bytes are not counted in the answer)."""
    key = make_issue(client, owner, project, title="medidor")["key"]
    url = issue_url(owner, project, key)
    refused = client.post(url + "/comments", json={"body": "x" * 100_000}, headers=owner.headers)
    assert refused.status_code == 402, refused.get_json()
    stats = client.get(f"{API}/admin/stats", headers=root.headers).get_json()
    assert refused.get_json()["current"] == stats["storage_used_bytes"]
    assert client.delete(url, headers=owner.headers).status_code == 204
    return stats["storage_used_bytes"] - len("medidor")


@pytest.mark.committing
def test_comments_written_while_their_issue_is_deleted_never_fail(app):
    client = app.test_client()
    root = superadmin(client)
    owner, (member,), project = team(client, "member")
    small_plan(client, root, owner, storage_bytes=50_000)
    seen_now(app)
    outcomes: list[int] = []
    for _ in range(6):
        issue = make_issue(client, owner, project, title="vai sumir")
        created = client.post(
            issue_url(owner, project, issue["key"]) + "/comments",
            json={"body": "a" * 100},
            headers=owner.headers,
        ).get_json()
        url = issue_url(owner, project, issue["key"])
        results = race(
            app,
            [
                lambda c, url=url: c.post(url + "/comments", json={"body": "b" * 10}, headers=member.headers),
                lambda c, url=url: c.post(url + "/comments", json={"body": "c" * 10}, headers=owner.headers),
                lambda c, url=url, cid=created["id"]: c.patch(
                    f"{url}/comments/{cid}", json={"body": "d" * 5}, headers=owner.headers
                ),
                lambda c, url=url: c.post(url + "/watch", headers=member.headers),
                lambda c, url=url: c.delete(url, headers=owner.headers),
            ],
        )
        assert results[-1][0] == 204, results
        outcomes += [status for status, _ in results[:-1]]
    # Each landed before the delete (and went with the issue) or found the issue gone.
    assert set(outcomes) <= {200, 201, 204, 404}, outcomes
    assert _storage_in_use(client, root, owner, project) == 0


@pytest.mark.committing
def test_concurrent_comments_and_edits_keep_the_storage_counter_true(app):
    client = app.test_client()
    root = superadmin(client)
    owner, (member,), project = team(client, "member")
    small_plan(client, root, owner, storage_bytes=50_000)
    issue = make_issue(client, owner, project, title="conversa")
    url = issue_url(owner, project, issue["key"]) + "/comments"
    first = client.post(url, json={"body": "inicial"}, headers=member.headers).get_json()
    seen_now(app)
    results = race(
        app,
        [lambda c, n=n: c.post(url, json={"body": "z" * (n + 1)}, headers=owner.headers) for n in range(6)]
        + [
            lambda c, n=n: c.patch(
                f"{url}/{first['id']}", json={"body": "e" * (10 * n + 1)}, headers=member.headers
            )
            for n in range(4)
        ],
    )
    assert sorted(status for status, _ in results) == [200] * 4 + [201] * 6
    listed = client.get(url, query_string={"per_page": 100}, headers=owner.headers).get_json()["comments"]
    history = client.get(url.replace("/comments", "/activity"), headers=owner.headers).get_json()
    assert sum(e["kind"] == "comment_added" for e in history["activity"]) == 7
    assert sum(e["kind"] == "comment_edited" for e in history["activity"]) == 4
    expected = len(issue["title"]) + sum(len(c["body"].encode()) for c in listed)
    assert _storage_in_use(client, root, owner, project) == expected


@pytest.mark.committing
def test_two_senders_at_once_send_each_notification_once(app):
    from services.tracker import notification_mail

    client = app.test_client()
    owner, people, project = team(client, "member", "member", "member", "member")
    for person in people:
        for n in range(3):
            make_issue(client, owner, project, title=f"t{n}", assignee_id=person.user_id)

    def run():
        with app.app_context():
            return notification_mail.send_pending()

    with captured_mail() as sent:
        reports = together([run, run, run])
    assert sorted(message["To"] for message in sent) == sorted(person.email for person in people)
    assert sum(report.sent for report in reports) == 12
    assert sum(report.messages for report in reports) == 4
