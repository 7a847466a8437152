"""Comments, history and notifications at scale, on PostgreSQL, through the API.

    .venv/bin/python benchmarks/tracker_collab.py [--issues 1000000] [--comments 2000000] [--runs 40]

Builds on ``tracker_issues.py`` (same database, tenant and issue loader): the
project holds ``--issues`` issues, each with its ``created`` history entry;
``--comments`` comments are spread over them, each with its ``comment_added``
entry, and one issue (the "busy" one) has 200 comments and 200 field changes.
One member has 10,000 notifications (a third unread); the others share
``--notifications`` more. Loaded with COPY the first time; reused later unless
``--reload`` is given.

Then it times, with a real bearer token through the Flask test client:
- the busy issue's page data: the issue, its 200 comments and its 401-entry
  timeline (created, 200 changes, 200 comments), in pages of 100;
- the inbox of the member with 10,000 notifications: first page, unread only,
  and a page deep in the list;
- creating a comment on the busy issue that notifies 10 people (creator,
  assignee and watchers), e-mail queued in the outbox, not sent;
- the PAGES, signed in through the login page (cookie session), rendered by
  Jinja with everything they read: the busy issue's page (details, members,
  labels, relations, sub-issues and its timeline, comments rendered from
  Markdown and sanitised, interleaved with the history: the newest 50 entries,
  older ones on request), the older entries' htmx fragment, and the inbox page
  of the member with 10,000 notifications (all, unread only, a deep page),
  with the unread count of the navigation.

``--pages-only`` skips the API figures. Targets: the issue page under 100 ms
and the inbox page under 50 ms at the median.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
import uuid
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import flask_migrate  # noqa: E402
import psycopg  # noqa: E402
import tracker_issues as base  # noqa: E402
from sqlalchemy import event  # noqa: E402

from app import create_app  # noqa: E402
from config import normalize_database_url  # noqa: E402
from extensions import db  # noqa: E402

BUSY_COMMENTS = 200
BUSY_CHANGES = 200
INBOX = 10_000
FOLLOWERS = 10
COLLAB_TABLES = ("comments", "issue_activity", "issue_watchers", "notifications", "notification_emails")
WORDS = [
    "reproduzi",
    "no",
    "Safari,",
    "o",
    "botão",
    "some",
    "depois",
    "do",
    "segundo",
    "clique;",
    "acho",
    "que",
    "é",
    "o",
    "mesmo",
    "problema",
    "do",
    "checkout",
    "de",
    "ontem,",
    "vou",
    "olhar",
    "o",
    "log;",
    "testei",
    "de",
    "novo",
    "com",
    "a",
    "grade",
    "34",
    "a",
    "40",
    "e",
    "o",
    "estoque",
    "veio",
    "certo;",
    "@fulano",
    "pode",
    "revisar?",
]


def _plain(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


def loaded(url: str) -> int:
    with psycopg.connect(_plain(url)) as conn:
        return conn.execute("SELECT count(*) FROM comments").fetchone()[0]


def people(url: str, members: list[uuid.UUID]) -> tuple[uuid.UUID, uuid.UUID, list[uuid.UUID]]:
    """The owner (who acts), the member whose inbox is measured, and everyone else."""
    with psycopg.connect(_plain(url)) as conn:
        owner = conn.execute("SELECT id FROM users WHERE email = %s", (base.OWNER_EMAIL,)).fetchone()[0]
    reader, *others = sorted(m for m in members if m != owner)
    return owner, reader, others


def load_collaboration(
    url: str, project, members: list[uuid.UUID], comments: int, spread: int, seed: int
) -> None:
    """COPY comments, history, watchers and notifications; secondary indexes rebuilt afterwards."""
    rng = random.Random(seed)
    owner, reader, others = people(url, members)
    with psycopg.connect(_plain(url)) as conn:
        for table in COLLAB_TABLES:
            conn.execute(f"TRUNCATE {table} CASCADE")
        indexes = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = ANY(%s) AND indexname NOT LIKE 'pk_%%'",
            (list(COLLAB_TABLES),),
        ).fetchall()
        for name, _ in indexes:
            conn.execute(f'DROP INDEX "{name}"')
        conn.execute("SET session_replication_role = replica")
        began = time.perf_counter()
        issues = conn.execute(
            "SELECT id, number, created_at FROM issues WHERE project_id = %s ORDER BY number", (project.id,)
        ).fetchall()
        busy_id = issues[len(issues) // 2][0]
        # The busy issue: created by one follower, assigned to another, watched by the rest.
        followers = rng.sample(others, FOLLOWERS)
        conn.execute(
            "UPDATE issues SET created_by_id = %s, assignee_id = %s WHERE id = %s",
            (followers[0], followers[1], busy_id),
        )
        with conn.cursor().copy("COPY issue_watchers (issue_id, user_id, created_at) FROM STDIN") as copy:
            for user_id in followers[2:]:
                copy.write_row((busy_id, user_id, datetime.now(UTC)))
        text_bytes = 0
        activity_columns = "issue_id, actor_id, kind, field, old_value, new_value, created_at"
        comment_columns = "id, issue_id, author_id, body, created_at, updated_at, edited"
        with conn.cursor().copy(f"COPY comments ({comment_columns}) FROM STDIN") as comment_copy:
            comment_rows = []
            for n in range(comments):
                issue_id, _number, created = issues[rng.randrange(len(issues))]
                comment_rows.append(
                    (uuid.uuid4(), issue_id, rng.choice(members), created + timedelta(hours=n % 500))
                )
            for n in range(BUSY_COMMENTS):
                created = issues[len(issues) // 2][2] + timedelta(minutes=n)
                comment_rows.append((uuid.uuid4(), busy_id, rng.choice(members), created))
            for comment_id, issue_id, author_id, created in comment_rows:
                body = " ".join(rng.sample(WORDS, rng.randrange(5, 25)))
                text_bytes += len(body.encode())
                comment_copy.write_row((comment_id, issue_id, author_id, body, created, created, False))
        with conn.cursor().copy(f"COPY issue_activity ({activity_columns}) FROM STDIN") as copy:
            for issue_id, _number, created in issues:
                copy.write_row((issue_id, owner, "created", None, None, None, created))
            for comment_id, issue_id, author_id, created in comment_rows:
                copy.write_row(
                    (
                        issue_id,
                        author_id,
                        "comment_added",
                        None,
                        None,
                        json.dumps({"id": str(comment_id)}),
                        created,
                    )
                )
            busy_created = issues[len(issues) // 2][2]
            for n in range(BUSY_CHANGES):
                old, new = (json.dumps(f"Título {n}"), json.dumps(f"Título {n + 1}"))
                moment = busy_created + timedelta(minutes=n, seconds=30)
                copy.write_row((busy_id, rng.choice(members), "updated", "title", old, new, moment))
        kinds = ("assigned", "mentioned", "commented", "status_changed")
        with conn.cursor().copy(
            "COPY notifications (id, user_id, issue_id, actor_id, kind, read_at, created_at) FROM STDIN"
        ) as copy:
            start = datetime.now(UTC) - timedelta(days=365)
            for n in range(INBOX + spread):
                user_id = reader if n < INBOX else rng.choice(others)
                moment = start + timedelta(seconds=n * 30)
                read_at = None if rng.random() < 1 / 3 else moment + timedelta(hours=1)
                issue_id = issues[rng.randrange(len(issues))][0]
                copy.write_row((uuid.uuid4(), user_id, issue_id, owner, rng.choice(kinds), read_at, moment))
        conn.execute("SET session_replication_role = DEFAULT")
        conn.execute(
            "UPDATE projects SET storage_bytes = storage_bytes + %s WHERE id = %s", (text_bytes, project.id)
        )
        print(
            f"copied {len(comment_rows):,} comments, {len(issues) + len(comment_rows) + BUSY_CHANGES:,} history "
            f"entries and {INBOX + spread:,} notifications in {time.perf_counter() - began:.0f}s"
        )
        began = time.perf_counter()
        for _, definition in indexes:
            conn.execute(definition)
        conn.commit()
        print(f"rebuilt {len(indexes)} indexes in {time.perf_counter() - began:.0f}s")
    with psycopg.connect(_plain(url), autocommit=True) as conn:
        for table in COLLAB_TABLES:
            conn.execute(f"VACUUM ANALYZE {table}")


def busy_issue(url: str, project) -> str:
    with psycopg.connect(_plain(url)) as conn:
        number = conn.execute(
            "SELECT i.number FROM issues i JOIN issue_watchers w ON w.issue_id = i.id "
            "WHERE i.project_id = %s LIMIT 1",
            (project.id,),
        ).fetchone()[0]
    return f"{base.PROJECT_KEY}-{number}"


def reader_email(url: str, reader: uuid.UUID) -> str:
    with psycopg.connect(_plain(url)) as conn:
        return conn.execute("SELECT email FROM users WHERE id = %s", (reader,)).fetchone()[0]


class StatementClock:
    """Time spent in SQL statements (from send to last row), to tell the database's share of a
    request from Python's when the machine is busy."""

    def __init__(self, engine) -> None:
        self.spent = 0.0
        event.listen(engine, "before_cursor_execute", self._before)
        event.listen(engine, "after_cursor_execute", self._after)

    def _before(self, conn, *_args) -> None:
        conn.info["statement_began"] = time.perf_counter()

    def _after(self, conn, *_args) -> None:
        self.spent += time.perf_counter() - conn.info.pop("statement_began")


def timed(clock: StatementClock, send, runs: int, warm_up: int = 3):
    """(milliseconds per request, of which in SQL statements, last response)."""
    for _ in range(warm_up):
        send()
    totals, in_sql = [], []
    response = None
    for _ in range(runs):
        clock.spent = 0.0
        began = time.perf_counter()
        response = send()
        totals.append((time.perf_counter() - began) * 1000)
        in_sql.append(clock.spent * 1000)
        assert response.status_code < 300, response.get_json()
    return totals, in_sql, response


def report(name: str, samples: list[float], in_sql: list[float], note: str = "") -> None:
    p95 = statistics.quantiles(samples, n=20)[-1]
    print(
        f"{name:<76} {statistics.median(samples):>6.1f}ms {p95:>6.1f}ms {statistics.median(in_sql):>6.1f}ms {note}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", base.DEFAULT_URL))
    parser.add_argument("--issues", type=int, default=1_000_000)
    parser.add_argument("--comments", type=int, default=2_000_000)
    parser.add_argument("--notifications", type=int, default=200_000, help="spread over the other members")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--reload", action="store_true", help="load the data set again")
    parser.add_argument("--pages-only", action="store_true", help="time only the pages")
    args = parser.parse_args()

    url = normalize_database_url(args.database_url)
    base.ensure_database(url)
    app = create_app({"SQLALCHEMY_DATABASE_URI": url})
    with app.app_context():
        flask_migrate.upgrade(revision="heads")
    project, members, status_ids, label_ids = base.setup_tenant(app)
    reloaded = args.reload or base.issue_count(url, project) != args.issues
    if reloaded:
        base.load_issues(app, url, project, members, status_ids, label_ids, args.issues, args.seed)
    if reloaded or loaded(url) != args.comments + BUSY_COMMENTS:
        load_collaboration(url, project, members, args.comments, args.notifications, args.seed)
    print(f"{base.issue_count(url, project):,} issues, {loaded(url):,} comments")

    client = app.test_client()

    def sign_in(email: str) -> dict:
        response = client.post(f"{base.API}/auth/login", json={"email": email, "password": base.PASSWORD})
        return {"Authorization": f"Bearer {response.get_json()['access_token']}"}

    owner_id, reader_id, _others = people(url, members)
    owner = sign_in(base.OWNER_EMAIL)
    reader = sign_in(reader_email(url, reader_id))
    issue_path = f"{base.API}/workspaces/{base.SLUG}/projects/{project.id}/issues/{busy_issue(url, project)}"

    with app.app_context():
        clock = StatementClock(db.engine)
    print(f"\n{'scenario':<76} {'median':>8} {'p95':>8} {'in SQL':>8}")
    time_pages(app, clock, project, busy_issue(url, project), reader_email(url, reader_id), args.runs)
    if not args.pages_only:
        time_api(client, clock, url, args.runs, owner, reader, owner_id, issue_path)

    print(
        f"\n{args.runs} timed requests each (reads after 3 warm-up requests); Flask test client "
        "(API: bearer token; pages: the login page's cookie)."
    )
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(
        f"machine: {os.cpu_count()} CPUs, load average {load} (other work on the machine inflates the figures)"
    )
    print(f"date {date.today().isoformat()}, PostgreSQL at {url.split('@')[-1]}")


def time_pages(app, clock: StatementClock, project, key: str, reader: str, runs: int) -> None:
    """The issue page and the inbox page, as a browser asks for them."""

    def signed_in(email: str):
        browser = app.test_client()
        response = browser.post("/login", data={"email": email, "senha": base.PASSWORD})
        assert response.status_code == 302, response.get_data(as_text=True)[:500]
        return browser

    owner, inbox_reader = signed_in(base.OWNER_EMAIL), signed_in(reader)
    page = f"/tracker/w/{base.SLUG}/p/{project.id}/issues/{key}"
    fragment = {"HX-Request": "true"}
    scenarios = (
        ("page: busy issue (200 comments; timeline: newest 50 of 401)", owner, page, {}),
        ("page: its older timeline entries, next 50 (htmx fragment)", owner, page + "/timeline?skip=50", fragment),
        ("page: inbox of 10,000, first page (50), with the nav's unread count", inbox_reader, "/tracker/notifications", {}),
        ("page: inbox of 10,000, unread only", inbox_reader, "/tracker/notifications?unread=1", {}),
        ("page: inbox of 10,000, page 100 (htmx fragment)", inbox_reader, "/tracker/notifications?page=100", fragment),
    )  # fmt: skip
    for name, browser, path, headers in scenarios:
        cpu: list[float] = []

        def send(browser=browser, path=path, headers=headers, cpu=cpu):
            began = time.process_time()
            response = browser.get(path, headers=headers)
            cpu.append((time.process_time() - began) * 1000)
            return response

        samples, in_sql, response = timed(clock, send, runs)
        # This process's CPU time (the app's Python, not the database's): what a busy machine inflates least.
        app_cpu = statistics.median(cpu[-runs:])
        report(name, samples, in_sql, f"app CPU {app_cpu:.1f}ms, {len(response.get_data()) // 1024} KiB")


def time_api(client, clock: StatementClock, url: str, runs: int, owner, reader, owner_id, issue_path) -> None:
    page_reads = [("issue", issue_path, {})]
    for name, path in (("comments", issue_path + "/comments"), ("timeline", issue_path + "/activity")):
        total = client.get(path, query_string={"per_page": 1}, headers=owner).get_json()["total"]
        for page in range(1, (total + 99) // 100 + 1):
            last = min(page * 100, total)
            page_reads.append(
                (f"{name} {page * 100 - 99}-{last} of {total}", path, {"per_page": 100, "page": page})
            )
    totals, sql_totals = [0.0] * runs, [0.0] * runs
    for name, path, query in page_reads:
        samples, in_sql, _ = timed(
            clock,
            lambda path=path, query=query: client.get(path, query_string=query, headers=owner),
            runs,
        )
        totals = [t + s for t, s in zip(totals, samples, strict=True)]
        sql_totals = [t + s for t, s in zip(sql_totals, in_sql, strict=True)]
        report(f"busy issue: {name}", samples, in_sql)
    report(f"busy issue page data: the {len(page_reads)} requests above, summed", totals, sql_totals)

    for name, query in (
        ("inbox of 10,000: first page (50)", {}),
        ("inbox of 10,000: unread only, first page", {"unread": "true"}),
        ("inbox of 10,000: page 100", {"page": 100}),
    ):
        samples, in_sql, response = timed(
            clock,
            lambda query=query: client.get(f"{base.API}/notifications", query_string=query, headers=reader),
            runs,
        )
        body = response.get_json()
        report(name, samples, in_sql, f"total {body['total']:,}, unread {body['unread']:,}")

    with psycopg.connect(_plain(url)) as conn:
        last_entry = conn.execute("SELECT max(id) FROM issue_activity").fetchone()[0]
    began_writes = datetime.now(UTC)
    created = []

    def create() -> object:
        response = client.post(
            issue_path + "/comments", json={"body": f"Comentário {len(created)} de medição"}, headers=owner
        )
        created.append(response.get_json()["id"])
        return response

    samples, in_sql, _ = timed(clock, create, runs, warm_up=0)
    report(f"create a comment notifying {FOLLOWERS} people (e-mail queued, not sent)", samples, in_sql)
    for comment_id in created:
        assert client.delete(f"{issue_path}/comments/{comment_id}", headers=owner).status_code == 204
    with psycopg.connect(_plain(url)) as conn:
        # Leave the data set as it was: the measuring comments' notifications and history go too.
        conn.execute(
            "DELETE FROM notifications WHERE actor_id = %s AND created_at >= %s", (owner_id, began_writes)
        )
        conn.execute("DELETE FROM issue_activity WHERE id > %s", (last_entry,))
        conn.commit()


if __name__ == "__main__":
    main()
