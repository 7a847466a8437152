"""Server CPU of one "nothing changed" live-update poll (target: median under 2 ms), next to a
bare Flask app doing the same SQL.

    .venv/bin/python benchmarks/live_polls.py [--recs 2000] [--issues 500] [--runs 200] [--rounds 3]
        [--postgres URL | --no-postgres]

Builds, on SQLite in a temporary directory and on PostgreSQL (default database
``giro_bench_live``, create it with ``createdb -h 127.0.0.1 -U postgres giro_bench_live``;
its ``public`` schema is dropped and recreated), the batch of ``render_pages.py``
(``--recs`` recommendations, those decided stamped an hour ago) and the board of
``render_board.py`` (``--issues`` issues, left alone a few seconds). It signs a planner
and the project's owner in through the login page, opens each page for its version, and
times through the WSGI app (``time.process_time()``, the benchmark process: the request's
Python work and the database driver's, not the PostgreSQL server's):

- ``GET /lotes/<id>/mudancas?desde=...&ids=<the page's 50 rows>`` (the batch page's poll);
- ``GET /tracker/w/<slug>/p/<id>/board/changes?since=...`` (the board's poll);

each answering 204, twice: through the Flask test client, and handed straight to the WSGI
app with an environ built once (the server's own work, which the target is about: the
test client's building of the request and wrapping of the answer is the caller's). In the
same run, alternating with them, a bare Flask app (no
extensions, no hooks, no ORM) whose views check the same session cookie with PyJWT and
run the very statement the app's poll runs (``recommendations.QUIET_BATCH``,
``issue_board.QUIET_BOARD``: the account with its token's logout, the batch or the project
with the caller's standing, and the indexed probe, in one statement) through one
SQLAlchemy engine, outside a transaction as the app does, and answer the same 204. Prints min/median/max over ``--rounds`` of the per-round medians,
with the load average.
"""

from __future__ import annotations

import argparse
import io
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.rounds import load_average  # noqa: E402

DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/giro_bench_live"
TARGET_MS = 2.0
HX = {"HX-Request": "true"}


def _build(recs: int, issues: int) -> tuple[str, str, str, str]:
    """The batch and the board, their changes an hour old; (batch id, planner, slug, project id)."""
    from sqlalchemy import update

    from benchmarks import render_board, render_pages
    from blueprints.pages import live
    from extensions import db
    from models.stock_batches import Recomendacao

    lote_id, planner = render_pages._build(recs)
    hour_ago = datetime.now(UTC) - timedelta(hours=1)
    db.session.execute(
        update(Recomendacao).where(Recomendacao.status != "pendente").values(ultima_acao_em=hour_ago)
    )
    db.session.commit()
    slug, project_id = render_board._build(issues)
    # The issues were just written: past the overlap a version allows, nothing is new.
    time.sleep(live.OVERLAP.total_seconds() + 1)
    return lote_id, planner, slug, project_id


def bare_app(engine, secret: str):
    """The floor: the same cookie check and statement, nothing else."""
    import jwt
    from flask import Flask, abort, make_response, request

    from services.stock.recommendations import QUIET_BATCH
    from services.tracker.issue_board import QUIET_BOARD

    # The very statements the app's polls run: the account and its token's logout, the batch or
    # the project with the caller's standing, and the indexed probe, in one statement each.
    batch_sql, board_sql = QUIET_BATCH.statement, QUIET_BOARD.statement
    app = Flask("bare")

    def session() -> tuple[dict, dict]:
        try:
            claims = jwt.decode(request.cookies.get("access_token_cookie", ""), secret, algorithms=["HS256"])
            params = {"account_id": uuid.UUID(claims["sub"]), "jti": claims["jti"]}
        except (jwt.PyJWTError, KeyError, ValueError):
            abort(401)
        return claims, params

    def holds(claims: dict, row) -> bool:
        if row is None or row.banned or row.denied:
            return False
        valid_after = row.sessions_valid_after
        return not (valid_after and claims.get("ts", claims.get("iat", 0)) < valid_after.timestamp())

    def moment(version: str) -> datetime:
        return datetime.strptime(version[:22], "%Y%m%dT%H%M%S%f").replace(tzinfo=UTC) - timedelta(seconds=5)

    def read(statement, params: dict):
        # As ``DriverRead.first_alone``: one statement, no transaction (autocommit on PostgreSQL).
        with engine.connect() as conn:
            if conn.dialect.name == "postgresql":
                conn.execution_options(isolation_level="AUTOCOMMIT")
            return conn.execute(statement, params).first()

    def nothing():
        response = make_response("", 204)
        response.headers["Cache-Control"] = "no-store"
        response.vary.add("HX-Request")
        return response

    @app.get("/lotes/<lid>/mudancas")
    def lote(lid):
        claims, params = session()
        params.update(lote_id=uuid.UUID(lid), moment=moment(request.args["desde"]))
        row = read(batch_sql, params)
        if not holds(claims, row) or row.papel is None or not row.found:
            abort(403)
        if row.decided:
            abort(409)  # the bench measures the quiet case only
        return nothing()

    @app.get("/tracker/w/<slug>/p/<pid>/board/changes")
    def board(slug, pid):
        claims, params = session()
        stamp, _dot, count = request.args["since"].partition(".")
        params.update(slug=slug, project_id=uuid.UUID(pid), moment=moment(stamp))
        row = read(board_sql, params)
        if not holds(claims, row) or row.role is None or row.suspended or row.issue_count is None:
            abort(404)
        if row.changed or count != str(row.issue_count):
            abort(409)
        return nothing()

    return app


class _Answer:
    def __init__(self, status: str, body: bytes):
        self.status_code = int(status[:3])
        self.body = body

    def get_data(self, as_text: bool = False):
        return self.body.decode() if as_text else self.body


def wsgi_call(app, client, url: str, query: dict) -> Callable[[], _Answer]:
    """The request handed straight to the WSGI app, its environ built once: the server's work
    alone, without the test client's (building the environ, wrapping the answer)."""
    from werkzeug.test import EnvironBuilder

    cookie = client.get_cookie("access_token_cookie").value
    environ = EnvironBuilder(
        path=url, query_string=query, headers={**HX, "Cookie": f"access_token_cookie={cookie}"}
    ).get_environ()

    def call() -> _Answer:
        env = dict(environ)
        env["wsgi.input"] = io.BytesIO(b"")
        status: list[str] = []
        body = app(env, lambda line, _headers, _exc=None: status.append(line))
        try:
            data = b"".join(body)
        finally:
            getattr(body, "close", lambda: None)()
        return _Answer(status[0], data)

    return call


def _medians(call: Callable[[], object], runs: int) -> float:
    cpu = []
    for _ in range(runs):
        start = time.process_time()
        response = call()
        cpu.append((time.process_time() - start) * 1000)
        assert response.status_code == 204, (response.status_code, response.get_data(as_text=True)[:300])
    return statistics.median(cpu)


def _report(label: str, values: list[float]) -> float:
    median = statistics.median(values)
    print(f"  {label:<38} CPU {min(values):5.2f}/{median:5.2f}/{max(values):5.2f} ms (min/median/max)")
    return median


def bench(url: str, recs: int, issues: int, runs: int, rounds: int) -> list[float]:
    import flask_migrate

    from app import create_app
    from extensions import db

    app = create_app(
        {"SQLALCHEMY_DATABASE_URI": url, "ARGON2_TIME_COST": 1, "ARGON2_MEMORY_COST": 1024, "SMTP_HOST": None}
    )
    with app.app_context():
        flask_migrate.upgrade(revision="heads")
        lote_id, planner, slug, project_id = _build(recs, issues)
        engine = db.engine
    bare = bare_app(engine, app.config["JWT_SECRET_KEY"]).test_client()
    polls = []
    for email, page in (
        (planner, f"/lotes/{lote_id}"),
        ("owner@bench.test", f"/tracker/w/{slug}/p/{project_id}/board"),
    ):
        client = app.test_client()
        login = client.post("/login", data={"email": email, "senha": "bench-password-123"})
        assert login.status_code == 302, login.status_code
        bare.set_cookie("access_token_cookie", client.get_cookie("access_token_cookie").value)
        body = client.get(page).get_data(as_text=True)
        url_, version = re.search(r'data-live-url="([^"]+)" data-live-version="([^"]+)"', body).groups()
        if page.startswith("/lotes"):
            ids = ",".join(re.findall(r'<tr id="rec-([0-9a-f-]{36})"', body))
            query = {"desde": version, "ids": ids}
            label = "batch page poll (50 rows)"
        else:
            query = {"since": version}
            label = f"board poll ({issues} issues)"
        calls = {
            "app, test client": lambda c=client, u=url_, q=query: c.get(u, query_string=q, headers=HX),
            "bare Flask, test client": lambda u=url_, q=query, b=bare: b.get(u, query_string=q, headers=HX),
            "app, WSGI call": wsgi_call(app, client, url_, query),
            "bare Flask, WSGI call": wsgi_call(bare.application, client, url_, query),
        }
        found: dict[str, list[float]] = {name: [] for name in calls}
        for call in calls.values():
            call()  # warm-up
        for n in range(rounds):
            # Alternating, so each sees the same machine.
            for name in list(calls)[:: 1 if n % 2 == 0 else -1]:
                found[name].append(_medians(calls[name], runs))
        print(f"  {label}")
        medians = {name: _report(name, values) for name, values in found.items()}
        median = medians["app, WSGI call"]
        verdict = "OK" if median < TARGET_MS else "OVER TARGET"
        print(
            f"    app/bare {median / medians['bare Flask, WSGI call']:.2f}x (WSGI), "
            f"{medians['app, test client'] / medians['bare Flask, test client']:.2f}x (test client); "
            f"target: server CPU (WSGI call) median < {TARGET_MS:.0f} ms: {verdict}"
        )
        polls.append(median)
    with app.app_context():
        db.engine.dispose()
    return polls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recs", type=int, default=2000)
    parser.add_argument("--issues", type=int, default=500)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    from benchmarks.render_pages import _reset_postgres

    print(load_average())
    medians = []
    with tempfile.TemporaryDirectory() as tmp:
        print("SQLite")
        medians += bench(f"sqlite:///{tmp}/bench.db", args.recs, args.issues, args.runs, args.rounds)
    if not args.no_postgres:
        print("PostgreSQL")
        try:
            _reset_postgres(args.postgres)
        except Exception as exc:  # a missing server is reported, not a crash
            print(f"  skipped: {exc.__class__.__name__}: {exc}".splitlines()[0])
        else:
            medians += bench(args.postgres, args.recs, args.issues, args.runs, args.rounds)
    print(load_average())
    return 0 if all(m < TARGET_MS for m in medians) else 1


if __name__ == "__main__":
    sys.exit(main())
