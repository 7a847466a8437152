"""Issue list latency with 1,000,000 issues in one workspace, on PostgreSQL, through the API.

    .venv/bin/python benchmarks/tracker_issues.py [--issues 1000000] [--runs 20] [--reload]

Uses its own database (``giro_bench_tracker`` by default, created when
missing), migrated to the current schema. The first run loads the data set with
COPY (a few minutes) and vacuums it as autovacuum would; later runs reuse it
unless ``--reload`` is given. Then it times, through the Flask test client with
a real bearer token, first pages (25 issues) of filtered and sorted lists and
title searches, and one issue read; each figure is the min/median/max over 3
rounds of the round's median of ``--runs`` requests. For every list it also
shows the statements one request runs and the heap pages its count reads
(``EXPLAIN (ANALYZE, BUFFERS)`` of the counting statement: an index-only count
reads none). Then it creates, retitles and deletes issues (the project ends as
it began) and prints the same figures for those writes, and ``uptime``.

Data set: one organization (enterprise plan), one workspace, one project with
every issue, 25 members as assignees, 8 labels. Titles are built from a
vocabulary of verbs, product areas and contexts; status is uniform over the
five default statuses, priority and type are skewed as in real trackers,
creation dates span two years, 40% of issues have a due date, about half carry
a label.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from array import array
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import flask_migrate  # noqa: E402
import psycopg  # noqa: E402
from sqlalchemy import event, select  # noqa: E402

from app import create_app  # noqa: E402
from config import normalize_database_url  # noqa: E402
from extensions import db  # noqa: E402
from models.tracker import (  # noqa: E402
    Label,
    Membership,
    Plan,
    Project,
    Status,
    Workspace,
)

ROUNDS = 3
PER_PAGE = 25
from services import auth as auth_service  # noqa: E402
from services.tracker import accounts, issue_counts, search, workspaces  # noqa: E402

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/giro_bench_tracker"
API = "/tracker/api/v1"
OWNER_EMAIL = "bench-owner@giro.test"
PASSWORD = "bench-password-1"
SLUG = "bench"
PROJECT_KEY = "BENCH"

VERBS = [
    "Fix",
    "Add",
    "Update",
    "Refactor",
    "Remove",
    "Investigate",
    "Document",
    "Optimize",
    "Migrate",
    "Test",
    "Review",
    "Redesign",
]
AREAS = [
    "checkout",
    "login",
    "cart",
    "inventory sync",
    "payment gateway",
    "size grid",
    "store locator",
    "price rules",
    "stock transfer",
    "product page",
    "search results",
    "order history",
    "return flow",
    "gift card",
    "loyalty points",
    "shipping quote",
    "invoice export",
    "barcode scanner",
    "campaign banner",
    "supplier portal",
    "warehouse picking",
    "replenishment report",
    "customer profile",
    "newsletter signup",
    "coupon engine",
    "tax calculation",
    "sales dashboard",
    "mobile menu",
    "footer links",
    "image upload",
    "CSV import",
    "audit trail",
    "permissions matrix",
    "password reset",
    "session timeout",
    "webhook retry",
    "email template",
    "push notification",
    "PDF receipt",
    "store opening hours",
]
CONTEXTS = [
    "on mobile",
    "in Safari",
    "for São Paulo stores",
    "after deploy",
    "under load",
    "for new customers",
    "in admin panel",
    "on Black Friday",
    "with slow network",
    "for footwear",
    "for kids collection",
    "in the API",
    "on tablets",
    "for returning customers",
    "in Portuguese",
    "with screen readers",
    "on checkout step 2",
    "in the nightly job",
    "for franchise stores",
    "in the DC",
]
PRODUCT_LINES = ["Tênis", "Sandália", "Bota", "Sapatilha", "Mocassim", "Chinelo", "Scarpin", "Tamanco"]
MODELS = [
    "Aurora",
    "Brisa",
    "Cerrado",
    "Duna",
    "Estrela",
    "Farol",
    "Garoa",
    "Horizonte",
    "Ipê",
    "Jangada",
    "Lagoa",
    "Maré",
    "Neblina",
    "Orla",
    "Pampa",
    "Quaresma",
    "Restinga",
    "Serra",
    "Trilha",
    "Urca",
    "Vereda",
    "Xaréu",
    "Yara",
    "Zéfiro",
    "Caatinga",
]
PRODUCT_REFS = 20_000
PRIORITY_WEIGHTS = [30, 25, 25, 15, 5]  # none, low, medium, high, urgent (stored ranks 0..4)
TYPES = ["task", "bug", "story", "epic", "subtask"]
TYPE_WEIGHTS = [45, 30, 18, 2, 5]
LABELS = [
    ("bug", "#ef4444"),
    ("frontend", "#3b82f6"),
    ("backend", "#10b981"),
    ("urgent-fix", "#f97316"),
    ("ux", "#a855f7"),
    ("tech-debt", "#64748b"),
    ("retail", "#eab308"),
    ("mobile", "#06b6d4"),
]
MEMBERS = 25


def ensure_database(url: str) -> None:
    """Create the benchmark database when it does not exist yet."""
    conninfo = psycopg.conninfo.conninfo_to_dict(url.replace("postgresql+psycopg://", "postgresql://"))
    name = conninfo["dbname"]
    admin = {**conninfo, "dbname": "postgres"}
    with psycopg.connect(**admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')
            print(f"created database {name}")


def setup_tenant(app) -> tuple[Project, list[uuid.UUID], list[uuid.UUID], list[uuid.UUID]]:
    """Owner, organization on enterprise, workspace, project, members and labels (idempotent)."""
    with app.app_context():
        owner = auth_service.find_user_by_email(OWNER_EMAIL)
        if owner is None:
            owner = auth_service.create_user(email=OWNER_EMAIL, password=PASSWORD, name="Bench Owner")
            organization = accounts.create_organization("Bench Retail", owner, "enterprise")
            accounts.create_workspace(organization, "Bench", SLUG)
            for n in range(MEMBERS - 1):
                member = auth_service.create_user(
                    email=f"bench-member-{n}@giro.test", password=PASSWORD, name=f"Member {n}"
                )
                db.session.add(Membership(organization_id=organization.id, user_id=member.id, role="member"))
            db.session.flush()
            workspaces.create_project(owner, SLUG, {"name": "Bench", "key": PROJECT_KEY})
            project = db.session.scalar(select(Project).where(Project.key == PROJECT_KEY))
            for name, color in LABELS:
                db.session.add(Label(project_id=project.id, name=name, color=color))
            db.session.commit()
        workspace = db.session.scalar(select(Workspace).where(Workspace.slug == SLUG))
        project = db.session.scalar(
            select(Project).where(Project.workspace_id == workspace.id, Project.key == PROJECT_KEY)
        )
        member_ids = list(
            db.session.scalars(
                select(Membership.user_id).where(Membership.organization_id == project.organization_id)
            )
        )
        status_ids = list(
            db.session.scalars(
                select(Status.id).where(Status.project_id == project.id).order_by(Status.position)
            )
        )
        label_ids = list(db.session.scalars(select(Label.id).where(Label.project_id == project.id)))
        db.session.expunge(project)
        return project, member_ids, status_ids, label_ids


def load_issues(
    app, url: str, project: Project, members, status_ids, label_ids, count: int, seed: int
) -> None:
    """Bulk-load ``count`` issues with COPY; secondary indexes are rebuilt afterwards, and the
    list's counts are summed from the loaded issues as migration 0028 sums those it finds."""
    rng = random.Random(seed)
    start = datetime(2024, 11, 1, tzinfo=UTC)
    span = int(timedelta(days=730).total_seconds())
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        conn.execute("DELETE FROM title_terms WHERE project_id = %s", (project.id,))
        conn.execute("DELETE FROM title_gram_counts WHERE project_id = %s", (project.id,))
        grams: Counter = Counter()
        conn.execute("DELETE FROM issues WHERE project_id = %s", (project.id,))
        indexes = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes "
            "WHERE tablename IN ('issues', 'issue_labels', 'issue_title_terms', 'title_terms') "
            "AND indexname NOT IN ('pk_issues', 'uq_issues_project_id_number', 'pk_issue_labels', "
            "'pk_issue_title_terms', 'pk_title_terms', 'uq_title_terms_project_id_term')"
        ).fetchall()
        for name, _ in indexes:
            conn.execute(f'DROP INDEX "{name}"')
        # Built once after the load: far faster than 8 million random inserts.
        conn.execute("ALTER TABLE issue_title_terms DROP CONSTRAINT pk_issue_title_terms")
        first_term_id = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM title_terms").fetchone()[0]
        vocabulary: dict[str, int] = {}
        issue_ids: list[uuid.UUID] = []
        link_terms = array("i")
        link_issues = array("i")
        storage_bytes = 0
        # Loader data is consistent by construction; skip per-row foreign key triggers.
        conn.execute("SET session_replication_role = replica")
        began = time.perf_counter()
        issue_labels: list[tuple[uuid.UUID, uuid.UUID]] = []
        columns = (
            "id, project_id, organization_id, number, title, search_text, description, type, priority, status_id, "
            "assignee_id, parent_id, start_date, due_date, estimate, created_by_id, created_at, updated_at"
        )
        with conn.cursor().copy(f"COPY issues ({columns}) FROM STDIN") as copy:
            for number in range(1, count + 1):
                issue_id = uuid.uuid4()
                created = start + timedelta(seconds=span * number // count + rng.randrange(60))
                updated = created + timedelta(seconds=rng.randrange(90 * 86400))
                due = (created.date() + timedelta(days=rng.randrange(1, 120))) if rng.random() < 0.4 else None
                if rng.random() < 0.5:
                    title = f"{rng.choice(VERBS)} {rng.choice(AREAS)} {rng.choice(CONTEXTS)}"
                else:
                    # Half the issues name a product: the long tail that real searches hit.
                    title = (
                        f"{rng.choice(VERBS)} {rng.choice(AREAS)} for {rng.choice(PRODUCT_LINES)} "
                        f"{rng.choice(MODELS)} REF-{rng.randrange(PRODUCT_REFS):05d}"
                    )
                # The title's words, as services.tracker.search indexes them.
                for term in search.terms_of(title):
                    link_terms.append(vocabulary.setdefault(term, first_term_id + len(vocabulary)))
                    link_issues.append(len(issue_ids))
                issue_ids.append(issue_id)
                grams.update(search.grams_of(search.searchable(title)))
                storage_bytes += len(title.encode())
                copy.write_row(
                    (
                        issue_id,
                        project.id,
                        project.organization_id,
                        number,
                        title,
                        search.searchable(title),
                        None,
                        rng.choices(TYPES, TYPE_WEIGHTS)[0],
                        rng.choices(range(5), PRIORITY_WEIGHTS)[0],
                        rng.choice(status_ids),
                        rng.choice(members) if rng.random() < 0.85 else None,
                        None,
                        None,
                        due,
                        rng.choice((1, 2, 3, 5, 8, None)),
                        rng.choice(members),
                        created,
                        updated,
                    )
                )
                if rng.random() < 0.5:
                    for label in rng.sample(label_ids, rng.choice((1, 1, 2))):
                        issue_labels.append((issue_id, label))
        with conn.cursor().copy("COPY issue_labels (issue_id, label_id) FROM STDIN") as copy:
            for row in issue_labels:
                copy.write_row(row)
        with conn.cursor().copy("COPY title_terms (id, project_id, term) FROM STDIN") as copy:
            for term, term_id in vocabulary.items():
                copy.write_row((term_id, project.id, term))
        with conn.cursor().copy("COPY issue_title_terms (term_id, issue_id) FROM STDIN") as copy:
            for term_id, issue_index in zip(link_terms, link_issues, strict=True):
                copy.write_row((term_id, issue_ids[issue_index]))
        with conn.cursor().copy("COPY title_gram_counts (project_id, gram, issue_count) FROM STDIN") as copy:
            for gram, issue_total in grams.items():
                copy.write_row((project.id, gram, issue_total))
        conn.execute(
            "SELECT setval(pg_get_serial_sequence('title_terms', 'id'), (SELECT max(id) FROM title_terms))"
        )
        print(
            f"copied {count:,} issues, {len(issue_labels):,} labels and {len(link_terms):,} title words "
            f"({len(vocabulary):,} distinct) in {time.perf_counter() - began:.0f}s"
        )
        conn.execute("SET session_replication_role = DEFAULT")
        conn.execute(
            "UPDATE projects SET issue_counter = %s, issue_count = %s, storage_bytes = %s WHERE id = %s",
            (count, count, storage_bytes, project.id),
        )
        began = time.perf_counter()
        conn.execute(
            "ALTER TABLE issue_title_terms ADD CONSTRAINT pk_issue_title_terms PRIMARY KEY (term_id, issue_id)"
        )
        for _, definition in indexes:
            conn.execute(definition)
        conn.commit()
        print(f"rebuilt {len(indexes) + 1} indexes in {time.perf_counter() - began:.0f}s")
    began = time.perf_counter()
    with app.app_context():
        issue_counts.rebuild(project.id)
        db.session.commit()
    print(
        f"counted the issues by status, type, priority, assignee and labels in {time.perf_counter() - began:.0f}s"
    )
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE issues")
        conn.execute("VACUUM ANALYZE issue_labels")
        conn.execute("VACUUM ANALYZE title_terms")
        conn.execute("VACUUM ANALYZE issue_title_terms")
        conn.execute("VACUUM ANALYZE issue_counts")
        conn.execute("VACUUM ANALYZE issue_label_counts")


def issue_count(url: str, project: Project) -> int:
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        return conn.execute("SELECT count(*) FROM issues WHERE project_id = %s", (project.id,)).fetchone()[0]


def _spread(values: list[float]) -> str:
    return f"{min(values):.1f}/{statistics.median(values):.1f}/{max(values):.1f}ms"


def timed(client, path: str, query, headers, runs: int) -> tuple[list[float], dict]:
    """Median of ``runs`` requests, in each of ``ROUNDS`` rounds, after 3 warm-up requests."""
    for _ in range(3):
        client.get(path, query_string=query, headers=headers)
    medians = []
    body = {}
    for _ in range(ROUNDS):
        samples = []
        for _ in range(runs):
            began = time.perf_counter()
            response = client.get(path, query_string=query, headers=headers)
            samples.append((time.perf_counter() - began) * 1000)
            assert response.status_code == 200, response.get_json()
            body = response.get_json()
        medians.append(statistics.median(samples))
    return medians, body


def _heap_pages(plan: dict) -> tuple[int, int]:
    """Heap pages a plan read (bitmap heap blocks) and rows it fetched from the heap in index-only scans."""
    blocks = plan.get("Exact Heap Blocks", 0) + plan.get("Lossy Heap Blocks", 0)
    if plan.get("Node Type") in ("Seq Scan", "Index Scan"):
        blocks += plan.get("Shared Hit Blocks", 0) + plan.get("Shared Read Blocks", 0)
    fetches = plan.get("Heap Fetches", 0)
    for child in plan.get("Plans", []):
        child_blocks, child_fetches = _heap_pages(child)
        blocks += child_blocks
        fetches += child_fetches
    return blocks, fetches


def inspect(app, client, path: str, query, headers) -> tuple[int, str]:
    """Statements one request runs, and what its count read of the issues heap."""
    statements: list[tuple[str, object]] = []

    def capture(_conn, _cursor, statement, parameters, _context, _many):
        statements.append((statement, parameters))

    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", capture)
    try:
        client.get(path, query_string=query, headers=headers)
    finally:
        event.remove(engine, "before_cursor_execute", capture)
    counts = [(sql, params) for sql, params in statements if sql.lstrip().upper().startswith("SELECT COUNT")]
    if not counts:
        return len(statements), "no count statement (a counter or the vocabulary answered)"
    with app.app_context(), db.engine.connect() as conn:
        sql, params = counts[-1]
        raw = conn.exec_driver_sql("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params).scalar()
    plan = (json.loads(raw) if isinstance(raw, str) else raw)[0]["Plan"]
    blocks, fetches = _heap_pages(plan)
    return len(statements), f"{fetches} heap fetches, {blocks} heap pages, {plan['Actual Total Time']:.1f}ms"


def time_writes(client, path: str, headers, runs: int, size: int) -> None:
    """Create, retitle and delete issues in the big project (plan checks, title words and
    counters included), then leave it as it was: every created issue is deleted."""
    samples: dict[str, list[float]] = {"create": [], "retitle": [], "delete": []}
    for _ in range(ROUNDS):
        round_samples: dict[str, list[float]] = {"create": [], "retitle": [], "delete": []}
        keys = []
        for n in range(runs):
            began = time.perf_counter()
            title = f"Fix checkout for Tamanco Aurora REF-{n:05d} in Safari"
            response = client.post(path, json={"title": title}, headers=headers)
            round_samples["create"].append((time.perf_counter() - began) * 1000)
            assert response.status_code == 201, response.get_json()
            keys.append(response.get_json()["key"])
        for key in keys:
            began = time.perf_counter()
            response = client.patch(
                f"{path}/{key}", json={"title": f"Update login for Bota Urca {key}"}, headers=headers
            )
            round_samples["retitle"].append((time.perf_counter() - began) * 1000)
            assert response.status_code == 200, response.get_json()
        for key in keys:
            began = time.perf_counter()
            response = client.delete(f"{path}/{key}", headers=headers)
            round_samples["delete"].append((time.perf_counter() - began) * 1000)
            assert response.status_code == 204
        for name, values in round_samples.items():
            samples[name].append(statistics.median(values))
    print(f"\n{'write':<100} {'min/median/max':>22}")
    for name, values in samples.items():
        print(f"{f'{name} an issue in the {size:,}-issue project':<100} {_spread(values):>22}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    parser.add_argument("--issues", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--reload", action="store_true", help="load the data set again")
    args = parser.parse_args()

    url = normalize_database_url(args.database_url)
    ensure_database(url)
    app = create_app({"SQLALCHEMY_DATABASE_URI": url})
    with app.app_context():
        flask_migrate.upgrade(revision="heads")
        if db.session.get(Plan, "enterprise") is None:
            raise SystemExit("the enterprise plan is missing: is migration 0002 applied?")
    project, members, status_ids, label_ids = setup_tenant(app)
    if args.reload or issue_count(url, project) != args.issues:
        load_issues(app, url, project, members, status_ids, label_ids, args.issues, args.seed)
    print(f"{issue_count(url, project):,} issues in workspace {SLUG!r}, project {PROJECT_KEY}")

    client = app.test_client()
    login = client.post(f"{API}/auth/login", json={"email": OWNER_EMAIL, "password": PASSWORD})
    headers = {"Authorization": f"Bearer {login.get_json()['access_token']}"}
    path = f"{API}/workspaces/{SLUG}/projects/{project.id}/issues"
    backlog, todo, in_progress, _done, _cancelled = status_ids
    with app.app_context():
        frontend, backend = (
            db.session.scalar(select(Label.id).where(Label.project_id == project.id, Label.name == name))
            for name in ("frontend", "backend")
        )
        open_statuses = list(
            db.session.scalars(
                select(Status.id).where(
                    Status.project_id == project.id, Status.category.in_(("backlog", "todo", "in_progress"))
                )
            )
        )
        assignee = members[3]
    scenarios = [
        (
            "status category open (backlog, todo, in_progress) + assignee, by created_at desc",
            [("status_id", str(s)) for s in open_statuses] + [("assignee_id", str(assignee))],
        ),
        (
            "filtered + sorted: status in (todo, in_progress) & priority in (high, urgent), by created_at desc",
            [
                ("status_id", str(todo)),
                ("status_id", str(in_progress)),
                ("priority", "high"),
                ("priority", "urgent"),
            ],
        ),
        (
            "multi-value: type in (bug, story) & priority in (medium, high, urgent), by updated_at desc",
            [("type", "bug"), ("type", "story")]
            + [("priority", p) for p in ("medium", "high", "urgent")]
            + [("order_by", "updated_at")],
        ),
        (
            "filtered + sorted: assignee, by priority desc",
            {"assignee_id": str(assignee), "order_by": "priority"},
        ),
        (
            "filtered + sorted: type=bug & status=backlog, by due_date asc",
            {"type": "bug", "status_id": str(backlog), "order_by": "due_date", "order": "asc"},
        ),
        (
            "filtered + sorted: label=frontend, by updated_at desc",
            {"label_id": str(frontend), "order_by": "updated_at"},
        ),
        (
            "multi-value: label in (frontend, backend), by created_at desc",
            [("label_id", str(frontend)), ("label_id", str(backend))],
        ),
        ("unfiltered first page, by created_at desc", {}),
        ("unfiltered first page, board order (rank)", {"order_by": "rank"}),
        ("search: q=ref-01234 (a product reference)", {"q": "ref-01234"}),
        ("search: q=Tamanco Urca (a product model)", {"q": "Tamanco Urca"}),
        ("search: q=aurora (a model name, ~2% of titles)", {"q": "aurora"}),
        ("search: q=safari + priority=urgent", {"q": "SAFARI", "priority": "urgent"}),
        ("search: q=checkout (a broad word, ~7% of titles)", {"q": "checkout"}),
        ("search: q=fix checkout (two common words)", {"q": "fix checkout"}),
        ("search: q=ur (two letters)", {"q": "ur"}),
        ("search: q=e (one letter: the first key typed, in most titles)", {"q": "e"}),
    ]
    print(f"\n{'scenario (first page of 25)':<100} {'min/median/max':>22} {'total':>9}  statements, count")
    for name, query in scenarios:
        query = [*(query.items() if isinstance(query, dict) else query), ("per_page", str(PER_PAGE))]
        medians, body = timed(client, path, query, headers, args.runs)
        statements, count = inspect(app, client, path, query, headers)
        print(f"{name:<100} {_spread(medians):>22} {body['total']:>9,}  {statements}, {count}")
    one = f"{path}/{PROJECT_KEY}-{args.issues // 2}"
    medians, _ = timed(client, one, {}, headers, args.runs)
    statements, _ = inspect(app, client, one, {}, headers)
    print(f"{'one issue by key':<100} {_spread(medians):>22} {'':>9}  {statements}")
    print(
        f"\nmin/median/max over {ROUNDS} rounds of the median of {args.runs} requests, after 3 warm-up "
        "requests; Flask test client, bearer token; statements include the token's user lookup."
    )
    time_writes(client, path, headers, args.runs, args.issues)
    print(
        f"machine: {os.cpu_count()} CPUs; uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}"
    )
    print(f"date {date.today().isoformat()}, PostgreSQL at {url.split('@')[-1]}")


if __name__ == "__main__":
    main()
