"""Substring search in SQL, shared by the services' list filters."""

from __future__ import annotations

from sqlalchemy import ColumnElement, or_


def contains_pattern(text: str) -> str:
    """A LIKE pattern for "contains ``text``", its wildcards taken literally (escape ``\\``)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def contains_any(text: str | None, *columns) -> ColumnElement[bool] | None:
    """Rows where any of ``columns`` contains ``text``, ignoring case; None for an empty ``text``."""
    text = (text or "").strip()
    if not text:
        return None
    pattern = contains_pattern(text)
    return or_(*(column.ilike(pattern, escape="\\") for column in columns))
