"""What the notification senders share: an outbox table claimed by runs, leased, retried.

An outbox row has ``state`` (``pending``, ``sending``, then ``sent``, ``skipped`` or
``failed``), ``next_attempt_at``, ``claimed_at``, ``attempts`` and ``last_error``. A run
claims every due row in one statement and commits the claim; runs claim one after the other
(a PostgreSQL advisory lock: rows locked as a scan meets them would let two runs share out
one person's rows, and that person would get two messages; SQLite has one writer at a time).
A claim older than the lease (a run that died) is due again. Outcomes are recorded only on
rows the run still holds. A failure is retried after a doubling delay, and marked ``failed``
after ``max_attempts``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select, update

from extensions import db


@dataclass(frozen=True)
class Outbox:
    model: Any  # the mapped class
    key: Any  # its key column (what a claim returns and outcomes name)
    lock_key: int  # the PostgreSQL advisory lock runs take while claiming
    lease: timedelta
    retry_after: timedelta  # doubled after each failed attempt
    max_attempts: int

    def due(self, now: datetime):
        row = self.model
        return and_(
            # Spelled as the partial indexes' condition, so the index serves the scan.
            row.state.in_(("pending", "sending")),
            or_(
                and_(row.state == "pending", row.next_attempt_at <= now),
                and_(row.state == "sending", row.claimed_at < now - self.lease),
            ),
        )

    def claim(self, now: datetime) -> list:
        """Take every due row for this run and commit the claim."""
        if db.session.get_bind().dialect.name == "postgresql":
            db.session.execute(select(func.pg_advisory_xact_lock(self.lock_key)))
        claimed = list(
            db.session.scalars(
                update(self.model)
                .where(self.due(now))
                .values(state="sending", claimed_at=now)
                .returning(self.key)
                .execution_options(synchronize_session=False)
            )
        )
        db.session.commit()
        return claimed

    def mark(self, keys: list, now: datetime, **values) -> None:
        """Record an outcome on rows this run still holds (a claim taken over after the lease is not)."""
        if not keys:
            return
        db.session.execute(
            update(self.model)
            .where(self.key.in_(keys), self.model.state == "sending", self.model.claimed_at == now)
            .values(**values)
            .execution_options(synchronize_session=False)
        )

    def retry_or_fail(self, rows: Iterable[tuple[Any, int]], now: datetime, error: str) -> tuple[int, int]:
        """``rows`` as (key, attempts so far): each tried again later, or failed; returns
        (retried, failed)."""
        by_attempts: dict[int, list] = defaultdict(list)
        for key, attempts in rows:
            by_attempts[attempts + 1].append(key)
        retried = failed = 0
        for attempts, keys in by_attempts.items():
            common = {"attempts": attempts, "last_error": error[:500], "claimed_at": None}
            if attempts >= self.max_attempts:
                self.mark(keys, now, state="failed", **common)
                failed += len(keys)
            else:
                retry_at = now + self.retry_after * 2 ** (attempts - 1)
                self.mark(keys, now, state="pending", next_attempt_at=retry_at, **common)
                retried += len(keys)
        return retried, failed
