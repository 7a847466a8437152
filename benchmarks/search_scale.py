"""Search on PostgreSQL at scale: backfill, indexing after writes, and query latency via the API.

    .venv/bin/python benchmarks/search_scale.py [--issues 100000] [--runs 20] [--database-url URL] [--reuse]

Uses its own database (``giro_bench_search`` by default, created when missing),
migrated to the current schema, with the tenant of ``benchmarks/tracker_issues.py``
(one organization on the enterprise plan, one workspace, one project). It loads
``--issues`` issues of the generated support project of
``benchmarks/search_quality.py`` with COPY, then:

1. backfill: ``services.tracker.search_index.reindex`` (what ``flask tracker
   reindex-search`` runs): issues per second;
2. indexing after writes: 2,000 issues queued as writes queue them, drained by
   the ``busca`` job's function: issues per second (the target: 50 writes/s);
3. latency: keyword, semantic and hybrid searches through the Flask test client
   with a bearer token, the first request of each query excluded (it loads the
   process's matrix); median and p95 over ``--runs`` rounds of five queries.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import flask_migrate  # noqa: E402
import psycopg  # noqa: E402
from search_quality import generated  # noqa: E402
from sqlalchemy import func, insert, select  # noqa: E402
from tracker_issues import API, OWNER_EMAIL, PASSWORD, SLUG, ensure_database, setup_tenant  # noqa: E402

from app import create_app  # noqa: E402
from config import normalize_database_url  # noqa: E402
from extensions import db  # noqa: E402
from models.base import utcnow  # noqa: E402
from models.tracker import Issue  # noqa: E402
from models.tracker_search import IssueVector, SearchPending  # noqa: E402
from services.tracker import search, search_index  # noqa: E402

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/giro_bench_search"
QUERIES = [
    "pagamento duplicado",
    "etiqeta sem cep",
    "site demorando",
    "troca de tamanho",
    "nota fiscal rejeitada",
]


def load(url: str, project, status_id, count: int) -> None:
    docs, _ = generated(count)
    plain = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain) as conn:
        conn.execute("DELETE FROM issues WHERE project_id = %s", (project.id,))
        conn.execute("SET session_replication_role = replica")
        columns = "id, project_id, organization_id, number, title, search_text, description, type, priority, status_id, created_at, updated_at, rank"
        now = datetime.now(UTC)
        began = time.perf_counter()
        with conn.cursor().copy(f"COPY issues ({columns}) FROM STDIN") as copy:
            for number, doc in enumerate(docs, start=1):
                copy.write_row(
                    (
                        uuid.uuid4(),
                        project.id,
                        project.organization_id,
                        number,
                        doc.title,
                        search.searchable(doc.title),
                        doc.description,
                        "task",
                        0,
                        status_id,
                        now,
                        now,
                        number,
                    )
                )
        conn.execute("SET session_replication_role = DEFAULT")
        conn.execute(
            "UPDATE projects SET issue_counter = %s, issue_count = %s WHERE id = %s",
            (count, count, project.id),
        )
        conn.commit()
        print(f"copied {count:,} issues in {time.perf_counter() - began:.0f}s")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE issues")


def _loaded(app, project) -> tuple[int, int]:
    """The project's issues and vectors as an earlier run left them."""
    with app.app_context():
        issues = db.session.scalar(select(func.count()).where(Issue.project_id == project.id))
        vectors = db.session.scalar(select(func.count()).where(IssueVector.project_id == project.id))
        return issues, vectors


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    parser.add_argument("--issues", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep the issues and vectors of an earlier run of the same size (no load, no backfill)",
    )
    args = parser.parse_args()
    url = normalize_database_url(args.database_url)
    ensure_database(url)
    app = create_app({"SQLALCHEMY_DATABASE_URI": url})
    with app.app_context():
        flask_migrate.upgrade(revision="heads")
    project, _members, status_ids, _labels = setup_tenant(app)
    reused = args.reuse and _loaded(app, project) == (args.issues, args.issues)
    if reused:
        print(f"reused the {args.issues:,} issues and their vectors of an earlier run")
    else:
        load(url, project, status_ids[0], args.issues)

    with app.app_context():
        if not reused:
            began = time.perf_counter()
            done = search_index.reindex(project.organization_id)
            seconds = time.perf_counter() - began
            print(f"backfill: {done:,} issues in {seconds:.0f}s ({done / seconds:.0f} issues/s)")
        ids = list(db.session.scalars(select(Issue.id).where(Issue.project_id == project.id).limit(2000)))
        # Queued as a write queues them, without the job a write also asks for (it is timed here).
        now = utcnow()
        db.session.execute(
            insert(SearchPending),
            [{"issue_id": i, "organization_id": project.organization_id, "queued_at": now} for i in ids],
        )
        db.session.commit()
        began = time.perf_counter()
        drained = search_index.drain(project.organization_id)
        seconds = time.perf_counter() - began
        print(
            f"indexing after writes: {drained:,} issues in {seconds:.1f}s ({drained / seconds:.0f} issues/s)"
        )
        db.session.commit()
    # The statistics autovacuum would gather after a load this size (the planner's row
    # estimates for the organization and the words depend on them).
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE issue_vectors")

    client = app.test_client()
    login = client.post(f"{API}/auth/login", json={"email": OWNER_EMAIL, "password": PASSWORD})
    headers = {"Authorization": f"Bearer {login.get_json()['access_token']}"}
    path = f"{API}/workspaces/{SLUG}/search"
    for mode in ("keyword", "semantic", "hybrid"):
        for q in QUERIES:  # warm: the first semantic search loads the organization's matrix
            response = client.get(path, query_string={"q": q, "mode": mode}, headers=headers)
            assert response.status_code == 200, response.get_json()
        times = []
        for _ in range(args.runs):
            for q in random.Random(1).sample(QUERIES, len(QUERIES)):
                began = time.perf_counter()
                response = client.get(path, query_string={"q": q, "mode": mode}, headers=headers)
                times.append((time.perf_counter() - began) * 1000)
                assert response.status_code == 200
        print(
            f"{mode:8} over {args.issues:,} issues: median {statistics.median(times):.1f} ms, "
            f"p95 {percentile(times, 0.95):.1f} ms ({len(times)} requests)"
        )
    print("load:", os.getloadavg())


if __name__ == "__main__":
    main()
