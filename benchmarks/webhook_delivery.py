"""Webhooks: what subscribing costs a change, and how fast a pass delivers.

    .venv/bin/python benchmarks/webhook_delivery.py [--database-url URL] [--comments 200] [--deliveries 500]

On a database of its own (a temporary SQLite file by default; a PostgreSQL URL
is created when missing and emptied first), through the API with a real bearer
token:

- creating a comment with no webhook, then with three webhooks subscribed to
  ``comment.created`` (each change writes three outbox rows and queues one job;
  the job is held back here, so the figure is the request's own cost);
- one delivery pass (``services.tracker.webhook_delivery.deliver_due``) over
  ``--deliveries`` pending deliveries to a local receiver (``http.server`` on
  127.0.0.1, answering 200): seconds and deliveries per second.

Each figure is printed as min/median/max over 3 runs (the median of each run's
requests for the latencies).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import flask_migrate  # noqa: E402
from sqlalchemy import create_engine, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from app import create_app  # noqa: E402
from config import normalize_database_url  # noqa: E402
from extensions import db  # noqa: E402

RUNS = 3
API = "/tracker/api/v1"


def _prepare_postgres(url: str) -> str:
    url = normalize_database_url(url)
    parsed = make_url(url)
    admin = create_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        if not conn.execute(
            text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": parsed.database}
        ).scalar():
            conn.execute(text(f'CREATE DATABASE "{parsed.database}"'))
    admin.dispose()
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    return url


class Receiver:
    def __init__(self) -> None:
        self.count = 0

        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.count += 1
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def _figures(values: list[float]) -> str:
    return f"{min(values):.1f} / {statistics.median(values):.1f} / {max(values):.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--database-url", default=None, help="PostgreSQL URL (default: a temporary SQLite file)"
    )
    parser.add_argument("--comments", type=int, default=200, help="comments timed per run and setting")
    parser.add_argument("--deliveries", type=int, default=500, help="deliveries per pass")
    args = parser.parse_args()

    if args.database_url:
        url = _prepare_postgres(args.database_url)
    else:
        url = f"sqlite:///{Path(tempfile.mkdtemp()) / 'webhooks.db'}"
    app = create_app(
        {
            "SQLALCHEMY_DATABASE_URI": url,
            "ARGON2_TIME_COST": 1,
            "ARGON2_MEMORY_COST": 1024,
            "SMTP_HOST": None,
            "LOG_REQUESTS": False,
            "LOG_LEVEL": "WARNING",
            "RATELIMIT_ENABLED": False,
        }
    )
    from services import job_queue
    from services.tracker import accounts, issues, webhook_delivery, workspaces

    # Held back: the timed requests measure writing the outbox, not sending it.
    job_queue.submit = lambda *_args: None
    with app.app_context():
        flask_migrate.upgrade()
        user, access, _refresh = accounts.register("Bench Owner", "bench@webhooks.test", "bench-password-42")
        slug = workspaces.list_workspaces(user)[0].slug
        project = workspaces.create_project(user, slug, {"name": "Bench", "key": "BEN", "description": None})
        issue = issues.create_issue(user, slug, project.id, {"title": "Busy issue"})
        organization_id = accounts.my_organizations(user)[0]["id"]
        key, project_id = issue.key, project.id
        db.session.commit()

    client = app.test_client()
    headers = {"Authorization": f"Bearer {access}"}
    comments_url = f"{API}/workspaces/{slug}/projects/{project_id}/issues/{key}/comments"

    def time_comments() -> float:
        times = []
        for n in range(args.comments):
            started = time.perf_counter()
            response = client.post(comments_url, json={"body": f"comentário {n}"}, headers=headers)
            times.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 201, response.get_json()
        return statistics.median(times)

    without = [time_comments() for _ in range(RUNS)]
    receiver = Receiver()
    for _ in range(3):
        created = client.post(
            f"{API}/organizations/{organization_id}/webhooks",
            json={"url": receiver.url, "events": ["comment.created"]},
            headers=headers,
        )
        assert created.status_code == 201, created.get_json()
    with app.app_context():
        webhook_delivery.deliver_due()  # nothing due yet: warms the code path
    with_hooks = [time_comments() for _ in range(RUNS)]
    print(f"comment creation, median ms (min / median / max of {RUNS} runs of {args.comments}):")
    print(f"  no webhook:                 {_figures(without)}")
    print(f"  3 webhooks (3 outbox rows): {_figures(with_hooks)}")

    # Drain what the timed comments queued, then time passes over fresh backlogs.
    with app.app_context():
        webhook_delivery.deliver_due()
    per_pass: list[float] = []
    rates: list[float] = []
    for _ in range(RUNS):
        for n in range(args.deliveries // 3 + (args.deliveries % 3 > 0)):
            client.post(comments_url, json={"body": f"lote {n}"}, headers=headers)
        before = receiver.count
        with app.app_context():
            started = time.perf_counter()
            report = webhook_delivery.deliver_due()
            seconds = time.perf_counter() - started
        sent = receiver.count - before
        assert report.delivered == sent, (report, sent)
        per_pass.append(seconds)
        rates.append(sent / seconds)
    print(f"one pass over ~{args.deliveries} pending deliveries to a loopback receiver ({RUNS} runs):")
    print(
        f"  seconds:               {min(per_pass):.2f} / {statistics.median(per_pass):.2f} / {max(per_pass):.2f}"
    )
    print(f"  deliveries per second: {_figures(rates)}")
    print(f"database: {make_url(url).get_backend_name()}")


if __name__ == "__main__":
    main()
