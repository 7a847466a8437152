"""The list's `total` for status, type, priority, assignee and label filters comes from counts
kept on write: after every kind of change it must equal the issues that really match.

Each check compares, for many filter combinations, the list's `total` with the issues that
match it among every issue read through the API, and with the same list narrowed by a `q`
every title holds (a search is never answered by the counts, so it counts the issues).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import flask_migrate
import pytest
import sqlalchemy as sa
from sqlalchemy import event

from app import create_app
from extensions import db
from tests.tracker.collab_support import team
from tests.tracker.support import (
    issues_url,
    make_issue,
    make_label,
    make_project,
    project_url,
    register,
    statuses,
)

WORD = "counted"  # in every title of these tests


def everything(client, tenant, project) -> list[dict]:
    found, page = [], 1
    while True:
        body = client.get(
            issues_url(tenant, project), query_string={"per_page": 100, "page": page}, headers=tenant.headers
        ).get_json()
        found += body["issues"]
        if len(found) >= body["total"]:
            return found
        page += 1


def matches(issue: dict, filters: dict) -> bool:
    labels = {label["id"] for label in issue["labels"]}
    assignee = issue["assignee"]["id"] if issue["assignee"] else None
    return (
        ("status_id" not in filters or issue["status"]["id"] in filters["status_id"])
        and ("type" not in filters or issue["type"] in filters["type"])
        and ("priority" not in filters or issue["priority"] in filters["priority"])
        and ("assignee_id" not in filters or assignee == filters["assignee_id"])
        and ("label_id" not in filters or bool(labels & set(filters["label_id"])))
    )


@contextmanager
def statements(app):
    seen: list[str] = []

    def capture(_conn, _cursor, statement, *_args):
        seen.append(statement)

    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", capture)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", capture)


def total(client, tenant, project, filters: dict, **extra) -> int:
    response = client.get(
        issues_url(tenant, project), query_string={**filters, **extra, "per_page": 1}, headers=tenant.headers
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()["total"]


class Board:
    """A project with two people to assign, three labels, and the filter combinations to check."""

    def __init__(self, client, app):
        self.client, self.app = client, app
        self.owner, (self.member,), self.project = team(client, "member")
        self.status = {
            category: s["id"] for category, s in statuses(client, self.owner, self.project).items()
        }
        self.labels = [
            make_label(client, self.owner, self.project, name)["id"] for name in ("ux", "api", "db")
        ]

    def create(self, **fields) -> str:
        issue = make_issue(self.client, self.owner, self.project, title=f"Counted {fields}", **fields)
        return issue["key"]

    def url(self, key: str = "") -> str:
        return (
            f"{issues_url(self.owner, self.project)}/{key}" if key else issues_url(self.owner, self.project)
        )

    def patch(self, key: str, **changes) -> None:
        response = self.client.patch(self.url(key), json=changes, headers=self.owner.headers)
        assert response.status_code == 200, response.get_json()

    def bulk(self, keys: list[str], **changes) -> None:
        response = self.client.post(
            project_url(self.owner, self.project) + "/bulk-edit",
            json={"keys": keys, "changes": changes},
            headers=self.owner.headers,
        )
        assert response.status_code == 200, response.get_json()

    def delete(self, key: str) -> None:
        assert self.client.delete(self.url(key), headers=self.owner.headers).status_code == 204

    def filter_sets(self) -> list[dict]:
        s, (ux, api, dbl) = self.status, self.labels
        owner, member = self.owner.user_id, self.member.user_id
        return [
            {"status_id": [s["todo"]]},
            {"status_id": [s["todo"], s["in_progress"]]},
            {"priority": ["high"]},
            {"status_id": [s["todo"], s["done"]], "priority": ["high", "urgent"]},
            {"type": ["bug"]},
            {"type": ["bug", "story"], "priority": ["medium", "high", "urgent"]},
            {"type": ["bug"], "status_id": [s["backlog"]]},
            {"assignee_id": member},
            {"assignee_id": owner, "status_id": [s["todo"], s["in_progress"], s["backlog"]]},
            {"assignee_id": member, "priority": ["none", "low"], "type": ["task"]},
            {"label_id": [ux]},
            {"label_id": [api, ux]},
            {"label_id": [ux, api], "status_id": [s["todo"]]},
            {"label_id": [api], "assignee_id": member, "type": ["bug", "task"]},
            {"label_id": [ux, dbl], "priority": ["high", "urgent", "none"]},
            # Three labels are counted on the issues: the same answer by the other road.
            {"label_id": [ux, api, dbl]},
        ]

    def check(self) -> None:
        issues = everything(self.client, self.owner, self.project)
        for filters in self.filter_sets():
            expected = sum(1 for issue in issues if matches(issue, filters))
            with statements(self.app) as seen:
                counted = total(self.client, self.owner, self.project, filters)
            from_counts = any("issue_counts" in sql or "issue_label_counts" in sql for sql in seen)
            assert from_counts == (len(filters.get("label_id", ())) <= 2), filters
            searched = total(self.client, self.owner, self.project, filters, q=WORD)
            assert (counted, searched) == (expected, expected), filters


@pytest.fixture
def board(client, app):
    return Board(client, app)


def test_totals_stay_exact_through_every_change(board):
    s, (ux, api, dbl) = board.status, board.labels
    owner, member = board.owner.user_id, board.member.user_id
    keys = [
        board.create(),
        board.create(type="bug", priority="high", status_id=s["todo"], assignee_id=member, label_ids=[ux]),
        board.create(type="bug", priority="urgent", status_id=s["todo"], label_ids=[ux, api]),
        board.create(type="story", priority="medium", status_id=s["in_progress"], assignee_id=owner),
        board.create(
            type="task", priority="low", status_id=s["backlog"], assignee_id=member, label_ids=[api, dbl]
        ),
        board.create(type="bug", priority="high", status_id=s["backlog"], label_ids=[ux, api, dbl]),
        board.create(type="epic", priority="none", status_id=s["done"], assignee_id=member, label_ids=[dbl]),
    ]
    board.check()

    # One field at a time, then several at once, labels added and removed.
    board.patch(keys[0], status_id=s["todo"])
    board.patch(keys[1], priority="low")
    board.patch(keys[2], type="story")
    board.patch(keys[3], assignee_id=member)
    board.patch(keys[4], assignee_id=None, label_ids=[ux])
    board.patch(keys[5], label_ids=[])
    board.patch(
        keys[6], status_id=s["todo"], priority="urgent", type="bug", assignee_id=owner, label_ids=[api, ux]
    )
    # Only the title and the board position: nothing counted moves.
    board.patch(keys[6], title="Counted again", rank=5)
    board.check()

    # A board move: the card changes column and place in one request.
    board.patch(keys[1], status_id=s["in_progress"], rank=7)
    board.bulk(keys[:4], status_id=s["done"], priority="high")
    board.bulk([keys[0], keys[4], keys[6]], assignee_id=None, add_label_ids=[dbl], remove_label_ids=[ux])
    board.bulk(keys, add_label_ids=[api])
    board.check()

    # A sub-tree deleted at once, then a lone issue.
    child = board.create(
        parent_id=_issue_id(board, keys[2]), type="subtask", label_ids=[ux], status_id=s["todo"]
    )
    board.create(parent_id=_issue_id(board, child), type="subtask", assignee_id=member, status_id=s["todo"])
    board.check()
    board.delete(keys[2])
    board.delete(keys[5])
    board.check()


def _issue_id(board: Board, key: str) -> str:
    return board.client.get(board.url(key), headers=board.owner.headers).get_json()["id"]


def test_a_deleted_label_or_status_leaves_the_counts_exact(board):
    s, (ux, api, dbl) = board.status, board.labels
    for labels in ([ux], [ux, api], [api, dbl], []):
        board.create(type="bug", status_id=s["todo"], label_ids=labels)
    unused = board.client.post(
        project_url(board.owner, board.project) + "/statuses",
        json={"name": "Parked", "category": "backlog", "color": "#cccccc"},
        headers=board.owner.headers,
    ).get_json()["id"]
    key = board.create(status_id=unused, label_ids=[ux])
    board.patch(key, status_id=s["todo"])
    gone = board.client.delete(
        project_url(board.owner, board.project) + f"/statuses/{unused}", headers=board.owner.headers
    )
    assert gone.status_code == 204, gone.get_json()
    gone = board.client.delete(
        project_url(board.owner, board.project) + f"/labels/{ux}", headers=board.owner.headers
    )
    assert gone.status_code == 204
    board.check()
    # The deleted label matches nothing, alone or with another.
    assert total(board.client, board.owner, board.project, {"label_id": [ux]}) == 0
    assert total(board.client, board.owner, board.project, {"label_id": [ux, api]}) == 2


def test_another_project_keeps_its_own_counts(board, client):
    s = board.status
    board.create(type="bug", status_id=s["todo"])
    other = make_project(client, board.owner, key="OPS", name="Ops")
    other_status = statuses(client, board.owner, other)["todo"]["id"]
    make_issue(client, board.owner, other, title="Counted elsewhere", type="bug", status_id=other_status)
    assert total(client, board.owner, board.project, {"type": ["bug"]}) == 1
    assert total(client, board.owner, other, {"type": ["bug"]}) == 1
    board.check()


def test_a_nil_assignee_is_no_one(board):
    board.create()
    nil = "00000000-0000-0000-0000-000000000000"
    assert total(board.client, board.owner, board.project, {"assignee_id": nil}) == 0


THREADS = 4
PER_THREAD = 4


@pytest.mark.committing
def test_concurrent_creates_and_moves_lose_no_count(app):
    client = app.test_client()
    tenant = register(client)
    project = make_project(client, tenant, key="RACE")
    url = issues_url(tenant, project)
    status = {category: s["id"] for category, s in statuses(client, tenant, project).items()}
    label = make_label(client, tenant, project, "hot")["id"]
    same = {"type": "bug", "priority": "high", "status_id": status["todo"], "label_ids": [label]}
    moving = [
        make_issue(client, tenant, project, title=f"Counted {n}", **same)["key"] for n in range(THREADS)
    ]
    barrier = threading.Barrier(THREADS)
    failures: list[object] = []

    def worker(n: int) -> None:
        own = app.test_client()
        barrier.wait()
        for i in range(PER_THREAD):
            created = own.post(url, json={"title": f"Counted {n}-{i}", **same}, headers=tenant.headers)
            # Each thread moves its own issue back and forth: the same counter rows, from every side.
            target = status["done"] if i % 2 == 0 else status["todo"]
            moved = own.patch(f"{url}/{moving[n]}", json={"status_id": target}, headers=tenant.headers)
            if created.status_code != 201 or moved.status_code != 200:
                failures.append((created.status_code, moved.status_code))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert failures == []
    created = THREADS * PER_THREAD
    # Every thread moved its issue an even number of times: back in todo.
    for filters in (
        {"status_id": [status["todo"]]},
        {"type": ["bug"], "priority": ["high"]},
        {"label_id": [label]},
    ):
        assert total(client, tenant, project, filters) == created + THREADS
        assert total(client, tenant, project, filters, q=WORD) == created + THREADS
    assert total(client, tenant, project, {"status_id": [status["done"]]}) == 0


@pytest.mark.committing
def test_the_migration_counts_the_issues_already_stored(fresh_database_url):
    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": fresh_database_url})
    with app.app_context():
        flask_migrate.upgrade(revision="heads")
    board = Board(app.test_client(), app)
    s, (ux, api, dbl) = board.status, board.labels
    board.create(type="bug", status_id=s["todo"], label_ids=[ux, api])
    board.create(type="story", priority="high", assignee_id=board.member.user_id, label_ids=[api, dbl])
    board.create(status_id=s["done"], assignee_id=board.owner.user_id)
    board.create(type="bug", priority="urgent", label_ids=[ux])
    with app.app_context():
        # Back to before the counts, and forward: the migration fills them from the issues.
        flask_migrate.downgrade(revision="0027")
        with db.engine.connect() as conn:
            assert "issue_counts" not in sa.inspect(conn).get_table_names()
        flask_migrate.upgrade(revision="heads")
    board.check()
    assert total(board.client, board.owner, board.project, {"label_id": [ux, api]}) == 3
    with app.app_context():
        db.engine.dispose()
