"""Real processes sharing the database and Redis: RQ workers computing a batch's partitions in
parallel, a worker killed with SIGKILL in the middle of writing a batch, and two app processes
answering one user alternately.

These tests commit for real (``committing``) and need the Redis at ``TEST_REDIS_URL``
(default ``redis://127.0.0.1:6379/5``, a database of its own, emptied afterwards);
without it they are skipped.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
import requests
from sqlalchemy import create_engine, func, select, text

from extensions import db
from models.base import utcnow
from models.jobs import Job
from models.stock_batches import Lote, Recomendacao
from tests.factories import PASSWORD, make_user
from tests.servers import ROOT, free_port, start_gunicorn, stop

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/5")
pytestmark = pytest.mark.committing


def _redis():
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1)
    try:
        client.ping()
    except redis.RedisError:
        pytest.skip(f"no Redis at {REDIS_URL}")
    return client


@pytest.fixture
def queue_app(app, monkeypatch):
    """The suite's app, dispatching to RQ on a queue of this test's own."""
    client = _redis()
    name = f"giro-test-{uuid.uuid4().hex[:8]}"
    monkeypatch.setitem(app.config, "JOBS_EAGER", False)
    monkeypatch.setitem(app.config, "REDIS_URL", REDIS_URL)
    monkeypatch.setitem(app.config, "JOBS_QUEUE", name)
    yield app
    # Only this test's queue and registries: another run may share the Redis database.
    for key in client.scan_iter(match=f"*{name}*"):
        client.delete(key)


def _env(app, **extra) -> dict:
    env = {
        **os.environ,
        "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
        "REDIS_URL": REDIS_URL,
        "JOBS_QUEUE": app.config["JOBS_QUEUE"],
        "JOBS_SPOOL_DIR": app.config["JOBS_SPOOL_DIR"],
        "ARGON2_TIME_COST": "1",
        "ARGON2_MEMORY_COST": "1024",
        "LOG_FORMAT": "json",
        "LOG_REQUESTS": "false",
    }
    env.update(extra)
    return env


def _start_worker(app, name: str) -> subprocess.Popen:
    return subprocess.Popen(
        [str(ROOT / ".venv/bin/flask"), "--app", "app", "worker", "--name", name],
        cwd=ROOT,
        env=_env(app),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the worker and the job process it forks
    )


def _job(app, job_id) -> Job:
    with app.app_context():
        job = db.session.get(Job, job_id)
        db.session.expunge_all()
        return job


def _wait(app, job_id, until, timeout: float = 120.0) -> list[Job]:
    seen: list[Job] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = _job(app, job_id)
        seen.append(job)
        if until(job):
            return seen
        time.sleep(0.02)
    raise AssertionError(f"job {job_id} stuck: {seen[-1].state} {seen[-1].progress}% {seen[-1].message}")


def _demo(app, stores: int, products: int) -> None:
    from services.stock import demo

    with app.app_context():
        demo.load(n_stores=stores, n_products=products, seed=11)
        db.session.commit()


def _request_generation(app, **kwargs) -> uuid.UUID:
    from services.clock import today
    from services.stock import partitions

    with app.app_context():
        job, created = partitions.request_generation(today(), actor=None, **kwargs)
        assert created
        db.session.commit()  # dispatched to RQ here
        return job.id


def _count(app, model) -> int:
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(model))


def test_workers_compute_a_batch_partitions_in_parallel(queue_app):
    app = queue_app
    _demo(app, stores=12, products=30)
    workers = [_start_worker(app, f"w{i}-{uuid.uuid4().hex[:6]}") for i in range(2)]
    try:
        job_id = _request_generation(app, partitions=4)
        seen = _wait(app, job_id, lambda job: job.finished)
    finally:
        for worker in workers:
            stop(worker)
    job = seen[-1]
    assert job.state == "done", job.error
    assert job.result["particoes"] == 4 and job.result["novas"] == _count(app, Recomendacao) > 0
    assert _count(app, Lote) == 1
    percents = [j.progress for j in seen]
    assert percents == sorted(percents) and len(set(percents)) > 0
    assert any("partição" in j.message for j in seen) or len(seen) < 5  # observed while running
    assert not (Path(app.config["JOBS_SPOOL_DIR"]) / str(job_id)).exists()


def test_a_worker_killed_while_writing_leaves_no_partial_batch(queue_app, monkeypatch):
    app = queue_app
    _demo(app, stores=15, products=40)
    engine = create_engine(app.config["SQLALCHEMY_DATABASE_URI"])
    worker = _start_worker(app, f"victim-{uuid.uuid4().hex[:6]}")
    blocker = engine.connect()
    try:
        job_id = _request_generation(app, partitions=3)
        _wait(app, job_id, lambda job: job.message == "gravando o lote", timeout=180)
        if engine.dialect.name == "postgresql":
            # Hold the job's row: the worker writes the whole batch, then waits for this lock
            # to record "done" in the same transaction. Kill it right there.
            blocker.execute(text("SELECT id FROM jobs WHERE id = :id FOR UPDATE"), {"id": job_id})
            # On a loaded machine the worker may have committed before the lock was taken: then
            # the batch is whole, as when SQLite's commit wins the race below.
            _wait_for_lock_wait(blocker, done=lambda: _job(app, job_id).state == "done")
        # SQLite has one writer and its commit waits for nobody: kill as soon as the write starts.
        _kill_9(worker)
    finally:
        blocker.rollback()
        blocker.close()
        stop(worker)
    killed = _job(app, job_id)
    if killed.state == "running":
        # Killed mid-write: nothing of the batch, the job as its worker left it.
        assert _count(app, Lote) == 0 and _count(app, Recomendacao) == 0
        assert killed.state == "running"
    else:
        # The commit won the race against the kill: then the batch is whole.
        assert killed.state == "done" and _count(app, Recomendacao) == killed.result["novas"]

    # Its worker is gone: once the job is stale, asking again takes over, and a batch is written once.
    monkeypatch.setitem(app.config, "JOBS_STALE_AFTER", 0)
    replacement = _start_worker(app, f"heir-{uuid.uuid4().hex[:6]}")
    try:
        retry_id = _request_generation(app, partitions=3)
        job = _wait(app, retry_id, lambda job: job.finished, timeout=180)[-1]
    finally:
        stop(replacement)
    engine.dispose()
    assert job.state == "done", job.error
    assert _count(app, Lote) == 1 and _count(app, Recomendacao) == job.result["novas"] > 0
    # The killed job was either taken over (failed) or, if RQ noticed its lost worker first,
    # retried to its end: both leave the one batch, whole.
    killed = _job(app, job_id)
    assert (killed.state, killed.state == "failed" and "parou" in killed.error) in {
        ("failed", True),
        ("done", False),
    }


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.append(int(stat.parent.name))
    return found


def _kill_9(worker: subprocess.Popen) -> None:
    """SIGKILL the worker and the process it forked for the job (RQ puts that one in a process
    group of its own), as when their host dies or systemd kills the unit's control group."""
    horses = _children(worker.pid)
    assert horses, "the worker runs no job"
    os.killpg(worker.pid, signal.SIGKILL)
    for pid in horses:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    worker.wait(timeout=10)
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in horses) and time.monotonic() < deadline:
        time.sleep(0.05)


def _wait_for_lock_wait(conn, done, timeout: float = 60.0) -> None:
    """Until another backend waits for a row lock (the worker, on the job's row), or the job is
    ``done`` already (it committed before the lock was taken)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        waiting = conn.execute(
            text(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            )
        ).scalar()
        if waiting or done():
            return
        time.sleep(0.05)
    raise AssertionError("the worker never reached the job's row")


def test_without_redis_jobs_fall_back_to_a_thread(app, monkeypatch):
    monkeypatch.setitem(app.config, "JOBS_EAGER", False)
    monkeypatch.setitem(app.config, "REDIS_URL", "redis://127.0.0.1:1/0")  # down
    _demo(app, stores=4, products=5)
    job_id = _request_generation(app)
    job = _wait(app, job_id, lambda job: job.finished)[-1]
    assert job.state == "done" and _count(app, Lote) == 1


# --------------------------------------------------------------------------- two app processes


def _start_server(app, port: int):
    env = _env(
        app,
        LOGIN_RATE_LIMIT="3 per 15 minutes",
        # Counters of this test only: an earlier run's failed sign-ins on the same Redis must not count.
        RATELIMIT_KEY_PREFIX=app.config["JOBS_QUEUE"],
        PUBLIC_URL=f"http://127.0.0.1:{port}",
        PROMETHEUS_MULTIPROC_DIR=f"{app.config['JOBS_SPOOL_DIR']}/prometheus-{port}",
    )
    return start_gunicorn(env, port)


class Alternating:
    """One browser (one cookie jar) whose requests go to each process in turn."""

    def __init__(self, bases: list[str]):
        self.bases = bases
        self.session = requests.Session()
        self.turn = 0
        self.answered_by: list[str] = []

    def request(self, method: str, path: str, **kwargs) -> requests.Response:
        base = self.bases[self.turn % len(self.bases)]
        self.turn += 1
        self.answered_by.append(base)
        kwargs.setdefault("allow_redirects", False)
        kwargs.setdefault("timeout", 30)
        return self.session.request(method, base + path, **kwargs)


def test_two_app_processes_behave_as_one(queue_app):
    app = queue_app
    with app.app_context():
        planner = make_user(papel="planejador")
        email = planner.email
        db.session.commit()
    _demo(app, stores=4, products=5)
    ports = [free_port(), free_port()]
    servers = [_start_server(app, port) for port in ports]
    worker = _start_worker(app, f"w-{uuid.uuid4().hex[:6]}")
    try:
        browser = Alternating([f"http://127.0.0.1:{port}" for port in ports])

        # Sessions: signed in by one process, recognised by the other.
        signed = browser.request("POST", "/login", data={"email": email, "senha": PASSWORD})
        assert signed.status_code == 302
        page = browser.request("GET", "/remanejamento/tarefas")
        assert page.status_code == 200 and "Gerar lote agora" in page.text

        # CSRF: the token bound to the session by one process is checked by the other.
        csrf = browser.session.cookies.get("csrf_access_token")
        missing = browser.request("POST", "/remanejamento/tarefas/gerar-lote", data={})
        assert missing.status_code == 400
        started = browser.request(
            "POST",
            "/remanejamento/tarefas/gerar-lote",
            data={"csrf_token": csrf},
            headers={"X-CSRF-TOKEN": csrf},
        )
        assert started.status_code == 303
        job_path = started.headers["Location"].replace("http://localhost", "")
        job_path = re.sub(r"^https?://[^/]+", "", job_path)

        # Job progress: polled from both processes, run by the worker.
        states = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            fragment = browser.request("GET", job_path, headers={"HX-Request": "true"})
            assert fragment.status_code == 200
            states.append(fragment.text)
            if "hx-trigger" not in fragment.text:
                break
            time.sleep(0.1)
        assert "Concluída" in states[-1] and "Abrir o lote" in states[-1]

        # Logout through one process ends the session on the other (deny-list in Redis).
        assert browser.request(
            "POST", "/logout", data={"csrf_token": csrf}, headers={"X-CSRF-TOKEN": csrf}
        ).status_code in (302, 303)
        assert browser.request("GET", "/remanejamento/tarefas").status_code == 302

        # Sign-in throttling: one budget across processes (3 failures, then 429 anywhere).
        api = Alternating(browser.bases)
        wrong = {"email": email, "senha": "not-the-password"}
        codes = [api.request("POST", "/api/v1/auth/login", json=wrong).status_code for _ in range(5)]
        assert codes == [401, 401, 401, 429, 429]

        # Plan limits: the free plan's 3 projects, counted the same whoever answers.
        tracker = Alternating(browser.bases)
        registered = tracker.request(
            "POST",
            "/tracker/api/v1/auth/register",
            json={"name": "Dona", "email": f"dona-{uuid.uuid4().hex[:6]}@example.com", "password": PASSWORD},
        )
        assert registered.status_code == 201, registered.text
        headers = {"Authorization": f"Bearer {registered.json()['access_token']}"}
        slug = tracker.request("GET", "/tracker/api/v1/workspaces", headers=headers).json()["workspaces"][0][
            "slug"
        ]
        created = [
            tracker.request(
                "POST",
                f"/tracker/api/v1/workspaces/{slug}/projects",
                json={"name": f"Projeto {i}", "key": f"PR{i}"},
                headers=headers,
            )
            for i in range(5)
        ]
        assert [r.status_code for r in created] == [201, 201, 201, 402, 402]
        assert created[3].json()["error"] == "PLAN_LIMIT_REACHED"
        assert len(set(browser.answered_by)) == 2 and len(set(tracker.answered_by)) == 2
    finally:
        for process in [*servers, worker]:
            stop(process)


@pytest.mark.any_database(on="sqlite")  # prometheus's files
def test_metrics_of_the_two_processes_add_up_in_multiprocess_mode(queue_app, tmp_path):
    """With PROMETHEUS_MULTIPROC_DIR (deploy/gunicorn.conf.py) gunicorn's workers share their counts."""
    app = queue_app
    port = free_port()
    multiproc = tmp_path / "prom"
    multiproc.mkdir()
    process = start_gunicorn(_env(app, PROMETHEUS_MULTIPROC_DIR=str(multiproc)), port, workers=2)
    try:
        base = f"http://127.0.0.1:{port}"
        # Readiness checks are counted (a liveness probe answered 200 is not).
        statuses = [requests.get(f"{base}/health/ready", timeout=5).status_code for _ in range(20)]
        scraped = requests.get(f"{base}/metrics", timeout=5).text
    finally:
        stop(process)
    counted = sum(
        float(line.rsplit(" ", 1)[1])
        for line in scraped.splitlines()
        if line.startswith("giro_http_requests_total{") and 'endpoint="/health/ready"' in line
    )
    assert counted == len(statuses) == 20  # every request, whichever worker answered it


def test_scheduler_tick_queues_a_generation_only_when_due(queue_app):
    """What ``flask scheduler`` runs every hour."""
    from services.stock.partitions import cadence_tick

    app = queue_app
    _demo(app, stores=3, products=3)
    with app.app_context():
        first = cadence_tick()
    assert first is not None
    worker = _start_worker(app, f"w-{uuid.uuid4().hex[:6]}")
    try:
        job = _wait(app, uuid.UUID(first), lambda job: job.finished)[-1]
    finally:
        stop(worker)
    assert job.state == "done" and job.result["gerado"] is True
    with app.app_context():
        assert cadence_tick() is None  # the week's batch exists: nothing due
    assert utcnow() - job.finished_at < timedelta(minutes=5)
