"""Background jobs: long work recorded in the ``jobs`` table and run by a queue engine.

A service asks for work with ``enqueue(kind, params, actor=...)``: it checks the
actor may start it, adds a ``Job`` row (flush only, like every service) and
hands the job's id to the engine once the caller's transaction commits, so a
worker never looks for a row that is not there yet, and a rolled back request
starts nothing.

Engines (``services.job_queue``): RQ on Redis when ``REDIS_URL`` is set
(``flask worker`` runs the workers), otherwise a thread of the process that
asked. Either way the work runs ``run_job(job_id)``, which records the state
(queued, running, done, failed), the progress (percent and a message), the
start and end, and the error, in the row, where the APIs and the pages read it.

Retries are safe: a job runs again only while its row is not finished, every
kind is written so that running it twice does the work once (batch generation
refreshes the week's batch keeping every decision, imports replace what the
file names), and ``lock_key`` keeps a second request for the same work (the
batch of one week) from queueing a second job while one is queued or running.

Each kind registers itself here (``@job_kind``) from the module whose work it
runs, and that module asks for it: this module imports none of them.
``services.job_kinds`` imports them all, for what reads or runs jobs of any kind.
"""

from __future__ import annotations

import contextvars
import logging
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from flask import current_app
from sqlalchemy import delete, event, select, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session

from extensions import db
from models.auth import User
from models.base import utcnow
from models.jobs import Job
from services import job_queue
from services.errors import DomainError
from services.transactions import is_writing, writer

log = logging.getLogger("giro.jobs")
# The job the current thread or process is running: log lines carry it (observability.py).
current_job_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("giro_job_id", default=None)

# A job function returns its result (a small JSON object), or CONTINUES when it
# handed the rest of the work to other queued steps, the last of which finishes the job.
CONTINUES = object()


class JobContext:
    """What a running job gets: its id and row values, and a way to report progress."""

    def __init__(self, job: Job, listener: Callable[[int, str], None] | None = None):
        self.listener = listener
        self.job_id = job.id
        self.kind = job.kind
        self.params = dict(job.params or {})
        self.requested_by_id = job.requested_by_id
        self.attempt = job.attempts
        self._last: tuple[int, str] | None = None

    def progress(self, fraction: float, message: str) -> None:
        """Record ``fraction`` (0-1) of the work as done, with a short pt-BR message."""
        percent = max(0, min(99, int(fraction * 100)))  # 100 only once the result is committed
        if self._last == (percent, message):
            return
        self._last = (percent, message)
        write_progress(self.job_id, percent, message)
        if self.listener is not None:
            self.listener(percent, message)

    def requester(self) -> User | None:
        return db.session.get(User, self.requested_by_id) if self.requested_by_id else None


@dataclass(frozen=True)
class JobKind:
    name: str
    run: Callable[[JobContext], Any]
    # Who may read a job of this kind besides whoever asked for it and platform superadmins.
    service: str  # "stock" or "tracker"
    stock_readers: tuple[str, ...] = ()  # stock roles that read every job of this kind
    sensitive: bool = False  # its params hold secrets (a link with a token): cleared once it ends
    after_finish: Callable[[Job], None] | None = None  # e.g. remove an uploaded file


# Every kind registered so far, by name (``services.job_kinds`` registers them all).
KINDS: dict[str, JobKind] = {}


def job_kind(
    name: str,
    *,
    service: str,
    stock_readers: tuple[str, ...] = (),
    sensitive: bool = False,
    after_finish: Callable[[Job], None] | None = None,
):
    """Register a job function under ``name``."""

    def register(fn: Callable[[JobContext], Any]) -> Callable[[JobContext], Any]:
        KINDS[name] = JobKind(name, fn, service, stock_readers, sensitive, after_finish)
        return fn

    return register


# ---------------------------------------------------------------------------
# Asking for work


# Inserts of a keyed job tried when each finds the key taken, then let go, by another request.
_KEY_ATTEMPTS = 3


def enqueue(
    kind: str,
    params: dict[str, Any] | None = None,
    *,
    actor: User | None,
    lock_key: str | None = None,
    dispatch: bool = True,
) -> tuple[Job, bool]:
    """Add a job and dispatch it after the caller commits; flushes.

    Returns ``(job, created)``: with ``lock_key``, a queued or running job holding the
    same key is returned instead (``created`` False), unless it is stale (its worker
    was lost), in which case it is marked failed and a new job takes the key.
    Permission checks belong to the caller, the service that knows the work.
    ``dispatch=False`` leaves the running to the caller (the CLI's foreground runs).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown job kind {kind!r}")
    if lock_key is not None:
        holder = db.session.scalar(select(Job).where(Job.lock_key == lock_key).with_for_update())
        if holder is not None and not _is_stale(holder):
            return holder, False
        if holder is not None:
            _fail(holder, "O processo que executava a tarefa parou; uma nova tentativa foi iniciada")
            db.session.flush()
    _prune()
    for attempt in range(_KEY_ATTEMPTS):
        job = Job(
            kind=kind,
            state="queued",
            progress=0,
            message="na fila",
            params=params or {},
            lock_key=lock_key,
            requested_by_id=actor.id if actor is not None else None,
            attempts=0,
        )
        try:
            with db.session.begin_nested():
                db.session.add(job)
                db.session.flush()
            break
        except IntegrityError:
            if lock_key is None or attempt == _KEY_ATTEMPTS - 1:
                raise
            # Another request took the key between our look and our insert: its job answers,
            # unless it let the key go meanwhile (a run frees its key as it starts, so that a
            # write after that queues another run): then the key is ours to take again.
            holder = db.session.scalar(select(Job).where(Job.lock_key == lock_key))
            if holder is not None:
                return holder, False
    if dispatch:
        _refuse_if_queue_down()
        # Remembered with the SAVEPOINT it was queued in (if any): rolling that back forgets it.
        scope = db.session().get_nested_transaction()
        db.session.info.setdefault(_PENDING, []).append((job.id, kind, scope))
    return job, True


def _prune() -> None:
    """Finished jobs are kept ``JOBS_KEEP_DAYS`` (their record, for the pages and audits)."""
    cutoff = utcnow() - timedelta(days=current_app.config["JOBS_KEEP_DAYS"])
    db.session.execute(
        delete(Job).where(Job.finished_at < cutoff).execution_options(synchronize_session=False)
    )


def _refuse_if_queue_down() -> None:
    """With Redis configured, down, and no fallback to threads: 503 now rather than a lost job."""
    app = current_app
    if job_queue.uses_redis() and not app.config["JOBS_REDIS_FALLBACK"] and not job_queue.redis_ok():
        raise DomainError(
            "A fila de tarefas está indisponível no momento; tente de novo em alguns minutos",
            "SERVICE_UNAVAILABLE",
            503,
            reason="job_queue_unavailable",
        )


def enqueue_call(target: str, *args: Any, actor: User | None = None, **kwargs: Any) -> Job:
    """Run any service function ``"package.module:function"`` as a job (kind ``call``).

    For work that needs no progress of its own (a webhook delivery, a
    notification): the arguments must be JSON values; the function runs in an
    app context of the worker and its transaction commits when it returns.
    """
    module, _, name = target.partition(":")
    if not module or not name:
        raise ValueError("target must read 'package.module:function'")
    job, _ = enqueue("call", {"target": target, "args": list(args), "kwargs": kwargs}, actor=actor)
    return job


_PENDING = "giro_pending_jobs"


@event.listens_for(Session, "after_commit")
def _dispatch_after_commit(session: Session) -> None:
    # Releasing a SAVEPOINT fires after_commit too: its jobs wait for the real commit, or a
    # worker (or the eager test runner) would look for a job row nobody can see yet.
    if session.in_nested_transaction():
        return
    pending = session.info.pop(_PENDING, None)
    if not pending:
        return
    for job_id, kind, _scope in pending:
        job_queue.submit(job_id, kind)


@event.listens_for(Session, "after_soft_rollback")
def _forget_after_rollback(session: Session, previous_transaction) -> None:
    pending = session.info.get(_PENDING)
    if not pending:
        return
    if previous_transaction.parent is None:
        session.info.pop(_PENDING, None)
        return
    if not previous_transaction.nested:
        return
    # A SAVEPOINT rolled back: forget the jobs queued inside it (or inside one nested in it).

    def inside(scope) -> bool:
        while scope is not None:
            if scope is previous_transaction:
                return True
            scope = scope.parent
        return False

    session.info[_PENDING] = [entry for entry in pending if not inside(entry[2])]


# ---------------------------------------------------------------------------
# Reading (who may read a job: ``services.job_access``)


def job_out(job: Job) -> dict[str, Any]:
    """The wire shape both APIs answer (snake_case in both: the pinned operations contract)."""
    return {
        "id": job.id,
        "kind": job.kind,
        "state": job.state,
        "progress": job.progress,
        "message": job.message,
        "result": job.result,
        "error": job.error,
        "created_at": job.created_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
    }


# ---------------------------------------------------------------------------
# Running (inside a worker process or a thread, in an app context)


def stale_after() -> timedelta:
    return timedelta(seconds=current_app.config["JOBS_STALE_AFTER"])


def _is_stale(job: Job) -> bool:
    seen = job.heartbeat_at or job.started_at or job.created_at
    return job.state in ("queued", "running") and utcnow() - seen > stale_after()


def run_job(
    job_id: uuid.UUID | str, *, reraise: bool = False, listener: Callable[[int, str], None] | None = None
) -> None:
    """The entry point of every engine; the job's id is in the context (log lines, SQLite writes)."""
    token = current_job_id.set(str(job_id))
    try:
        with writer():
            _run_job(uuid.UUID(str(job_id)), reraise=reraise, listener=listener)
    finally:
        current_job_id.reset(token)


def _run_job(job_id: uuid.UUID, *, reraise: bool, listener: Callable[[int, str], None] | None) -> None:
    """Run a job to its end and record it; the entry point of every engine.

    Never raises for a failure of the work itself (it is recorded in the row): the
    engine retries only jobs whose process died, which find their row unfinished.
    The CLI, running a job in the foreground, passes ``reraise`` and a progress ``listener``.
    """
    job = db.session.get(Job, job_id, with_for_update=True)
    if job is None or job.finished:
        db.session.rollback()
        return  # finished by an earlier attempt: a retry does the work once
    now = utcnow()
    job.state = "running"
    job.attempts += 1
    job.started_at = job.started_at or now
    job.heartbeat_at = now
    job.message = "iniciado" if job.attempts == 1 else f"nova tentativa ({job.attempts})"
    # Read before the commit expires the row: reloading it afterwards would open a transaction
    # (on SQLite a job's takes the write lock) that the work's first progress report waits on.
    context = JobContext(job, listener)
    db.session.commit()
    started = time.perf_counter()
    try:
        result = KINDS[context.kind].run(context)
    except Exception as exc:
        db.session.rollback()
        if not isinstance(exc, DomainError):
            log.exception("job %s (%s) failed", job_id, context.kind)
        finish_failed(job_id, _error_text(exc))
        _observe(context.kind, "failed", time.perf_counter() - started)
        if reraise:
            raise
        return
    if result is CONTINUES:
        db.session.commit()
        return
    finish_done(job_id, result)
    _observe(context.kind, "done", time.perf_counter() - started)


def run_step(job_id: uuid.UUID | str, target: str, *args: Any) -> Any:
    """One queued step of a job (a partition, the merge), with the job's id in the context."""
    token = current_job_id.set(str(job_id))
    try:
        with writer():
            return _run_step(uuid.UUID(str(job_id)), target, *args)
    finally:
        current_job_id.reset(token)


def _run_step(job_id: uuid.UUID, target: str, *args: Any) -> Any:
    """Run one queued step of a job that CONTINUES (``"module:function"``, called with its context).

    Returning anything but CONTINUES finishes the job with that result, in the step's
    own transaction. A step of a finished job does nothing. A step that fails raises,
    so that the engine retries it; once it has no retry left the job is recorded failed.
    """
    job = db.session.get(Job, job_id)
    if job is None or job.finished:
        db.session.rollback()
        return None
    context = JobContext(job)
    db.session.commit()
    try:
        result = job_queue.resolve(target)(context, *args)
    except Exception as exc:
        db.session.rollback()
        log.exception("job %s (%s): step %s%r failed", job_id, context.kind, target, args)
        if _last_attempt():
            finish_failed(job_id, _error_text(exc))
            _observe(context.kind, "failed", 0.0)
        raise
    if result is not CONTINUES:
        finish_done(job_id, result)
        seconds = (utcnow() - job.started_at).total_seconds() if job.started_at else 0.0
        _observe(context.kind, "done", seconds)
    return result


def _last_attempt() -> bool:
    from rq import get_current_job

    current = get_current_job()
    return current is None or not current.retries_left


def spool_root() -> Path:
    """``JOBS_SPOOL_DIR``: files jobs pass between processes; every worker host must see it."""
    return Path(current_app.config["JOBS_SPOOL_DIR"])


def spool_dir(job_id: uuid.UUID) -> Path:
    """Files one job passes between its steps."""
    return spool_root() / str(job_id)


def _on_finish(job: Job) -> None:
    spec = KINDS.get(job.kind)
    if spec is None:
        return
    if spec.after_finish is not None:
        spec.after_finish(job)
    if spec.sensitive:
        job.params = {}  # e.g. a message carrying a password-reset link


def finish_done(job_id: uuid.UUID, result: Any) -> None:
    """Record success in the work's own transaction and commit both at once."""
    job = db.session.get(Job, job_id, with_for_update=True)
    if job is None:
        return
    job.state = "done"
    job.progress = 100
    job.message = "concluído"
    job.result = result if isinstance(result, dict) else ({"value": result} if result is not None else {})
    job.error = None
    job.finished_at = utcnow()
    job.heartbeat_at = job.finished_at
    job.lock_key = None
    _on_finish(job)
    db.session.commit()
    shutil.rmtree(spool_dir(job_id), ignore_errors=True)


def finish_failed(job_id: uuid.UUID, error: str) -> None:
    job = db.session.get(Job, job_id, with_for_update=True)
    if job is None:
        return
    _fail(job, error)
    db.session.commit()
    shutil.rmtree(spool_dir(job_id), ignore_errors=True)


def _fail(job: Job, error: str) -> None:
    job.state = "failed"
    job.message = "falhou"
    job.error = error[:2000]
    job.finished_at = utcnow()
    job.lock_key = None
    _on_finish(job)


def _error_text(exc: Exception) -> str:
    if isinstance(exc, DomainError):
        return exc.message
    # Details of an unexpected failure stay in the log, not in a body others read.
    return f"Erro interno ({type(exc).__name__}); detalhes no log do worker"


# How long a progress report waits for SQLite's write lock before it is skipped.
PROGRESS_BUSY_TIMEOUT_MS = 200


def write_progress(job_id: uuid.UUID, percent: int, message: str, *, add: int = 0) -> None:
    """Write progress on a connection of its own, committed at once, so readers see it while
    the work's own transaction is still open. ``add`` raises the percent by that much instead
    (parallel partitions each add their share). Progress is advisory: if the database is
    busy (SQLite holds one writer at a time) the report is skipped after at most
    ``PROGRESS_BUSY_TIMEOUT_MS``, and at once when the busy one is this work's own transaction."""
    values: dict[str, Any] = {"message": message[:200], "heartbeat_at": utcnow()}
    values["progress"] = Job.progress + add if add else percent
    statement = update(Job).where(Job.id == job_id, Job.state == "running").values(**values)
    if current_app.config["JOBS_EAGER"]:
        # Tests run jobs inline in their own transaction: a second connection would not see the row.
        db.session.execute(statement)
        return
    sqlite = db.engine.dialect.name == "sqlite"
    if sqlite and is_writing() and db.session().in_transaction():
        # This work's own transaction began IMMEDIATE: it holds SQLite's one write lock.
        log.debug("progress of job %s skipped: its own transaction holds the write lock", job_id)
        return
    try:
        with db.engine.connect() as conn:
            # Set on the driver's connection, before the transaction begins: a job's BEGIN is
            # IMMEDIATE, so it is the BEGIN that waits for the write lock, with the busy
            # timeout in force at that moment (the connection's own is 30 s).
            raw = conn.connection.driver_connection if sqlite else None
            if raw is not None:
                waits = int(raw.execute("PRAGMA busy_timeout").fetchone()[0])
                raw.execute(f"PRAGMA busy_timeout={PROGRESS_BUSY_TIMEOUT_MS}")
            try:
                conn.execute(statement)
                conn.commit()
            finally:
                if raw is not None:
                    conn.rollback()
                    raw.execute(f"PRAGMA busy_timeout={waits}")
    except OperationalError:
        log.debug("progress of job %s skipped: database busy", job_id)


def _observe(kind: str, state: str, seconds: float) -> None:
    from services import ops_metrics

    ops_metrics.job_finished(kind, state, seconds)


# ---------------------------------------------------------------------------
# The generic kind: any service function


@job_kind("call", service="tracker")
def _call(context: JobContext) -> dict[str, Any]:
    params = context.params
    value = job_queue.resolve(params["target"])(*params.get("args", []), **params.get("kwargs", {}))
    return {"value": value} if isinstance(value, str | int | float | bool | type(None)) else {}
