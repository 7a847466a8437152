"""CSV imports with their log: the command line and the admin's upload page run the same
validation (``importer``) and both leave a line in ``stock_import_logs``, accepted or not.

A rejected file writes nothing but its log line, which keeps every bad line the importer
reported (``error_list``, up to its cap, and ``more_errors`` beyond it): the import runs in a SAVEPOINT that is
rolled back, and the log is written after it, in the caller's transaction."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
from sqlalchemy import select
from sqlalchemy.exc import DBAPIError

from extensions import db
from models.auth import User
from models.stock import ImportLog
from services.stock import access, importer

RECENT = 20
FILENAME_MAX = 255
ERROR_MAX = 500


def run_import(
    actor: User | None,
    kind: str,
    path: str | Path,
    filename: str,
    progress: importer.Progress | None = None,
    *,
    log_database_errors: bool = True,
) -> ImportLog:
    """Import one file and log it. ``actor`` is a stock admin, or None for the operator's CLI.
    Returns the log; ``log.ok`` says whether the file was taken. A database failure is
    logged too, unless ``log_database_errors`` is false (the CLI reports it and rolls back)."""
    if actor is not None:
        access.ensure_stock_access(actor, "admin")
    if kind not in importer.KINDS:
        raise ValueError(f"unknown import kind {kind!r}")
    log = ImportLog(kind=kind, filename=filename[:FILENAME_MAX], user_id=actor.id if actor else None)
    try:
        with db.session.begin_nested():
            summary = importer.import_file(kind, path, progress)
    except importer.ImportRejected as exc:
        log.ok, log.error_line, log.error = False, exc.line, exc.reason[:ERROR_MAX]
        log.error_list = [{"line": e.line, "reason": e.reason[:ERROR_MAX]} for e in exc.errors]
        log.more_errors = exc.more
    except (DBAPIError, sqlite3.Error, psycopg.Error) as exc:
        if not log_database_errors:
            raise
        # E.g. a concurrent import of the same rows; the bulk writes use the raw driver
        # connection, so its own exception types arrive unwrapped.
        reason = (str(getattr(exc, "orig", None) or exc).strip().splitlines() or ["unknown error"])[0]
        log.ok, log.error = False, f"the database refused the import: {reason}"[:ERROR_MAX]
    else:
        log.ok = True
        log.rows, log.inserted, log.updated = summary.rows, summary.inserted, summary.updated
        log.unchanged, log.removed, log.seconds = summary.unchanged, summary.removed, summary.seconds
        # The command line prints the full summary; it is not stored.
        log.summary = summary
    db.session.add(log)
    db.session.flush()
    return log


def recent_imports(actor: User, limit: int = RECENT) -> list[tuple[ImportLog, str | None]]:
    """The last imports, newest first, each with the name of who ran it (None: command line)."""
    access.ensure_stock_access(actor, "admin")
    rows = db.session.execute(
        select(ImportLog, User.name)
        .outerjoin(User, User.id == ImportLog.user_id)
        .order_by(ImportLog.created_at.desc(), ImportLog.id)
        .limit(limit)
    ).all()
    return [(log, name) for log, name in rows]
