"""Rate-limit counters in the application's database, for deployments without Redis.

flask-limiter keeps its counters in the storage ``RATELIMIT_STORAGE_URI`` names. Redis is the
shared one; without it, ``memory://`` would give each gunicorn worker a budget of its own
(3 workers, 3 times the sign-in guesses). This storage, ``giro+database://``, keeps them in
``rate_limit_counters`` so that every process and host counts against one budget.

It runs its statements on an engine of its own, each in a transaction of its own: a budget
must count even when the request that spent it rolls back (a failed sign-in is a 401). The
limiter checks a budget before the view and spends it after the response, once the request's
transaction has ended, so on SQLite the two never wait on each other's write lock.
"""

from __future__ import annotations

import time

from limits.storage import Storage
from sqlalchemy import Engine, case, create_engine, delete, select
from sqlalchemy.exc import SQLAlchemyError

from models.auth import RateLimitCounter
from services import unique

COUNTERS = RateLimitCounter.__table__
# Expired rows are deleted by the hit that finds one in every this many.
SWEEP_EVERY = 200


class DatabaseStorage(Storage):
    """The fixed-window counters of the ``limits`` library, one row per key."""

    STORAGE_SCHEME = ["giro+database"]

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, **options) -> None:
        super().__init__(uri, wrap_exceptions=wrap_exceptions)
        self.engine: Engine = create_engine(str(options["database_url"]))
        self.dialect = self.engine.dialect.name
        self._hits = 0

    @property
    def base_exceptions(self) -> type[Exception]:
        return SQLAlchemyError

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        now = time.time()
        insert = unique.insert_for(self.dialect, COUNTERS).values(
            key=key, hits=amount, expires_at=now + expiry
        )
        # A row whose window has passed starts a new one.
        expired = COUNTERS.c.expires_at <= now
        statement = insert.on_conflict_do_update(
            index_elements=[COUNTERS.c.key],
            set_={
                "hits": case((expired, amount), else_=COUNTERS.c.hits + amount),
                "expires_at": case((expired, now + expiry), else_=COUNTERS.c.expires_at),
            },
        ).returning(COUNTERS.c.hits)
        with self.engine.begin() as conn:
            hits = conn.execute(statement).scalar_one()
            self._hits += 1
            if self._hits % SWEEP_EVERY == 0:
                conn.execute(delete(COUNTERS).where(COUNTERS.c.expires_at < now))
        return hits

    def get(self, key: str) -> int:
        with self.engine.connect() as conn:
            hits = conn.execute(
                select(COUNTERS.c.hits).where(COUNTERS.c.key == key, COUNTERS.c.expires_at > time.time())
            ).scalar()
        return hits or 0

    def get_expiry(self, key: str) -> float:
        with self.engine.connect() as conn:
            expires = conn.execute(select(COUNTERS.c.expires_at).where(COUNTERS.c.key == key)).scalar()
        return expires if expires is not None else time.time()

    def check(self) -> bool:
        try:
            with self.engine.connect() as conn:
                conn.execute(select(1))
        except SQLAlchemyError:
            return False
        return True

    def reset(self) -> int | None:
        with self.engine.begin() as conn:
            return conn.execute(delete(COUNTERS)).rowcount

    def clear(self, key: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(delete(COUNTERS).where(COUNTERS.c.key == key))
