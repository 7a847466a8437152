"""Prometheus metrics: requests, jobs, batch generation and the database pool.

prometheus-client's own registry; under gunicorn (several worker processes)
set ``PROMETHEUS_MULTIPROC_DIR`` to an empty directory writable by every
process of the host (``deploy/gunicorn.conf.py`` does): each process writes its
samples there and ``/metrics`` adds them up, whichever process answers.
Counts read from the database (jobs by state) are the same from every host.
"""

from __future__ import annotations

import os

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily

REQUESTS = Counter(
    "giro_http_requests_total",
    "HTTP requests answered, by endpoint and status",
    ["method", "endpoint", "status"],
)
LATENCY = Histogram(
    "giro_http_request_duration_seconds",
    "Time to answer a request, by endpoint",
    ["method", "endpoint"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
JOBS_FINISHED = Counter(
    "giro_jobs_finished_total", "Jobs finished, by kind and final state", ["kind", "state"]
)
JOB_DURATION = Histogram(
    "giro_job_duration_seconds",
    "Run time of finished jobs, by kind",
    ["kind"],
    buckets=(0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800),
)
BATCH_SECONDS = Histogram(
    "giro_batch_generation_seconds",
    "Time to generate a week's batch (read, demand, partitions summed, write)",
    buckets=(0.5, 1, 2.5, 5, 10, 20, 40, 60, 120, 300, 600),
)
POOL_CHECKED_OUT = Gauge(
    "giro_db_pool_checked_out",
    "Database connections in use, summed over live processes",
    multiprocess_mode="livesum",
)
POOL_SIZE = Gauge(
    "giro_db_pool_size",
    "Database connections kept open by the pools, summed over live processes",
    multiprocess_mode="livesum",
)
TRANSACTION_FAILURES = Counter(
    "giro_db_transaction_failures_total",
    "Requests whose statement or commit failed: retried_with_write_lock (SQLite: a reading "
    "transaction could not become a writer; run again), busy (a lock held past the database's "
    "wait: 503) or error (500)",
    ["outcome"],
)


# Each request's samples, by (method, endpoint, status): ``labels()`` checks and locks every time.
_request_children: dict[tuple[str, str, int], tuple] = {}


def observe_request(method: str, endpoint: str, status: int, seconds: float) -> None:
    key = (method, endpoint, status)
    children = _request_children.get(key)
    if children is None:
        children = (REQUESTS.labels(method, endpoint, str(status)), LATENCY.labels(method, endpoint))
        _request_children[key] = children
    children[0].inc()
    children[1].observe(seconds)


def transaction_failed(outcome: str) -> None:
    TRANSACTION_FAILURES.labels(outcome).inc()


def job_finished(kind: str, state: str, seconds: float) -> None:
    JOBS_FINISHED.labels(kind, state).inc()
    if seconds > 0:
        JOB_DURATION.labels(kind).observe(seconds)


def batch_generated(seconds: float) -> None:
    BATCH_SECONDS.observe(seconds)


# The pool figures this process last wrote: a gauge is written (a file, under gunicorn) on change only.
_pool_seen: dict[str, tuple[int, int]] = {}


def observe_pool(engine) -> None:
    pool = engine.pool
    checked_out = getattr(pool, "checkedout", None)
    size = getattr(pool, "checkedin", None)
    if callable(checked_out) and callable(size):
        busy = checked_out()
        figures = (busy, busy + size())
        if _pool_seen.get("figures") != figures:
            _pool_seen["figures"] = figures
            POOL_CHECKED_OUT.set(figures[0])
            POOL_SIZE.set(figures[1])


class JobStates:
    """Jobs by state, counted in the database at each scrape (the same on every host)."""

    def __init__(self, count_by_state):
        self.count_by_state = count_by_state

    def collect(self):
        family = GaugeMetricFamily(
            "giro_jobs", "Jobs by state (queued, running, done, failed)", labels=["state"]
        )
        try:
            counts = self.count_by_state()
        except Exception:  # the database being down must not break the scrape
            counts = {}
        for state in ("queued", "running", "done", "failed"):
            family.add_metric([state], counts.get(state, 0))
        yield family


def exposition(count_by_state) -> tuple[bytes, str]:
    """The text the scraper reads: every process's samples (multiprocess) or this one's."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        from prometheus_client import REGISTRY as registry
    extra = CollectorRegistry(auto_describe=True)
    extra.register(JobStates(count_by_state))
    return generate_latest(registry) + generate_latest(extra), CONTENT_TYPE_LATEST
