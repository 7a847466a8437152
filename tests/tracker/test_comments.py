"""Comments: create, list oldest first with paging, edit (own), delete (own, or owner/admin),
validation, roles, and the storage they take."""

from __future__ import annotations

import pytest

from tests.tracker.collab_support import comment, issue_url, small_plan, team
from tests.tracker.support import API, assert_error, make_issue, superadmin


@pytest.fixture
def setup(client):
    owner, (admin, member, viewer), project = team(client, "admin", "member", "viewer")
    issue = make_issue(client, owner, project, title="Checkout quebra no Safari")
    return owner, admin, member, viewer, project, issue


def _comments_url(owner, project, issue) -> str:
    return issue_url(owner, project, issue["key"]) + "/comments"


def test_create_and_read_a_comment(client, setup):
    owner, _admin, member, _viewer, project, issue = setup
    body = "  Reproduzi no **Safari 17**:\n\n```\nTypeError: x is undefined\n```\n"
    created = comment(client, owner, project, issue["key"], body, who=member)
    assert created["body"] == body  # Markdown kept as written, leading spaces included
    assert created["author"]["id"] == member.user_id and created["author"]["name"]
    assert created["edited"] is False
    assert created["created_at"] == created["updated_at"]
    listed = client.get(_comments_url(owner, project, issue), headers=owner.headers).get_json()
    assert listed["comments"] == [created]
    assert (listed["total"], listed["page"], listed["per_page"]) == (1, 1, 50)


def test_raw_html_is_kept_as_text_not_interpreted(client, setup):
    owner, _admin, _member, _viewer, project, issue = setup
    body = "<script>alert(1)</script> [x](javascript:alert(1))"
    assert comment(client, owner, project, issue["key"], body)["body"] == body


def test_comments_are_listed_oldest_first_a_page_at_a_time(client, setup):
    owner, admin, member, _viewer, project, issue = setup
    texts = [f"comentário {n}" for n in range(5)]
    for n, text in enumerate(texts):
        comment(client, owner, project, issue["key"], text, who=(owner, admin, member)[n % 3])
    url = _comments_url(owner, project, issue)
    first = client.get(url, query_string={"per_page": 2}, headers=member.headers).get_json()
    third = client.get(url, query_string={"per_page": 2, "page": 3}, headers=member.headers).get_json()
    assert [c["body"] for c in first["comments"]] == texts[:2]
    assert [c["body"] for c in third["comments"]] == texts[4:]
    assert first["total"] == third["total"] == 5
    clamped = client.get(url, query_string={"per_page": 500}, headers=member.headers).get_json()
    assert clamped["per_page"] == 100 and len(clamped["comments"]) == 5
    # Another issue's comments are its own.
    other = make_issue(client, owner, project)
    assert client.get(_comments_url(owner, project, other), headers=owner.headers).get_json()["total"] == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "body"),
        ({"body": ""}, "body"),
        ({"body": " \n\t "}, "body"),
        ({"body": "x" * 100_001}, "body"),
        ({"body": "nul\x00"}, "body"),
        ({"body": 42}, "body"),
        ({"body": None}, "body"),
        ({"body": "ok", "extra": 1}, "extra"),
    ],
    ids=[
        "missing",
        "empty",
        "blank",
        "too-long",
        "control-character",
        "not-a-string",
        "null",
        "unknown-field",
    ],
)
def test_invalid_bodies_are_refused_with_details(client, setup, body, field):
    owner, _admin, _member, _viewer, project, issue = setup
    url = _comments_url(owner, project, issue)
    details = assert_error(client.post(url, json=body, headers=owner.headers), 400, "VALIDATION_ERROR")[
        "details"
    ]
    assert field in {d["field"] for d in details}
    created = comment(client, owner, project, issue["key"], "original")
    patched = client.patch(f"{url}/{created['id']}", json=body, headers=owner.headers)
    assert field in {d["field"] for d in assert_error(patched, 400, "VALIDATION_ERROR")["details"]}
    assert client.get(url, headers=owner.headers).get_json()["total"] == 1


def test_bad_paging_is_refused(client, setup):
    owner, _admin, _member, _viewer, project, issue = setup
    url = _comments_url(owner, project, issue)
    for query in ({"page": 0}, {"per_page": 1001}, {"page": "x"}):
        assert_error(client.get(url, query_string=query, headers=owner.headers), 400, "VALIDATION_ERROR")


def test_only_the_author_edits_and_the_comment_is_marked_edited(client, setup):
    owner, admin, member, _viewer, project, issue = setup
    created = comment(client, owner, project, issue["key"], "primeira versão", who=member)
    url = f"{_comments_url(owner, project, issue)}/{created['id']}"
    for other in (owner, admin):
        assert_error(client.patch(url, json={"body": "sequestrado"}, headers=other.headers), 403, "FORBIDDEN")
    same = client.patch(url, json={"body": "primeira versão"}, headers=member.headers)
    assert same.status_code == 200 and same.get_json()["edited"] is False
    edited = client.patch(url, json={"body": "segunda versão"}, headers=member.headers)
    assert edited.status_code == 200, edited.get_json()
    body = edited.get_json()
    assert body["body"] == "segunda versão" and body["edited"] is True
    assert body["created_at"] == created["created_at"] and body["updated_at"] >= created["updated_at"]
    listed = client.get(_comments_url(owner, project, issue), headers=owner.headers).get_json()["comments"]
    assert listed == [body]


def test_the_author_or_an_owner_or_admin_deletes(client, setup):
    owner, admin, member, _viewer, project, issue = setup
    url = _comments_url(owner, project, issue)
    by_owner = comment(client, owner, project, issue["key"], "do dono")
    mine = comment(client, owner, project, issue["key"], "meu", who=member)
    theirs = comment(client, owner, project, issue["key"], "do membro", who=member)
    assert_error(client.delete(f"{url}/{by_owner['id']}", headers=member.headers), 403, "FORBIDDEN")
    assert client.delete(f"{url}/{mine['id']}", headers=member.headers).status_code == 204
    assert client.delete(f"{url}/{theirs['id']}", headers=admin.headers).status_code == 204
    assert client.delete(f"{url}/{by_owner['id']}", headers=owner.headers).status_code == 204
    assert client.get(url, headers=owner.headers).get_json() == {
        "comments": [],
        "total": 0,
        "page": 1,
        "per_page": 50,
    }
    assert_error(client.delete(f"{url}/{mine['id']}", headers=member.headers), 404, "NOT_FOUND")
    assert_error(
        client.patch(f"{url}/{mine['id']}", json={"body": "x"}, headers=member.headers), 404, "NOT_FOUND"
    )


def test_viewers_read_but_do_not_write(client, setup):
    owner, _admin, _member, viewer, project, issue = setup
    url = _comments_url(owner, project, issue)
    created = comment(client, owner, project, issue["key"], "visível")
    assert client.get(url, headers=viewer.headers).get_json()["total"] == 1
    assert_error(client.post(url, json={"body": "não"}, headers=viewer.headers), 403, "FORBIDDEN")
    assert_error(client.delete(f"{url}/{created['id']}", headers=viewer.headers), 403, "FORBIDDEN")


def test_a_comment_is_reached_only_through_its_own_issue(client, setup):
    owner, _admin, _member, _viewer, project, issue = setup
    other = make_issue(client, owner, project)
    created = comment(client, owner, project, issue["key"], "aqui")
    wrong = f"{_comments_url(owner, project, other)}/{created['id']}"
    assert_error(client.patch(wrong, json={"body": "x"}, headers=owner.headers), 404, "NOT_FOUND")
    assert_error(client.delete(wrong, headers=owner.headers), 404, "NOT_FOUND")
    for bad in ("not-a-uuid", "00000000-0000-0000-0000-000000000000"):
        url = f"{_comments_url(owner, project, issue)}/{bad}"
        assert_error(client.delete(url, headers=owner.headers), 404, "NOT_FOUND")
    missing = issue_url(owner, project, "WEB-999") + "/comments"
    assert_error(client.get(missing, headers=owner.headers), 404, "NOT_FOUND")
    assert_error(client.post(missing, json={"body": "x"}, headers=owner.headers), 404, "NOT_FOUND")


def test_comments_count_toward_the_storage_limit(client):
    root = superadmin(client)
    owner, (member,), project = team(client, "member")
    small_plan(client, root, owner, storage_bytes=30)
    issue = make_issue(client, owner, project, title="abc")  # 3 bytes
    url = _comments_url(owner, project, issue)

    def current() -> int:
        body = assert_error(
            client.post(url, json={"body": "x" * 31}, headers=owner.headers), 402, "PLAN_LIMIT_REACHED"
        )
        assert (body["resource"], body["limit"]) == ("storage_bytes", 30)
        stats = client.get(f"{API}/admin/stats", headers=root.headers).get_json()
        # The counter the limit reads agrees with the bytes computed from the data.
        assert body["current"] == stats["storage_used_bytes"]
        return body["current"]

    first = comment(client, owner, project, issue["key"], "ação" * 3, who=member)  # 18 bytes
    assert current() == 21
    refused = client.post(url, json={"body": "y" * 10}, headers=owner.headers)
    assert_error(refused, 402, "PLAN_LIMIT_REACHED")
    second = comment(client, owner, project, issue["key"], "y" * 9)
    assert current() == 30
    # Growing a comment past the limit is refused; shrinking frees bytes.
    comment_url = f"{url}/{first['id']}"
    grow = client.patch(comment_url, json={"body": "ação" * 3 + "!"}, headers=member.headers)
    assert_error(grow, 402, "PLAN_LIMIT_REACHED")
    assert client.patch(comment_url, json={"body": "ok"}, headers=member.headers).status_code == 200
    assert current() == 14
    assert client.delete(f"{url}/{second['id']}", headers=owner.headers).status_code == 204
    assert current() == 5
    # Deleting the issue frees its comments' bytes with its own.
    assert client.delete(issue_url(owner, project, issue["key"]), headers=owner.headers).status_code == 204
    other = make_issue(client, owner, project, title="z")
    url = _comments_url(owner, project, other)
    assert current() == 1


def test_a_refused_comment_leaves_nothing_behind(client):
    root = superadmin(client)
    owner, (member,), project = team(client, "member")
    small_plan(client, root, owner, storage_bytes=10)
    issue = make_issue(client, owner, project, title="abc", assignee_id=member.user_id)
    url = _comments_url(owner, project, issue)
    before = client.get(issue_url(owner, project, issue["key"]) + "/activity", headers=owner.headers)
    assert_error(client.post(url, json={"body": "x" * 8}, headers=owner.headers), 402, "PLAN_LIMIT_REACHED")
    assert client.get(url, headers=owner.headers).get_json()["total"] == 0
    after = client.get(issue_url(owner, project, issue["key"]) + "/activity", headers=owner.headers)
    assert after.get_json()["total"] == before.get_json()["total"]
    inbox = client.get(f"{API}/notifications", headers=member.headers).get_json()
    assert [n["kind"] for n in inbox["notifications"]] == ["assigned"]


def test_a_suspended_organization_answers_403(client, setup):
    owner, _admin, member, _viewer, project, issue = setup
    root = superadmin(client)
    created = comment(client, owner, project, issue["key"], "antes")
    client.patch(f"{API}/admin/organizations/{owner.org_id}", json={"suspended": True}, headers=root.headers)
    url = _comments_url(owner, project, issue)
    for response in (
        client.get(url, headers=member.headers),
        client.post(url, json={"body": "x"}, headers=member.headers),
        client.delete(f"{url}/{created['id']}", headers=owner.headers),
    ):
        assert_error(response, 403, "ORGANIZATION_SUSPENDED")
