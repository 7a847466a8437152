"""When a pooled connection is checked before use.

SQLAlchemy's ``pool_pre_ping`` sends ``SELECT 1`` every time a connection leaves the pool:
one round trip to the database on every request, and as much of the server's work as a
short query. A connection used a moment ago is as alive as a ping would prove, so, like
HikariCP's ``aliveBypassWindowMs``, the ping is skipped for a connection returned to the pool
less than ``DATABASE_PING_AFTER_IDLE`` seconds ago (1 by default). Any older one is pinged,
and one that fails the ping is replaced, with every connection opened before it, as
``pool_pre_ping`` does. A server restarted within that second fails the requests that were
already running, as it would with a ping on every checkout.

The benchmarks' bare app (``benchmarks/bare_app.py``) applies the same policy, so both sides
of ``api_overhead.py`` make the same round trips.
"""

from __future__ import annotations

import time

from sqlalchemy import event, exc
from sqlalchemy.engine import Engine

DEFAULT_PING_AFTER_IDLE = 1.0
_RETURNED_AT = "giro_returned_at"


def ping_connections_left_idle(engine: Engine, idle_seconds: float = DEFAULT_PING_AFTER_IDLE) -> None:
    dialect = engine.dialect

    @event.listens_for(engine, "checkin")
    def _returned(_dbapi_connection, record) -> None:
        record.info[_RETURNED_AT] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _ping_if_idle(dbapi_connection, record, _proxy) -> None:
        returned_at = record.info.get(_RETURNED_AT)
        # A connection just opened has never been returned: nothing to check.
        if returned_at is None or time.monotonic() - returned_at < idle_seconds:
            return
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as error:
            if dialect.is_disconnect(error, dbapi_connection, None):
                # The pool opens a new connection and retires those opened before this one.
                raise exc.InvalidatePoolError(str(error)) from error
            raise


# --------------------------------------------------------------------------- lock conflicts

# SQLite's primary result codes for a lock it could not take: held past the busy timeout, or,
# for a read transaction that must become a writer while another connection writes or has
# committed since it began, refused at once (waiting could deadlock).
SQLITE_BUSY, SQLITE_LOCKED = 5, 6
# PostgreSQL: serialization failure, deadlock, lock_timeout.
POSTGRES_LOCK_STATES = frozenset({"40001", "40P01", "55P03"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class StaleReadSnapshot(Exception):
    """A request that began by reading wrote late and could not take SQLite's write lock.
    It runs again from the start with the lock taken as its transaction begins."""


def is_write_request() -> bool:
    """A request that may write, or background work that says it writes (jobs, cron commands):
    on SQLite their transactions begin ``IMMEDIATE``, taking the write lock before they read."""
    from flask import has_request_context, request

    from services.transactions import is_writing

    if is_writing():
        return True
    return has_request_context() and request.method not in SAFE_METHODS


def lock_conflict(error: exc.DBAPIError) -> bool:
    """The statement failed on a lock another transaction holds (SQLite busy or locked,
    PostgreSQL serialization failure, deadlock or lock timeout), not on what it said."""
    original = error.orig
    code = getattr(original, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (SQLITE_BUSY, SQLITE_LOCKED)  # extended codes keep the primary's low byte
    return getattr(original, "sqlstate", None) in POSTGRES_LOCK_STATES
