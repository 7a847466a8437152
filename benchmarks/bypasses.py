"""What each framework bypass saves: the app's fast paths against the plain version, in one sitting.

    .venv/bin/python benchmarks/bypasses.py [--database-url URL] [--runs 200] [--rounds 3]
        [--issues 3000] [--rebuild] [--only TEXT] [--bypass NAME] [--combined] [--no-pages]
        [--board-query q=up]

About 16 minutes with the defaults on a 2-core machine at load 3 (``--runs 150`` for less).

The app keeps three bypasses of its framework for speed (a fourth, PyJWT's segment check made
by one regular expression, saved about 0.08 ms per request, 5 % of ``/auth/me``, and went). Each is turned off here in-process,
inside this script only, to give the plain version (the framework doing the work):

``driver``  ``services.rows.DriverRead`` runs its fixed statements on the driver's cursor (the
            bearer token's account and deny-list check, project access, the issue reads, custom
            fields). Plain: the connection's ``execute``, the path it already takes when an engine
            cursor listener is attached (``DriverRead._connection`` answers no compiled statement).
``fast``    ``schemas.fast``: ``RowDumper``'s generated dump functions (``/auth/me``, the issue
            reads, the recommendation lists, totals, grade) and ``sql_json_object`` (each
            recommendation's JSON written by PostgreSQL for a whole batch, ``GET /lotes/{id}``).
            Plain: marshmallow's own ``Schema.dump`` of the same rows and objects, the JSON
            encoded in Python (the module globals holding the dumpers are swapped, and the SQL
            JSON expression is set to None, which is the path taken on SQLite).
            ``fast-sql`` isolates ``sql_json_object``: plain is the RowDumper path.
``health``  ``blueprints.health.LivenessProbes`` answers ``/health`` in front of Flask. Plain: its
            ``probes`` emptied, so every probe reaches the Flask view, which answers the same body.

A ``none`` pair (the same state timed twice) on a few endpoints shows the noise floor.

Data, in its own PostgreSQL database (default ``giro_bench_bypasses``, created when missing, kept
for the next run unless ``--rebuild``): the demo network with this week's batch (about 3,100
recommendations) and a tracker project of ``--issues`` issues, built by ``api_overhead.build``
(the helpers of ``render_pages.py`` and ``tracker_issues.py``). Requests go through the Flask
test client (in-process WSGI, no network), with real bearer tokens from the login endpoints, or
with the login cookies for the pages; ``GIRO_ENV=production`` and request logging on, as in
production (the log written to /dev/null).

Before timing, every endpoint is fetched in each bypass's two states and the script stops unless
status and body are the same (JSON compared parsed; pages as text, the per-request nonce
aside). Then, in each of ``--rounds`` rounds, for each endpoint and each bypass, it sends
``--runs`` requests (fewer for the heavy endpoints: the count is printed) with the bypass on and
as many plain, back to back, the order swapping every round, and records per request: this
process's CPU (``time.process_time``), the CPU of the database's PostgreSQL backends (from
``/proc``: a bypass that moves work into the database, as ``sql_json_object`` does, shows it
there), and wall time. It prints min/median/max over the rounds for each state, the ratio
plain/bypass of the medians, the saving, and ``os.getloadavg()`` at start and end. The whole-batch
lists time only ``fast``. The batch page, board and issue list page are the HTML pages
of ``render_pages.py`` and ``render_board.py`` (the board filtered to about 500 cards, the size
of the README's figure); they use no ``schemas.fast`` dumper.
"""

from __future__ import annotations

import argparse
import difflib
import gc
import json
import os
import re
import secrets
import statistics
import sys
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Production settings, read by ``config`` when first imported: real secrets, no Redis, no SMTP.
os.environ["GIRO_ENV"] = "production"
os.environ["SECRET_KEY"] = secrets.token_hex(32)
os.environ["JWT_SECRET_KEY"] = secrets.token_hex(32)
os.environ["LOG_FORMAT"] = "json"
os.environ.pop("REDIS_URL", None)
os.environ.pop("SMTP_HOST", None)

from benchmarks import api_overhead  # noqa: E402
from benchmarks import tracker_issues as tracker_bench  # noqa: E402
from config import normalize_database_url  # noqa: E402

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/giro_bench_bypasses"
STOCK_API, TRACKER_API = "/api/v1", "/tracker/api/v1"
HTTPS = "https://localhost"  # production cookies are Secure: the pages are asked over https
# The README figures an endpoint is part of (README "Benchmarks" table).
OVERHEAD = "API overhead"
ISSUES = "issue list medians"
WHOLE = "whole batch last byte"
RENDER = "page render"


# --- the bypasses and their plain versions -------------------------------------------------------


class Bypass:
    """A bypass of the framework: ``plain()`` turns it off in this process, ``restore()`` back on."""

    name = ""
    label = ""

    def plain(self) -> None:
        raise NotImplementedError

    def restore(self) -> None:
        raise NotImplementedError


class NoBypass(Bypass):
    """The same state timed twice: how far apart two identical variants come out (noise)."""

    name = "none"
    label = "none (same code twice: noise)"

    def plain(self) -> None:
        pass

    def restore(self) -> None:
        pass


class DriverReadBypass(Bypass):
    name = "driver"
    label = "1 DriverRead on the driver's cursor"

    def __init__(self):
        from services.rows import DriverRead

        self.cls = DriverRead
        self.original = DriverRead.__dict__["_connection"]

    def plain(self) -> None:
        from extensions import db

        def _connection(read):
            # What ``DriverRead._connection`` gives while an engine cursor listener is attached:
            # the session's connection and no compiled statement, so ``first``/``all`` run the
            # statement through ``Connection.execute``.
            session = db.session()
            if session.autoflush:
                session.flush()
            return session.connection(), None

        self.cls._connection = _connection

    def restore(self) -> None:
        self.cls._connection = self.original

    def on_cursor(self) -> tuple[int, int]:
        """DriverRead statements compiled for the driver's cursor, of those compiled so far."""
        reads = [o for o in gc.get_objects() if isinstance(o, self.cls)]
        compiled = [entry for read in reads for entry in read._compiled.values()]
        return sum(entry is not None for entry in compiled), len(compiled)


class PlainDumper:
    """``RowDumper``'s interface over marshmallow's own ``Schema.dump``."""

    def __init__(self, schema):
        self.schema = schema
        self.dump = schema.dump

    def dump_many(self, rows):
        return self.schema.dump(rows if isinstance(rows, list | tuple) else list(rows), many=True)


class FastDumpBypass(Bypass):
    """``schemas.fast``: the module globals that hold a ``RowDumper`` (or its generated ``dump``),
    and the SQL JSON expression of a whole batch."""

    name = "fast"
    label = "2 schemas.fast (RowDumper + sql_json_object)"
    # Globals holding a RowDumper's generated function, not the dumper: the schema they dump.
    FUNCTIONS = {
        "blueprints.tracker.issues": {
            "_page_dump": "IssuePage",
            "_detail_dump": "IssueDetail",
            "_issue_dump": "Issue",
        }
    }

    def __init__(self, sql_only: bool = False):
        import importlib

        from schemas.fast import RowDumper

        self.sql_only = sql_only
        if sql_only:
            self.name, self.label = "fast-sql", "2b sql_json_object alone (plain: RowDumper)"
        self.swaps: list[tuple[object, str, object, object]] = []  # (module, name, bypass, plain)
        for module_name in sorted(sys.modules):
            module = sys.modules[module_name]
            if not module_name.startswith(("blueprints", "services", "schemas")) or module is None:
                continue
            for name, value in list(vars(module).items()):
                if isinstance(value, RowDumper) and not sql_only:
                    self.swaps.append((module, name, value, PlainDumper(value.schema)))
                elif isinstance(value, types.FunctionType) and value.__code__.co_filename.startswith(
                    "<RowDumper"
                ):
                    schema_name = self.FUNCTIONS.get(module_name, {}).get(name)
                    if schema_name is None:
                        raise SystemExit(
                            f"{module_name}.{name} is a RowDumper function this script does not map"
                        )
                    if not sql_only:
                        schema = getattr(importlib.import_module("schemas.tracker.issues"), schema_name)()
                        self.swaps.append((module, name, value, schema.dump))
        batches = importlib.import_module("blueprints.stock.batches")
        self.swaps.append((batches, "RECOMENDACAO_SQL", batches.RECOMENDACAO_SQL, None))
        if not sql_only:
            print(
                "  schemas.fast plain: "
                + ", ".join(f"{m.__name__.split('.', 1)[1]}.{n}" for m, n, _, _ in self.swaps)
            )

    def plain(self) -> None:
        for module, name, _bypass, plain in self.swaps:
            setattr(module, name, plain)

    def restore(self) -> None:
        for module, name, bypass, _plain in self.swaps:
            setattr(module, name, bypass)


class HealthBypass(Bypass):
    name = "health"
    label = "3 /health answered in front of Flask"

    def __init__(self, app):
        from blueprints.health import LivenessProbes

        self.probes = next(
            (o for o in gc.get_objects() if isinstance(o, LivenessProbes) and o.app is app), None
        )
        if self.probes is None:
            raise SystemExit("no LivenessProbes in front of the app")
        self.original = self.probes.probes

    def plain(self) -> None:
        self.probes.probes = {}  # every probe goes on to the Flask view ``health``

    def restore(self) -> None:
        self.probes.probes = self.original


class Combined(Bypass):
    name = "all"
    label = "all three at once"

    def __init__(self, parts: list[Bypass]):
        self.parts = parts

    def plain(self) -> None:
        for part in self.parts:
            part.plain()

    def restore(self) -> None:
        for part in self.parts:
            part.restore()


# --- endpoints ---------------------------------------------------------------------------------


@dataclass
class Endpoint:
    name: str
    path: str
    who: str  # stock / tracker (bearer), stock-page / tracker-page (cookies), none
    bypasses: tuple[str, ...]
    readme: tuple[str, ...] = ()
    weight: int = 1  # runs are divided by this (heavy endpoints)
    html: bool = False


@dataclass
class Figures:
    cpu: list[float] = field(default_factory=list)  # this process, ms per request
    pg: list[float] = field(default_factory=list)  # PostgreSQL backends, ms per request
    wall: list[float] = field(default_factory=list)


@dataclass
class Pair:
    endpoint: Endpoint
    bypass: Bypass
    runs: int
    on: Figures = field(default_factory=Figures)
    off: Figures = field(default_factory=Figures)


SERVED = ("driver", "fast")  # every authenticated API endpoint
PAGES = ("driver",)  # pages dump with templates, not schemas.fast


def endpoints(ids: dict, board_query: str) -> list[Endpoint]:
    issues = f"{TRACKER_API}/workspaces/{tracker_bench.SLUG}/projects/{ids['project_id']}/issues"
    todo, doing = ids["statuses"]["todo"], ids["statuses"]["in_progress"]
    recs = f"{STOCK_API}/remanejamento/recomendacoes"
    lote = f"{STOCK_API}/remanejamento/lotes/{ids['lote_id']}"
    n = ids["recommendations"]
    pages = f"/tracker/w/{tracker_bench.SLUG}/p/{ids['project_id']}"
    return [
        Endpoint("GET /health", "/health", "none", ("health",), (OVERHEAD,)),
        Endpoint("GET /api/v1/auth/me", f"{STOCK_API}/auth/me", "stock", (*SERVED, "none"), (OVERHEAD,)),
        Endpoint("issue list, default (50)", issues, "tracker", (*SERVED, "none"), (OVERHEAD, ISSUES)),
        Endpoint(
            "issue list, 2 statuses x 2 priorities",
            f"{issues}?status_id={todo}&status_id={doing}&priority=high&priority=urgent",
            "tracker",
            SERVED,
            (OVERHEAD, ISSUES),
        ),
        Endpoint("issue list, q=aurora", f"{issues}?q=aurora", "tracker", SERVED, (OVERHEAD, ISSUES)),
        Endpoint(
            "one issue (3 sub-issues, 2 relations)",
            f"{issues}/{tracker_bench.PROJECT_KEY}-{api_overhead.DETAIL_NUMBER}",
            "tracker",
            SERVED,
            (OVERHEAD, ISSUES),
        ),
        Endpoint("recommendations, page of 50", f"{recs}?limite=50&offset=100", "stock", SERVED, (OVERHEAD,)),
        Endpoint("lote recommendations, page of 50", f"{lote}/recomendacoes?limite=50", "stock", SERVED),
        # DriverRead's saving is a fixed amount per request (see /auth/me): on these two it is far
        # below the rounds' spread, so only the dump is timed there.
        Endpoint(
            f"lote recommendations, whole ({n:,})", f"{lote}/recomendacoes", "stock", ("fast",), (), weight=15
        ),
        Endpoint(f"recommendations, whole ({n:,})", recs, "stock", ("fast",), (OVERHEAD,), weight=15),
        Endpoint(
            f"GET lote/{{id}}, whole batch ({n:,})",
            lote,
            "stock",
            (*SERVED, "fast-sql"),
            (WHOLE,),
            weight=15,
        ),
        Endpoint("batch totals", f"{lote}/totais", "stock", SERVED, (OVERHEAD,)),
        Endpoint(
            f"grade matrix ({ids['produto_recs']} recs)",
            f"{STOCK_API}/produtos/{ids['produto_id']}/grade",
            "stock",
            SERVED,
            (OVERHEAD,),
        ),
        Endpoint(
            "page: batch (first 50 rows)",
            f"/lotes/{ids['lote_id']}",
            "stock-page",
            PAGES,
            (RENDER,),
            weight=8,
            html=True,
        ),
        Endpoint(
            f"page: board ({board_query})",
            f"{pages}/board?{board_query}",
            "tracker-page",
            PAGES,
            (RENDER,),
            weight=8,
            html=True,
        ),
        Endpoint("page: issue list (50)", f"{pages}/issues", "tracker-page", PAGES, (), weight=4, html=True),
    ]


# --- requests ------------------------------------------------------------------------------------


class Caller:
    """The test clients: bearer tokens for the APIs, a signed-in cookie jar per service for pages."""

    def __init__(self, app):
        from services.stock.demo import DEMO_PASSWORD

        self.api = app.test_client()
        login = self.api.post(
            f"{STOCK_API}/auth/login", json={"email": api_overhead.PLANNER, "senha": DEMO_PASSWORD}
        )
        if login.status_code != 200:
            raise SystemExit(f"stock login answered {login.status_code}: {login.get_data()[:300]!r}")
        self.headers = {"stock": {"Authorization": f"Bearer {login.get_json()['accessToken']}"}}
        login = self.api.post(
            f"{TRACKER_API}/auth/login",
            json={"email": tracker_bench.OWNER_EMAIL, "password": tracker_bench.PASSWORD},
        )
        if login.status_code != 200:
            raise SystemExit(f"tracker login answered {login.status_code}: {login.get_data()[:300]!r}")
        self.headers["tracker"] = {"Authorization": f"Bearer {login.get_json()['access_token']}"}
        self.headers["none"] = {}
        self.pages = {}
        for who, (email, password) in {
            "stock-page": (api_overhead.PLANNER, DEMO_PASSWORD),
            "tracker-page": (tracker_bench.OWNER_EMAIL, tracker_bench.PASSWORD),
        }.items():
            client = app.test_client()
            answer = client.post("/login", data={"email": email, "senha": password}, base_url=HTTPS)
            if answer.status_code != 302:
                raise SystemExit(f"page login of {email} answered {answer.status_code}")
            self.pages[who] = client

    def call(self, point: Endpoint) -> tuple[int, bytes]:
        if point.who in self.pages:
            response = self.pages[point.who].get(point.path, base_url=HTTPS)
        else:
            response = self.api.get(point.path, headers=self.headers[point.who])
        body = response.get_data()  # a streamed body is read to its last byte here
        response.close()
        return response.status_code, body

    def caller(self, point: Endpoint) -> Callable[[], None]:
        def call() -> None:
            status, body = self.call(point)
            if status != 200:
                raise SystemExit(f"{point.path} answered {status}: {body[:300]!r}")

        return call


_NONCE = re.compile(rb'nonce="[^"]*"|[0-9a-f]{32}')


def _comparable(point: Endpoint, status: int, body: bytes) -> str:
    if point.html:
        return f"{status}\n" + _NONCE.sub(b"<nonce>", body).decode()
    return f"{status}\n" + json.dumps(json.loads(body), sort_keys=True, indent=1, ensure_ascii=False)


def check_bodies(caller: Caller, pairs: list[Pair]) -> None:
    """Stop with a diff unless each bypass's two states answer each endpoint the same."""
    for pair in pairs:
        point, bypass = pair.endpoint, pair.bypass
        first = _comparable(point, *caller.call(point))
        bypass.plain()
        try:
            plain = _comparable(point, *caller.call(point))
        finally:
            bypass.restore()
        if not first.startswith("200\n"):
            raise SystemExit(f"{point.name} answered {first[:200]}")
        if first != plain:
            diff = difflib.unified_diff(
                first.splitlines(), plain.splitlines(), "bypass", "plain", lineterm="", n=1
            )
            print("\n".join(list(diff)[:60]))
            raise SystemExit(f"{point.name}: bypass {bypass.name} and plain answer differently")
    checked = {pair.endpoint.name for pair in pairs}
    print(f"  same status and body with each bypass on and off: {len(pairs)} pairs, {len(checked)} endpoints")


# --- timing --------------------------------------------------------------------------------------


class PostgresCpu:
    """CPU of the PostgreSQL backends serving the bench database, from /proc (clock ticks)."""

    def __init__(self, database: str):
        self.database = database

    def ticks(self) -> dict[int, int]:
        return {pid: api_overhead._cpu_ticks(pid) for pid in api_overhead._backends(self.database)}

    @staticmethod
    def spent_ms(before: dict[int, int], after: dict[int, int]) -> float:
        ticks = sum(value - before.get(pid, 0) for pid, value in after.items())
        return ticks * 1000 / api_overhead.CLOCK_TICK


def timed(call: Callable[[], None], runs: int, pg: PostgresCpu, into: Figures) -> None:
    call()  # warm: the state just switched
    call()
    before = pg.ticks()
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(runs):
        call()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    into.pg.append(pg.spent_ms(before, pg.ticks()) / runs)
    into.cpu.append(cpu * 1000 / runs)
    into.wall.append(wall * 1000 / runs)


def _spread(values: list[float]) -> str:
    def fmt(v: float) -> str:
        return f"{v:.1f}" if v >= 100 else f"{v:.2f}" if v >= 1 else f"{v:.3f}"

    return "/".join(fmt(v) for v in (min(values), statistics.median(values), max(values)))


def _saving(on: list[float], off: list[float]) -> tuple[float, float]:
    """Ratio plain/bypass of the medians, and the share of the plain median saved (%)."""
    a, b = statistics.median(on), statistics.median(off)
    if a <= 0 or b <= 0:
        return float("nan"), float("nan")
    return b / a, (b - a) / b * 100


def report(pairs: list[Pair], bypasses: list[Bypass]) -> None:
    head = (
        f"{'endpoint':<42} {'runs':>4}  {'bypass CPU ms min/med/max':>25}  {'plain CPU ms min/med/max':>25}"
        f"  {'ratio':>5} {'saved':>6}   {'+PostgreSQL bypass/plain med':>28} {'ratio':>5} {'saved':>6}"
    )
    for bypass in bypasses:
        mine = [pair for pair in pairs if pair.bypass is bypass]
        if not mine:
            continue
        print(f"\n{bypass.label}\n{head}")
        for pair in mine:
            ratio, saved = _saving(pair.on.cpu, pair.off.cpu)
            total_on = [c + p for c, p in zip(pair.on.cpu, pair.on.pg, strict=True)]
            total_off = [c + p for c, p in zip(pair.off.cpu, pair.off.pg, strict=True)]
            t_ratio, t_saved = _saving(total_on, total_off)
            both = f"{statistics.median(total_on):.2f}/{statistics.median(total_off):.2f}"
            print(
                f"{pair.endpoint.name[:42]:<42} {pair.runs:>4}  {_spread(pair.on.cpu):>25}  {_spread(pair.off.cpu):>25}"
                f"  {ratio:5.2f} {saved:5.1f}%   {both:>28} {t_ratio:5.2f} {t_saved:5.1f}%"
            )
    print(
        "\nCPU ms = this process's CPU per request (time.process_time), min/median/max of the rounds' "
        "means;\n+PostgreSQL = the same plus the database backends' CPU per request (/proc, 10 ms ticks "
        "summed over each round); ratio = plain/bypass of the medians; saved = 1 - bypass/plain."
    )
    print(f"\n{'wall ms per request (median)':<42} {'bypass':>8} {'plain':>8}  bypass")
    for pair in pairs:
        print(
            f"{pair.endpoint.name[:42]:<42} {statistics.median(pair.on.wall):8.2f} "
            f"{statistics.median(pair.off.wall):8.2f}  {pair.bypass.name}"
        )


def verdicts(pairs: list[Pair], bypasses: list[Bypass]) -> None:
    print("\nVerdicts (Python CPU per request, medians; README figures an endpoint is part of in brackets):")
    for bypass in bypasses:
        mine = [pair for pair in pairs if pair.bypass is bypass]
        if not mine or bypass.name == "none":
            continue
        ranked = sorted(mine, key=lambda pair: -_saving(pair.on.cpu, pair.off.cpu)[1])
        best = ranked[0]
        covered = [pair for pair in mine if pair.endpoint.readme]
        over = [pair for pair in covered if _saving(pair.on.cpu, pair.off.cpu)[1] > 15]
        parts = ", ".join(
            f"{_saving(pair.on.cpu, pair.off.cpu)[1]:.0f} % on {pair.endpoint.name}"
            + (f" [{', '.join(pair.endpoint.readme)}]" if pair.endpoint.readme else "")
            for pair in ranked
        )
        print(f"- {bypass.label}: saves {parts}.")
        print(
            f"  most on {best.endpoint.name}; > 15 % on a README-covered endpoint: "
            + ("yes: " + ", ".join(pair.endpoint.name for pair in over) if over else "no")
        )
    none = [pair for pair in pairs if pair.bypass.name == "none"]
    if none:
        print(
            "- noise (same code timed as both states): "
            + ", ".join(f"{_saving(p.on.cpu, p.off.cpu)[1]:+.1f} % on {p.endpoint.name}" for p in none)
        )


# --- main --------------------------------------------------------------------------------------


def _loadavg() -> str:
    return "load average {:.2f} {:.2f} {:.2f} (1, 5, 15 min; {} CPUs)".format(
        *os.getloadavg(), os.cpu_count()
    )


def _quiet_request_log() -> None:
    """Request logging stays on, as in production, written to /dev/null instead of this output."""
    import logging

    sink = open(os.devnull, "w")  # noqa: SIM115 (open for the process's life)
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler):
            handler.setStream(sink)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    parser.add_argument(
        "--runs", type=int, default=200, help="requests per state and round (heavy endpoints fewer)"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--issues", type=int, default=3000, help="issues of the tracker project")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rebuild", action="store_true", help="build the data again")
    parser.add_argument("--only", action="append", metavar="TEXT", help="endpoints whose name contains TEXT")
    parser.add_argument(
        "--bypass",
        action="append",
        choices=("driver", "fast", "fast-sql", "health", "none"),
        help="time only these bypasses (repeatable)",
    )
    parser.add_argument("--combined", action="store_true", help="also time all four bypasses off at once")
    parser.add_argument("--no-pages", action="store_true", help="leave the HTML pages out")
    parser.add_argument(
        "--board-query",
        default="q=up",
        help="the board's filter (the README's board figure has 500 cards; q=up gives about 480 of 3,000 issues)",
    )
    args = parser.parse_args()

    url = normalize_database_url(args.database_url)
    tracker_bench.ensure_database(url)
    if args.rebuild or not api_overhead._has_data(url, args.issues):
        api_overhead.build(url, args.issues, args.seed)
    ids = api_overhead._lookups(url)
    database = url.rsplit("/", 1)[1].split("?")[0]
    print(f"start: {_loadavg()}")
    began = time.perf_counter()

    from app import create_app

    app = create_app({"SQLALCHEMY_DATABASE_URI": url})
    _quiet_request_log()
    caller = Caller(app)
    parts: list[Bypass] = [DriverReadBypass(), FastDumpBypass(), HealthBypass(app)]
    extra: list[Bypass] = [FastDumpBypass(sql_only=True), NoBypass()]
    by_name = {bypass.name: bypass for bypass in parts + extra}
    combined = Combined(parts) if args.combined else None
    board = args.board_query
    points = endpoints(ids, board)
    if args.no_pages:
        points = [point for point in points if not point.html]
    if args.only:
        points = [point for point in points if any(text in point.name for text in args.only)]
    wanted = set(args.bypass or by_name)
    pairs = [
        Pair(point, by_name[name], max(10, args.runs // point.weight))
        for point in points
        for name in point.bypasses
        if name in wanted
    ]
    if combined is not None:
        pairs += [Pair(point, combined, max(10, args.runs // point.weight)) for point in points]
    board_point = next((p for p in points if p.name.startswith("page: board")), None)
    cards = caller.call(board_point)[1].count(b'class="issue-card"') if board_point else 0
    print(
        f"data: {ids['recommendations']:,} recommendations in this week's batch, {args.issues:,} issues in "
        f"{tracker_bench.PROJECT_KEY}" + (f"; board {board!r}: {cards} cards" if board_point else "")
    )
    check_bodies(caller, pairs)
    on, seen = by_name["driver"].on_cursor()
    print(f"  DriverRead statements compiled for the driver's cursor: {on} of {seen} (the rest use execute)")

    order_bypasses = [b for b in [*parts, *extra, combined] if b is not None]
    # Warm-up, not recorded: a few requests of each pair in both states.
    scratch = PostgresCpu(database)
    for pair in pairs:
        for state in ("on", "plain"):
            if state == "plain":
                pair.bypass.plain()
            try:
                timed(caller.caller(pair.endpoint), max(1, min(10, pair.runs // 4)), scratch, Figures())
            finally:
                pair.bypass.restore()
    print(f"  warmed up; {_loadavg()}")
    for round_number in range(1, args.rounds + 1):
        started = time.perf_counter()
        pg = PostgresCpu(database)
        for pair in pairs:
            call = caller.caller(pair.endpoint)
            states = [("on", pair.on), ("plain", pair.off)]
            if round_number % 2 == 0:
                states.reverse()
            for state, figures in states:
                if state == "plain":
                    pair.bypass.plain()
                try:
                    timed(call, pair.runs, pg, figures)
                finally:
                    pair.bypass.restore()
        print(f"  round {round_number} of {args.rounds}: {time.perf_counter() - started:.0f} s; {_loadavg()}")

    report(pairs, order_bypasses)
    verdicts(pairs, order_bypasses)
    print(
        f"\n{args.rounds} rounds, each state back to back per endpoint (order swapping every round), 2 warm-up "
        f"requests per state; Flask test client in-process; PostgreSQL at {url.split('@')[-1]}; "
        f"{date.today().isoformat()}; {time.perf_counter() - began:.0f} s of timing"
    )
    print(f"end: {_loadavg()}")
    with app.app_context():
        from extensions import db

        db.engine.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
