"""A small team at work on `make run`'s shape: 3 gunicorn workers on the suite's database, jobs
in threads of the web processes (no Redis), 8 clients at once for a bounded time, each doing
the writes the pages and APIs offer (single and bulk decisions, sales imports, issues,
comments with mentions, retitles, rank moves, audited exports) while webhook deliveries and
notification mails run beside them.

What must hold: no answer is a 5xx, and every write the server acknowledged is there afterwards.
On SQLite this is the embedded default's concurrency; with ``TEST_DATABASE_URL``, PostgreSQL's.
The same shape also proves that the workers share one sign-in budget without Redis.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import random
import subprocess
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
from sqlalchemy import create_engine, text

from extensions import db
from tests.factories import make_user
from tests.servers import ROOT, free_port, start_gunicorn, stop

pytestmark = pytest.mark.committing

CLIENTS = 8
WORKERS = int(os.environ.get("SOAK_WORKERS", "3"))
SECONDS = float(os.environ.get("SOAK_SECONDS", "8"))
PASSWORD = "giro-demo-2026"
DEMO = "@demo.giro.com.br"


class _Hooks(BaseHTTPRequestHandler):
    received = 0

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).received += 1
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@dataclass
class Ledger:
    """What the server acknowledged, and every status it answered."""

    statuses: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)  # issue key -> last acknowledged title
    comments: set[str] = field(default_factory=set)
    decided: dict[str, str] = field(default_factory=dict)  # recommendation id -> status
    sales: dict[tuple[str, str, str], int] = field(default_factory=dict)  # (store, sku, size) -> qtd
    exports: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def seen(self, response: requests.Response, what: str) -> requests.Response:
        with self.lock:
            self.statuses[response.status_code] += 1
            if response.status_code >= 500:
                self.failures.append(f"{what}: {response.status_code} {response.text[:300]}")
        return response


class Client:
    def __init__(self, base: str, ledger: Ledger):
        self.base = base
        self.ledger = ledger
        self.http = requests.Session()
        self.headers: dict[str, str] = {}

    def call(self, method: str, path: str, what: str, **kwargs) -> requests.Response:
        kwargs.setdefault("timeout", 60)
        kwargs.setdefault("allow_redirects", False)
        headers = {**self.headers, **kwargs.pop("headers", {})}
        return self.ledger.seen(self.http.request(method, self.base + path, headers=headers, **kwargs), what)

    def tracker_token(self, email: str) -> None:
        login = self.call(
            "POST", "/tracker/api/v1/auth/login", "login", json={"email": email, "password": PASSWORD}
        )
        assert login.status_code == 200, login.text
        self.headers = {"Authorization": f"Bearer {login.json()['access_token']}"}

    def stock_token(self, email: str) -> None:
        login = self.call("POST", "/api/v1/auth/login", "login", json={"email": email, "senha": PASSWORD})
        assert login.status_code == 200, login.text
        self.headers = {"Authorization": f"Bearer {login.json()['accessToken']}"}

    def page_login(self, email: str) -> None:
        signed = self.call("POST", "/login", "login", data={"email": email, "senha": PASSWORD})
        assert signed.status_code == 302, signed.text
        self.headers = {"X-CSRF-TOKEN": self.http.cookies.get("csrf_access_token")}


@pytest.fixture
def server_env(app, tmp_path) -> dict:
    """``make run``'s environment on the suite's database: no Redis, no SMTP."""
    (tmp_path / "prometheus").mkdir()
    return {
        **{k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "SMTP_HOST")},
        "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
        "ARGON2_TIME_COST": "1",
        "ARGON2_MEMORY_COST": "1024",
        "LOG_REQUESTS": "false",
        "JOBS_SPOOL_DIR": str(tmp_path / "spool"),
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "prometheus"),
        "SUPERADMIN_EMAIL": f"superadmin{DEMO}",
    }


@pytest.fixture
def team_server(server_env, tmp_path):
    env, url = server_env, server_env["DATABASE_URL"]
    loaded = subprocess.run(
        [str(ROOT / ".venv/bin/flask"), "--app", "app", "demo", "load", "--stores", "6", "--products", "12"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    hooks = ThreadingHTTPServer(("127.0.0.1", 0), _Hooks)
    threading.Thread(target=hooks.serve_forever, daemon=True).start()
    port = free_port()
    server = start_gunicorn(env, port, workers=WORKERS, log=tmp_path / "gunicorn.log")
    try:
        yield f"http://127.0.0.1:{port}", f"http://127.0.0.1:{hooks.server_address[1]}/hook", url
    finally:
        stop(server)
        hooks.shutdown()
        log = (tmp_path / "gunicorn.log").read_text(errors="replace")
        assert "Traceback" not in log, log[-4000:]


def _setup(base: str, hook_url: str, ledger: Ledger) -> dict:
    """The demo organization on the plan with the audit log, a webhook, and what the clients share."""
    root = Client(base, ledger)
    root.tracker_token(f"superadmin{DEMO}")
    [workspace] = root.call("GET", "/tracker/api/v1/workspaces", "workspaces").json()["workspaces"]
    organization = workspace["organization_id"]
    upgraded = root.call(
        "PATCH", f"/tracker/api/v1/admin/organizations/{organization}", "plan", json={"plan": "enterprise"}
    )
    assert upgraded.status_code == 200, upgraded.text
    owner = Client(base, ledger)
    owner.tracker_token(f"admin{DEMO}")
    hook = owner.call(
        "POST",
        f"/tracker/api/v1/organizations/{organization}/webhooks",
        "webhook",
        json={"url": hook_url, "events": ["issue.created", "issue.updated", "comment.created"]},
    )
    assert hook.status_code == 201, hook.text
    slug = workspace["slug"]
    projects = owner.call("GET", f"/tracker/api/v1/workspaces/{slug}/projects", "projects").json()["projects"]
    stock = Client(base, ledger)
    stock.stock_token(f"admin{DEMO}")
    lote = stock.call("GET", "/api/v1/remanejamento/lotes", "lotes").json()[0]  # this week's
    recs = stock.call("GET", f"/api/v1/remanejamento/lotes/{lote['id']}/recomendacoes", "recs").json()
    pending = [r["id"] for r in recs if r["status"] == "pendente" and not r["vetado"]]
    lojas = [
        loja["codigo"] for loja in stock.call("GET", "/api/v1/lojas", "lojas").json() if not loja["isCd"]
    ]
    produto = stock.call("GET", "/api/v1/produtos", "produtos").json()[0]
    return {
        "organization": organization,
        "slug": slug,
        "projects": [p["id"] for p in projects],
        "lote": lote["id"],
        "pending": pending,
        "lojas": lojas,
        "produto": produto,
    }


def _tracker_worker(client: Client, shared: dict, rng: random.Random, deadline: float, audit: bool) -> None:
    ledger, slug = client.ledger, shared["slug"]
    project = rng.choice(shared["projects"])
    issues = f"/tracker/api/v1/workspaces/{slug}/projects/{project}/issues"
    mine: list[dict] = []
    for turn in itertools.count():
        # Every kind of work at least once, however busy the machine is.
        if time.monotonic() > deadline and turn >= 5:
            return
        kind = turn % 5
        if kind == 0 or not mine:
            title = f"Soak {rng.randrange(10**9)}"
            created = client.call("POST", issues, "create issue", json={"title": title})
            if created.status_code == 201:
                issue = created.json()
                mine.append(issue)
                with ledger.lock:
                    ledger.titles[issue["key"]] = title
        elif kind == 1:
            issue = rng.choice(mine)
            title = f"Retitled {rng.randrange(10**9)}"
            changed = client.call("PATCH", f"{issues}/{issue['key']}", "retitle", json={"title": title})
            if changed.status_code == 200:
                with ledger.lock:
                    ledger.titles[issue["key"]] = title
        elif kind == 2:
            issue = rng.choice(mine)
            body = f"@planejador olhe isto {rng.randrange(10**9)}"
            said = client.call("POST", f"{issues}/{issue['key']}/comments", "comment", json={"body": body})
            if said.status_code == 201:
                with ledger.lock:
                    ledger.comments.add(said.json()["id"])
        elif kind == 3 and len(mine) > 1:
            moved, above = rng.sample(mine, 2)
            client.call("PATCH", f"{issues}/{moved['key']}", "rank move", json={"after_id": above["id"]})
        elif audit:
            path = f"/tracker/api/v1/organizations/{shared['organization']}/audit-log?format=csv"
            exported = client.call("GET", path, "audit export")
            if exported.status_code == 200:
                with ledger.lock:
                    ledger.exports += 1


def _stock_worker(client: Client, shared: dict, rids: list[str], deadline: float, bulk: bool) -> None:
    ledger = client.ledger
    actions = itertools.cycle(["aprovar", "recusar"])
    turns = itertools.count()
    while rids and (time.monotonic() < deadline or next(turns) < 2):
        if bulk:
            chosen, rids[:] = rids[:3], rids[3:]
            decided = client.call(
                "POST",
                f"/lotes/{shared['lote']}/acoes",
                "bulk decision",
                data={"acao": "aprovar", "rid": chosen},
                headers={"HX-Request": "true"},
            )
            if decided.status_code == 200:
                with ledger.lock:
                    ledger.decided.update(dict.fromkeys(chosen, "aprovada"))
            continue
        rid = rids.pop()
        action = next(actions)
        path = f"/api/v1/remanejamento/recomendacoes/{rid}/{action}"
        body = {"motivo": "estoque_errado"} if action == "recusar" else None
        decided = client.call("POST", path, "decision", json=body)
        if decided.status_code == 200:
            with ledger.lock:
                ledger.decided[rid] = decided.json()["status"]


def _import_worker(client: Client, shared: dict, rng: random.Random, deadline: float) -> None:
    ledger, produto = client.ledger, shared["produto"]
    size = produto["tamanhos"][0]
    for turn in itertools.count():
        if time.monotonic() > deadline and turn >= 1:
            return
        loja, qtd = rng.choice(shared["lojas"]), rng.randrange(1, 9)
        csv = f"data,loja,sku,tamanho,qtd\n2026-11-30,{loja},{produto['sku']},{size},{qtd}\n"
        uploaded = client.call(
            "POST",
            "/administracao/importacoes",
            "import",
            data={"kind": "sales"},
            files={"arquivo": ("vendas.csv", io.BytesIO(csv.encode()), "text/csv")},
            headers={"HX-Request": "true"},
        )
        if uploaded.status_code == 200 and "importado:" in uploaded.text:
            with ledger.lock:
                ledger.sales[(loja, produto["sku"], size)] = qtd
        # The page's own audited export (a GET that writes its audit row).
        client.call("GET", f"/tracker/o/{shared['organization']}/audit-log.csv", "page audit export")


def _uuid(value) -> str:
    """A uuid as the API writes it, whichever way the database stores it."""
    return str(uuid.UUID(str(value)))


def test_a_team_at_work_gets_no_errors_and_loses_no_write(team_server):
    base, hook_url, database_url = team_server
    ledger = Ledger()
    shared = _setup(base, hook_url, ledger)
    rng = random.Random(7)
    pending = shared["pending"]
    rng.shuffle(pending)
    quarter = len(pending) // 4
    shares = [pending[i * quarter : (i + 1) * quarter] for i in range(4)]

    clients = []
    for _ in range(CLIENTS):
        clients.append(Client(base, ledger))
    clients[0].tracker_token(f"planejador{DEMO}")
    clients[1].tracker_token(f"gerente{DEMO}")
    clients[2].tracker_token(f"admin{DEMO}")
    clients[3].tracker_token(f"superadmin{DEMO}")
    clients[4].stock_token(f"planejador{DEMO}")
    clients[5].stock_token(f"admin{DEMO}")
    clients[6].page_login(f"planejador{DEMO}")
    clients[7].page_login(f"admin{DEMO}")

    deadline = time.monotonic() + SECONDS
    work = [
        lambda: _tracker_worker(clients[0], shared, random.Random(1), deadline, audit=False),
        lambda: _tracker_worker(clients[1], shared, random.Random(2), deadline, audit=False),
        lambda: _tracker_worker(clients[2], shared, random.Random(3), deadline, audit=True),
        lambda: _tracker_worker(clients[3], shared, random.Random(4), deadline, audit=True),
        lambda: _stock_worker(clients[4], shared, shares[0], deadline, bulk=False),
        lambda: _stock_worker(clients[5], shared, shares[1], deadline, bulk=False),
        lambda: _stock_worker(clients[6], shared, shares[2], deadline, bulk=True),
        lambda: _import_worker(clients[7], shared, random.Random(8), deadline),
    ]
    errors: list[BaseException] = []

    def run(job):
        try:
            job()
        except BaseException as exc:  # reported below, with the statuses seen
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(job,)) for job in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=SECONDS + 120)
    assert not errors, errors
    assert not ledger.failures, (dict(ledger.statuses), ledger.failures[:5])
    summary = json.dumps({str(k): v for k, v in sorted(ledger.statuses.items())})
    assert ledger.titles and ledger.comments and ledger.decided and ledger.sales and ledger.exports, summary

    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            titles = dict(
                conn.execute(
                    text(
                        "SELECT p.key || '-' || i.number, i.title FROM issues i "
                        "JOIN projects p ON p.id = i.project_id"
                    )
                ).all()
            )
            comments = {_uuid(c) for (c,) in conn.execute(text("SELECT id FROM comments")).all()}
            statuses = {
                _uuid(r): s for r, s in conn.execute(text("SELECT id, status FROM recomendacoes")).all()
            }
            sales = {
                (loja, sku, size): qtd
                for loja, sku, size, qtd in conn.execute(
                    text(
                        "SELECT l.codigo, p.sku, v.tamanho, v.qtd FROM vendas v JOIN lojas l ON l.id = v.loja_id "
                        "JOIN produtos p ON p.id = v.produto_id WHERE v.data = '2026-11-30'"
                    )
                ).all()
            }
    finally:
        engine.dispose()
    assert {key: titles.get(key) for key in ledger.titles} == ledger.titles
    assert ledger.comments <= comments
    assert {rid: statuses.get(rid) for rid in ledger.decided} == ledger.decided
    assert {key: sales.get(key) for key in ledger.sales} == ledger.sales


def test_the_sign_in_budget_holds_across_worker_processes_without_redis(app, server_env, tmp_path):
    with app.app_context():
        email = make_user(papel="planejador").email
        db.session.commit()
    budget = int(app.config["LOGIN_RATE_LIMIT"].split()[0])
    port = free_port()
    server = start_gunicorn(server_env, port, workers=WORKERS, log=tmp_path / "gunicorn.log")
    try:
        answers = [
            requests.post(
                f"http://127.0.0.1:{port}/api/v1/auth/login",
                json={"email": email, "senha": "not-the-password"},
                timeout=30,
            ).status_code
            for _ in range(budget + 5)
        ]
    finally:
        stop(server)
    # Each worker counting on its own would have allowed up to WORKERS x budget guesses.
    assert answers == [401] * budget + [429] * 5
