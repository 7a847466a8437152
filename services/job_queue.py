"""The engines that run jobs: RQ on Redis, or threads of this process without Redis.

RQ (not Celery): Redis is already the project's shared store, RQ needs nothing
else (no broker, no result backend to configure), a job is a plain function
call by dotted path, its worker forks a process per job (a crash or a SIGKILL
takes one job, not the worker pool) and it has what the work needs built in:
retries of jobs whose worker died (the started-job registry notices the lost
heartbeat), dependencies (a batch's merge waits for all its partitions) and a
scheduler for the cadence. ``flask worker`` runs ``rq``'s worker inside the app.

Without ``REDIS_URL`` (``make run``'s embedded default) a job runs in a thread of
the process that asked for it, through the same ``run_job`` and the same progress
reporting; a batch's partitions then run one after the other in that thread.
If Redis is configured but down when a job is dispatched, the job falls back to
a thread as well (``JOBS_REDIS_FALLBACK``, default on) rather than being lost.
"""

from __future__ import annotations

import contextvars
import importlib
import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from flask import Flask, current_app

log = logging.getLogger("giro.jobs")

QUEUE_NAME = "giro"
_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


def uses_redis(app: Flask | None = None) -> bool:
    app = app or current_app
    return bool(app.config.get("REDIS_URL")) and not app.config["JOBS_EAGER"]


def redis_connection(app: Flask | None = None):
    from redis import Redis

    app = app or current_app
    extension = app.extensions.setdefault("giro_redis", {})
    url = app.config["REDIS_URL"]
    if url not in extension:
        extension[url] = Redis.from_url(url, socket_connect_timeout=2, socket_timeout=30)
    return extension[url]


def rq_queue(app: Flask | None = None):
    from rq import Queue

    app = app or current_app
    return Queue(
        app.config["JOBS_QUEUE"], connection=redis_connection(app), default_timeout=app.config["JOBS_TIMEOUT"]
    )


def submit(job_id: uuid.UUID, kind: str) -> None:
    """Start a committed job: on RQ when configured (and reachable), otherwise in a thread."""
    app = current_app._get_current_object()
    if app.config["JOBS_EAGER"] and kind in app.config["JOBS_EAGER_DEFERRED"]:
        return  # the row stays queued: nothing in this process waits for it
    if uses_redis(app):
        try:
            enqueue_rq("services.jobs.run_job", str(job_id), rq_id=f"giro-{job_id}")
            return
        except Exception as exc:  # redis-py raises ConnectionError, TimeoutError...
            if not app.config["JOBS_REDIS_FALLBACK"]:
                log.error("job %s (%s) not queued: Redis unreachable (%s)", job_id, kind, exc)
                return
            log.warning("Redis unreachable (%s): job %s (%s) runs in this process", exc, job_id, kind)
    run_in_thread(app, "services.jobs:run_job", str(job_id))


def enqueue_rq(target: str, *args: Any, rq_id: str | None = None, depends_on: Any = None, retries: int = 2):
    """Put one call on the RQ queue; a job whose worker died is retried ``retries`` times."""
    from rq import Retry

    return rq_queue().enqueue(
        target,
        *args,
        job_id=rq_id,
        depends_on=depends_on,
        retry=Retry(max=retries, interval=[1, 5]) if retries else None,
        result_ttl=3600,
        failure_ttl=7 * 24 * 3600,
    )


def run_in_thread(app: Flask, target: str, *args: Any) -> None:
    """Run ``module:function(*args)`` in an app context of its own, in a thread of this process
    (or at once, in the caller's thread, with ``JOBS_EAGER``: the test suite)."""
    if app.config["JOBS_EAGER"]:
        contextvars.Context().run(_call_in_app, app, target, args)
        return
    with _pools_lock:
        pool = _pools.get(id(app))
        if pool is None:
            pool = _pools[id(app)] = ThreadPoolExecutor(
                max_workers=app.config["JOBS_THREADS"], thread_name_prefix="giro-job"
            )
    try:
        pool.submit(_call_in_app, app, target, args)
    except RuntimeError:
        # The process is stopping (its pool no longer takes work) while a job it ran queued
        # another: that job's row stays queued, and the next request for the same work starts
        # a new one once it is stale (``jobs.enqueue``). Raising here would fail the commit
        # that already happened.
        log.warning("process stopping: %s%r stays queued", target, args)


def resolve(target: str) -> Callable[..., Any]:
    """``"package.module:function"`` -> the function."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def _call_in_app(app: Flask, target: str, args: tuple) -> None:
    from extensions import db

    with app.app_context():
        try:
            resolve(target)(*args)
        except Exception:
            log.exception("in-process job step %s%r failed", target, args)
        finally:
            db.session.remove()


def redis_ok(app: Flask | None = None) -> bool | None:
    """None without Redis configured; else whether it answers a PING."""
    app = app or current_app
    if not app.config.get("REDIS_URL"):
        return None
    try:
        return bool(redis_connection(app).ping())
    except Exception:
        return False
