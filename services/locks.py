"""Row locks that serialise work on one parent row (an organization's limits, a project's board).

``FOR NO KEY UPDATE``, not ``FOR UPDATE``: it queues the writers that take it, as an update of
the row would, but lets rows that reference the parent be inserted meanwhile (their foreign-key
check takes ``FOR KEY SHARE``). With ``FOR UPDATE``, a request holding the parent's lock and one
inserting a reference to it while holding a lock the first needs wait on each other in a circle:
PostgreSQL aborts one as a deadlock. SQLite has one writer at a time and ignores row locks.
"""

from __future__ import annotations

import uuid

from sqlalchemy import select

from extensions import db


def lock_row(model, row_id: uuid.UUID) -> None:
    db.session.execute(select(model.id).where(model.id == row_id).with_for_update(key_share=True))
