"""The framework's own cost: each API endpoint's requests/s next to a bare Flask app doing the same SQL.

    .venv/bin/python benchmarks/api_overhead.py [--database-url URL] [--duration 5] [--rounds 3]
        [--connections 6] [--workers 3] [--issues 20000] [--rebuild] [--only TEXT] [--app-root DIR]

One run builds the data once in its own PostgreSQL database (default
``giro_bench_overhead``, created when missing; kept for the next run unless
``--rebuild``): the demo network (2 CDs, 25 stores, 60 products, 90 days of
sales) with this week's batch (about 2,600 recommendations), and a tracker
project of ``--issues`` issues with labels and assignees, loaded with the
helpers of ``render_pages.py`` and ``tracker_issues.py``; one issue gets three
sub-issues and two relations through the API.

Then it starts two gunicorn servers on free loopback ports with identical
settings (``deploy/gunicorn.conf.py``, ``--workers`` sync workers): the app
(``app:create_app()``, ``GIRO_ENV=production``, no debug, request logging on as
in production, to a file) and ``benchmarks/bare_app.py``, which answers each
endpoint with the fewest SQL statements that give the app's body, run through
one pooled engine, after the same token check done with PyJWT and one query, and
``jsonify`` of the rows: no ORM, no marshmallow, no request hooks. Tokens come
from the real login endpoints.

Before loading anything it fetches every endpoint from both servers and stops,
with a diff, unless the two JSON bodies are equal (keys sorted): both servers
do the same work, so the ratio measures the framework. Then, for each round
and each endpoint, it loads the app and the bare app back to back (the order
swapping every round) for ``--duration`` seconds each with ``wrk``
(``--connections`` open connections; ``apt-get install -y wrk``), or with a
Python client when wrk is missing, and prints each endpoint's requests/s
(min/median/max over the rounds) on both, the ratio of the medians,
the target (0.6 of the bare app; 0.9 for ``/health``) and whether it is met,
with ``uptime`` before and after. Each window also reads from ``/proc`` the CPU
the loaded server's gunicorn processes and the bench database's PostgreSQL
backends spent, printed per answer as it goes and as a second table (min/median/
max and the ratio, bare over app): where the time goes, and a ratio less tied to
the machine's other load than requests/s.

``--app-root DIR`` serves the app from another checkout, a git worktree of an
earlier commit for instance (``git worktree add --detach ../before COMMIT``),
against the same data, settings and bare app: two runs, one with each checkout,
give a change's before and after in one sitting. Bodies of an earlier checkout may
lack fields added since: their differences are counted and printed, not fatal. ``--only TEXT`` loads only the
endpoints whose name contains it (every body is still checked).
"""

from __future__ import annotations

import argparse
import difflib
import http.client
import json
import os
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import tracker_issues as tracker_bench  # noqa: E402
from benchmarks.render_pages import _reset_postgres  # noqa: E402
from config import normalize_database_url  # noqa: E402

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/giro_bench_overhead"
TRACKER_API = "/tracker/api/v1"
STOCK_API = "/api/v1"
PLANNER = "planejador@demo.giro.com.br"
ENDPOINT_TARGET, HEALTH_TARGET = 0.6, 0.9
# The issue that gets sub-issues and relations, and the ones it relates to.
DETAIL_NUMBER, RELATED_NUMBERS = 1000, (2000, 3000)
SUB_ISSUES = 3


@dataclass
class Endpoint:
    name: str
    path: str
    token: str | None
    target: float = ENDPOINT_TARGET
    # Answers taking seconds: wrk counts only the answers completed inside its window, which
    # at a few per second drops a large share of the work; these go through the Python
    # client, which finishes the requests it started and counts the time they took.
    slow: bool = False
    app: list[float] = field(default_factory=list)
    bare: list[float] = field(default_factory=list)
    # CPU milliseconds per answer, the server's gunicorn processes and PostgreSQL's backends together.
    app_cpu: list[float] = field(default_factory=list)
    bare_cpu: list[float] = field(default_factory=list)


# --- data ------------------------------------------------------------------------------------


def _plain(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


def _schema_head() -> str:
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(ROOT / "migrations")).get_current_head()


def _has_data(url: str, issues: int) -> bool:
    """Data built by ``build`` on the current schema (a database of an older schema is rebuilt)."""
    import psycopg

    try:
        with psycopg.connect(_plain(url)) as conn:
            version = conn.execute("SELECT version_num FROM alembic_version").fetchone()
            if version is None or version[0] != _schema_head():
                return False
            lotes = conn.execute("SELECT count(*) FROM lotes").fetchone()[0]
            count = conn.execute("SELECT count(*) FROM issues").fetchone()[0]
            planner = conn.execute("SELECT count(*) FROM users WHERE email = %s", (PLANNER,)).fetchone()[0]
    except psycopg.Error:
        return False
    # The bench project, its sub-issues, and nothing else.
    return lotes > 0 and planner == 1 and count == issues + SUB_ISSUES


def build(url: str, issues: int, seed: int) -> None:
    """Schema by the migrations, the demo network with this week's batch, the tracker project."""
    import flask_migrate

    from app import create_app
    from extensions import db
    from services.clock import today
    from services.stock import demo, generation, rules

    began = time.perf_counter()
    _reset_postgres(url)
    app = create_app({"SQLALCHEMY_DATABASE_URI": url, "ARGON2_TIME_COST": 1, "ARGON2_MEMORY_COST": 1024})
    with app.app_context():
        flask_migrate.upgrade(revision="heads")
        demo.load(n_stores=demo.DEFAULT_STORES, n_products=demo.DEFAULT_PRODUCTS, seed=demo.DEFAULT_SEED)
        generation.generate(today())
        rules.get_rules(for_update=True)  # the rules row the grade matrix reads
        db.session.commit()
    project, members, status_ids, label_ids = tracker_bench.setup_tenant(app)
    tracker_bench.load_issues(app, url, project, members, status_ids, label_ids, issues, seed)
    _link_detail_issue(app, project.id)
    with app.app_context():
        db.engine.dispose()
    print(f"built the data in {time.perf_counter() - began:.0f} s")


def _link_detail_issue(app, project_id) -> None:
    """Sub-issues and relations on one issue, through the API, so its detail has something to join."""
    client = app.test_client()
    login = client.post(
        f"{TRACKER_API}/auth/login",
        json={"email": tracker_bench.OWNER_EMAIL, "password": tracker_bench.PASSWORD},
    )
    headers = {"Authorization": f"Bearer {login.get_json()['access_token']}"}
    base = f"{TRACKER_API}/workspaces/{tracker_bench.SLUG}/projects/{project_id}/issues"
    key = f"{tracker_bench.PROJECT_KEY}-{DETAIL_NUMBER}"
    detail = client.get(f"{base}/{key}", headers=headers).get_json()
    for n in range(SUB_ISSUES):
        created = client.post(
            base, json={"title": f"Sub-task {n + 1} of {key}", "parent_id": detail["id"]}, headers=headers
        )
        assert created.status_code == 201, created.get_json()
    for number, kind in zip(RELATED_NUMBERS, ("blocks", "relates_to"), strict=True):
        other = client.get(f"{base}/{tracker_bench.PROJECT_KEY}-{number}", headers=headers).get_json()
        related = client.post(
            f"{base}/{key}/relations", json={"type": kind, "related_issue_id": other["id"]}, headers=headers
        )
        assert related.status_code == 201, related.get_json()


def _lookups(url: str) -> dict:
    """Ids the endpoints' paths name: the project, its statuses, the batch, its busiest product."""
    import psycopg

    with psycopg.connect(_plain(url)) as conn:
        project_id = conn.execute(
            "SELECT p.id FROM projects p JOIN workspaces w ON w.id = p.workspace_id "
            "WHERE w.slug = %s AND p.key = %s",
            (tracker_bench.SLUG, tracker_bench.PROJECT_KEY),
        ).fetchone()[0]
        statuses = dict(
            conn.execute("SELECT category, id FROM statuses WHERE project_id = %s", (project_id,)).fetchall()
        )
        lote_id = conn.execute("SELECT id FROM lotes ORDER BY inicio DESC LIMIT 1").fetchone()[0]
        produto_id, recs = conn.execute(
            "SELECT produto_id, count(*) FROM recomendacoes WHERE lote_id = %s "
            "GROUP BY produto_id ORDER BY count(*) DESC, produto_id LIMIT 1",
            (lote_id,),
        ).fetchone()
        total = conn.execute("SELECT count(*) FROM recomendacoes WHERE lote_id = %s", (lote_id,)).fetchone()[
            0
        ]
    return {
        "project_id": project_id,
        "statuses": statuses,
        "lote_id": lote_id,
        "produto_id": produto_id,
        "produto_recs": recs,
        "recommendations": total,
    }


# --- servers ---------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """One gunicorn with the production settings, on a loopback port, its log in ``folder``."""

    def __init__(self, name: str, target: str, env: dict, workers: int, folder: Path, root: Path = ROOT):
        self.name = name
        self.port = _free_port()
        self.log = folder / f"{name}.log"
        env = {
            **env,
            "GIRO_BIND": f"127.0.0.1:{self.port}",
            "GIRO_WEB_WORKERS": str(workers),
            "PROMETHEUS_MULTIPROC_DIR": str(folder / f"{name}-prometheus"),
        }
        command = [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "deploy" / "gunicorn.conf.py"), target]
        with self.log.open("wb") as log:
            # gunicorn imports the target from its working directory, ahead of the installed package.
            self.process = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=log)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"{self.name} server exited; its log:\n{self.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(self.base + "/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.3)
        raise SystemExit(f"{self.name} server did not answer /health within {timeout:.0f} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


CLOCK_TICK = os.sysconf("SC_CLK_TCK")


def _cpu_ticks(pid: int) -> int:
    """User + system CPU of one process so far, in clock ticks (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


def _backends(database: str) -> list[int]:
    """PostgreSQL's backend processes serving ``database`` (their title names it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                title = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if title.startswith(b"postgres: ") and f" {database} ".encode() in title:
                found.append(int(entry.name))
    return found


class CpuMeter:
    """CPU spent on a server's answers: its gunicorn processes plus the PostgreSQL backends of the
    bench database (only the server under load talks to it). Unlike requests/s, the CPU an answer
    costs hardly moves with the machine's other load, so the ratio of the two servers' CPU per
    answer is the figure that reproduces on a shared machine; it is printed beside the req/s."""

    def __init__(self, server: Server, database: str):
        self.groups = ([server.process.pid, *_children(server.process.pid)], _backends(database))

    def _ticks(self) -> list[int]:
        return [sum(_cpu_ticks(pid) for pid in pids) for pids in self.groups]

    def __enter__(self):
        self.ticks = self._ticks()
        return self

    def __exit__(self, *_):
        self.server_ms, self.database_ms = (
            (after - before) * 1000 / CLOCK_TICK
            for after, before in zip(self._ticks(), self.ticks, strict=True)
        )
        self.spent_ms = self.server_ms + self.database_ms


def _request(base: str, path: str, token: str | None = None, body: dict | None = None) -> tuple[int, bytes]:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _login(app: Server) -> tuple[str, str]:
    """A stock token (the demo planner) and a tracker token (the bench project's owner)."""
    from services.stock.demo import DEMO_PASSWORD

    status, body = _request(
        app.base, f"{STOCK_API}/auth/login", body={"email": PLANNER, "senha": DEMO_PASSWORD}
    )
    if status != 200:
        raise SystemExit(f"stock login answered {status}: {body[:300]!r}")
    stock = json.loads(body)["accessToken"]
    status, body = _request(
        app.base,
        f"{TRACKER_API}/auth/login",
        body={"email": tracker_bench.OWNER_EMAIL, "password": tracker_bench.PASSWORD},
    )
    if status != 200:
        raise SystemExit(f"tracker login answered {status}: {body[:300]!r}")
    return stock, json.loads(body)["access_token"]


def endpoints(ids: dict, stock: str, tracker: str) -> list[Endpoint]:
    issues = f"{TRACKER_API}/workspaces/{tracker_bench.SLUG}/projects/{ids['project_id']}/issues"
    todo, doing = ids["statuses"]["todo"], ids["statuses"]["in_progress"]
    recs = f"{STOCK_API}/remanejamento/recomendacoes"
    return [
        Endpoint("GET /health", "/health", None, HEALTH_TARGET),
        Endpoint("GET /api/v1/auth/me", f"{STOCK_API}/auth/me", stock),
        Endpoint("issue list, default (first 50)", issues, tracker),
        Endpoint(
            "issue list, 2 statuses x 2 priorities",
            f"{issues}?status_id={todo}&status_id={doing}&priority=high&priority=urgent",
            tracker,
        ),
        Endpoint("issue list, q=aurora", f"{issues}?q=aurora", tracker),
        Endpoint(
            f"one issue ({SUB_ISSUES} sub-issues, {len(RELATED_NUMBERS)} relations)",
            f"{issues}/{tracker_bench.PROJECT_KEY}-{DETAIL_NUMBER}",
            tracker,
        ),
        Endpoint("recommendations, page of 50", f"{recs}?limite=50&offset=100", stock),
        Endpoint(f"recommendations, whole batch ({ids['recommendations']:,})", recs, stock, slow=True),
        Endpoint("batch totals", f"{STOCK_API}/remanejamento/lotes/{ids['lote_id']}/totais", stock),
        Endpoint(
            f"grade matrix (27 nodes, {ids['produto_recs']} recs)",
            f"{STOCK_API}/produtos/{ids['produto_id']}/grade",
            stock,
        ),
    ]


def check_bodies(app: Server, bare: Server, points: list[Endpoint], lenient: bool = False) -> None:
    """Stop with a diff unless both servers answer every endpoint with the same JSON; ``lenient``
    (an earlier checkout, whose bodies may lack later fields) prints the diff's size and goes on."""
    for point in points:
        answers = []
        for server in (app, bare):
            status, body = _request(server.base, point.path, point.token)
            if status != 200:
                raise SystemExit(f"{server.name} answered {status} to {point.path}: {body[:500]!r}")
            answers.append(json.dumps(json.loads(body), sort_keys=True, indent=1, ensure_ascii=False))
        if answers[0] != answers[1] and lenient:
            changed = [
                line
                for line in difflib.unified_diff(
                    answers[0].splitlines(), answers[1].splitlines(), lineterm=""
                )
                if line[:1] in "+-" and line[:3] not in ("+++", "---")
            ]
            print(f"  DIFFERENT body: {point.name}: {len(changed):,} lines differ, e.g. {changed[:2]}")
            continue
        if answers[0] != answers[1]:
            diff = difflib.unified_diff(
                answers[0].splitlines(), answers[1].splitlines(), "app", "bare", lineterm="", n=2
            )
            print("\n".join(list(diff)[:80]))
            raise SystemExit(
                f"the bodies of {point.name} ({point.path}) differ: the ratio would not be honest"
            )
        print(f"  same body: {point.name} ({len(answers[0]):,} characters of sorted JSON)")


# --- load ------------------------------------------------------------------------------------


def _wrk(base: str, point: Endpoint, duration: float, connections: int) -> tuple[float, int]:
    command = ["wrk", "-t1", f"-c{connections}", f"-d{duration:g}s", "--timeout", "30s"]
    if point.token:
        command += ["-H", f"Authorization: Bearer {point.token}"]
    out = subprocess.run([*command, base + point.path], capture_output=True, text=True, check=True).stdout
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: .*", out)
    if bad or (errors and re.search(r"(connect|timeout|read|write) [1-9]", errors.group(0))):
        raise SystemExit(f"errors while loading {point.path}:\n{out}")
    answers = int(re.search(r"(\d+) requests in", out).group(1))
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)), answers


def _python_load(base: str, point: Endpoint, duration: float, connections: int) -> tuple[float, int]:
    """``connections`` threads each sending requests one after another until ``duration`` is
    over; a request started in time is finished and counted, and so is the time it took."""
    host, port = base.removeprefix("http://").split(":")
    headers = {"Authorization": f"Bearer {point.token}"} if point.token else {}
    done = [0] * connections
    failures: list[str] = []
    stop = time.perf_counter() + duration

    def worker(slot: int) -> None:
        while time.perf_counter() < stop:
            conn = http.client.HTTPConnection(host, int(port), timeout=30)
            conn.request("GET", point.path, headers=headers)
            response = conn.getresponse()
            response.read()
            conn.close()
            if response.status != 200:
                failures.append(f"{response.status}")
                return
            done[slot] += 1

    started = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(slot,)) for slot in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise SystemExit(f"{point.path} answered {failures[0]} under load")
    return sum(done) / (time.perf_counter() - started), sum(done)


def _described(root: Path) -> str:
    """A checkout and the commit it holds."""
    commit = subprocess.run(
        ["git", "-C", str(root), "log", "-1", "--format=%h %s"], capture_output=True, text=True
    ).stdout.strip()
    return f"{root}, {commit[:72]}" if commit else str(root)


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def _spread(values: list[float]) -> str:
    return " ".join(
        f"{v:7.1f}" if v >= 10 else f"{v:7.2f}" for v in (min(values), statistics.median(values), max(values))
    )


def report(points: list[Endpoint]) -> bool:
    print(
        f"\n{'endpoint':<48} {'app req/s min/median/max':>24}   {'bare req/s min/median/max':>25}"
        f" {'ratio':>6} {'target':>7}  verdict"
    )
    all_met = True
    for point in points:
        ratio = statistics.median(point.app) / statistics.median(point.bare)
        met = ratio >= point.target
        all_met &= met
        print(
            f"{point.name + (' *' if point.slow else ''):<48} {_spread(point.app):>24}   {_spread(point.bare):>25} {ratio:6.2f} "
            f"{'>= ' + format(point.target, '.1f'):>7}  {'met' if met else 'NOT met'}"
        )
    print(
        f"\n{'CPU ms per answer (gunicorn + PostgreSQL)':<48} {'app min/median/max':>24}   "
        f"{'bare min/median/max':>25} {'ratio':>6}"
    )
    for point in points:
        ratio = statistics.median(point.bare_cpu) / statistics.median(point.app_cpu)
        print(f"{point.name:<48} {_spread(point.app_cpu):>24}   {_spread(point.bare_cpu):>25} {ratio:6.2f}")
    return all_met


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    parser.add_argument(
        "--duration", type=float, default=5.0, help="seconds of load per endpoint, server and round"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=6, help="open connections of the load generator")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn sync workers of each server")
    parser.add_argument("--issues", type=int, default=20_000, help="issues of the tracker project")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rebuild", action="store_true", help="build the data again")
    parser.add_argument(
        "--app-root",
        type=Path,
        default=ROOT,
        help="serve the app from this checkout (a git worktree of an earlier commit, say) to measure "
        "before and after against the same bare app; the data, settings and bare app stay this checkout's",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="TEXT",
        help="load only the endpoints whose name contains TEXT (repeatable; bodies are checked for all)",
    )
    parser.add_argument(
        "--python-client", action="store_true", help="load with the Python client even if wrk is here"
    )
    args = parser.parse_args()

    url = normalize_database_url(args.database_url)
    load = _wrk
    if args.python_client or shutil.which("wrk") is None:
        if not args.python_client:
            print("wrk not found (`apt-get install -y wrk`): loading with the Python client, which is slower")
        load = _python_load
    tracker_bench.ensure_database(url)
    if args.rebuild or not _has_data(url, args.issues):
        build(url, args.issues, args.seed)
    ids = _lookups(url)
    database = url.rsplit("/", 1)[1].split("?")[0]
    print(f"uptime at start: {_uptime()}")

    env = {
        **os.environ,
        "GIRO_ENV": "production",
        "DATABASE_URL": _plain(url),
        "SECRET_KEY": secrets.token_hex(32),
        "JWT_SECRET_KEY": secrets.token_hex(32),
        "LOG_FORMAT": "json",
        "SMTP_HOST": "",
        "REDIS_URL": "",
    }
    with tempfile.TemporaryDirectory(prefix="giro-overhead-") as folder:
        servers = [
            Server("app", "app:create_app()", env, args.workers, Path(folder), args.app_root),
            Server("bare", "benchmarks.bare_app:app", env, args.workers, Path(folder)),
        ]
        app, bare = servers
        try:
            for server in servers:
                server.wait()
            stock, tracker = _login(app)
            points = endpoints(ids, stock, tracker)
            print(
                f"app ({_described(args.app_root)}) on :{app.port}, bare on :{bare.port}, "
                f"{args.workers} sync workers each; checking bodies"
            )
            check_bodies(app, bare, points, lenient=args.app_root.resolve() != ROOT)
            if args.only:
                points = [point for point in points if any(text in point.name for text in args.only)]
            for point in points:  # warm both servers' workers before timing
                for server in servers:
                    for _ in range(args.workers):
                        _request(server.base, point.path, point.token)
            for round_number in range(1, args.rounds + 1):
                began = time.perf_counter()
                # Each endpoint loads both servers back to back, so a change in the machine's
                # other load hits both alike; the order swaps every round.
                order = servers if round_number % 2 else servers[::-1]
                for point in points:
                    for server in order:
                        figures = point.app if server is app else point.bare
                        cpu = point.app_cpu if server is app else point.bare_cpu
                        measure = _python_load if point.slow else load
                        with CpuMeter(server, database) as meter:
                            rate, answers = measure(server.base, point, args.duration, args.connections)
                        figures.append(rate)
                        cpu.append(meter.spent_ms / max(answers, 1))
                        print(
                            f"    {point.name[:30]:<30} {server.name:<4} {rate:8.1f}/s  "
                            f"{meter.server_ms / max(answers, 1):6.2f} + {meter.database_ms / max(answers, 1):6.2f} ms CPU"
                        )
                print(f"  round {round_number} of {args.rounds}: {time.perf_counter() - began:.0f} s")
        finally:
            for server in servers:
                server.stop()
    all_met = report(points)
    client = "wrk -t1" if load is _wrk else "Python client"
    if load is _wrk and any(point.slow for point in points):
        print("* loaded with the Python client: a request started in the window is finished and counted")
    print(
        f"\n{args.rounds} rounds of {args.duration:g} s per endpoint and server, back to back; {client}, "
        f"{args.connections} connections; {args.workers} gunicorn sync workers each; "
        f"{os.cpu_count()} CPUs; PostgreSQL at {url.split('@')[-1]}; {date.today().isoformat()}"
    )
    print(f"uptime at end: {_uptime()}")
    return 0 if all_met else 1


if __name__ == "__main__":
    sys.exit(main())
