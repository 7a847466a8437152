"""Statements of plain columns, read through the session's connection."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import CursorResult

from extensions import db


def read_columns(statement: Any, params: dict | None = None) -> CursorResult:
    """Rows of a statement of columns, as the connection gives them: the session's ORM result
    (a tuple built per row, and its setup per statement) adds nothing to plain columns. Pending
    changes are flushed first, as the session would."""
    session = db.session()
    if session.autoflush:
        session.flush()
    return session.connection().execute(statement, params)
