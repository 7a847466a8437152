"""Request hooks shared by the tracker's blueprints."""

from __future__ import annotations

from flask import request
from sqlalchemy import text

from extensions import db

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def serialize_sqlite_writes() -> None:
    """On SQLite, take the write lock before the request reads anything.

    A deferred SQLite transaction that reads and then writes fails at once
    (``SQLITE_BUSY_SNAPSHOT``) when another writer committed in between, and
    the busy timeout cannot help. Starting every writing request with a
    no-op write makes concurrent writers queue on the lock instead, which is
    also what keeps issue numbering correct there. PostgreSQL needs nothing:
    its row locks do the same job.
    """
    if request.method in WRITE_METHODS and db.engine.dialect.name == "sqlite":
        db.session.execute(text("UPDATE plans SET id = id WHERE 1 = 0"))


def install_hooks(*blueprints) -> None:
    for blueprint in blueprints:
        blueprint.before_request(serialize_sqlite_writes)
