"""Unique values settled by the database: a duplicate answers 409, never 500.

Services look for a duplicate first (one cheap query, the usual answer), but two
requests can both pass that look before either commits. The unique constraint
then refuses the second writer. Writes guarded by ``or_conflict`` are flushed in
a SAVEPOINT, and a violation of a constraint listed in ``DUPLICATES`` becomes the
same 409 the look raises, so a request that lost a race answers what it would
have answered a moment later. The transaction stays usable (a page can still
render its form). A violation of any other constraint propagates: it is a bug,
not an answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from sqlalchemy import PrimaryKeyConstraint, UniqueConstraint
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError

from extensions import db
from services.errors import ConflictError


@dataclass(frozen=True)
class Duplicate:
    """What a duplicate of one constraint answers: the 409's message, the reason the pages
    translate, and extra fields of the tracker's body (``field``)."""

    message: str
    reason: str
    extra: dict[str, Any] = field(default_factory=dict)


# Constraint name -> the 409 it answers: the same one the services' own checks raise.
DUPLICATES: dict[str, Duplicate] = {
    "uq_organizations_slug": Duplicate(
        "An organization with this slug already exists",
        reason="organization_slug_taken",
        extra={"field": "slug"},
    ),
    "uq_workspaces_slug": Duplicate(
        "A workspace with this slug already exists", reason="workspace_slug_taken", extra={"field": "slug"}
    ),
    "uq_projects_workspace_id_key": Duplicate(
        "A project with this key already exists in the workspace",
        reason="project_key_taken",
        extra={"field": "key"},
    ),
    "uq_labels_project_id_name": Duplicate(
        "A label with this name already exists in the project",
        reason="label_name_taken",
        extra={"field": "name"},
    ),
    "uq_custom_fields_project_id_slug": Duplicate(
        "A custom field with this slug already exists in the project",
        reason="custom_field_slug_taken",
        extra={"field": "name"},
    ),
    "uq_issue_relations_issue_id_related": Duplicate(
        "These issues are already related", reason="already_related"
    ),
    "uq_invitations_pending_organization_id_email": Duplicate(
        "This address already has a pending invitation", reason="invitation_pending", extra={"field": "email"}
    ),
    "pk_memberships": Duplicate("You are already a member of this organization", reason="already_joined"),
    "uq_users_email_verified": Duplicate(
        "Este e-mail já pertence a outra conta", reason="email_taken", extra={"field": "email"}
    ),
    "pk_plans": Duplicate("A plan with this id already exists", reason="plan_id_taken"),
}

_PG_UNIQUE_VIOLATION = "23505"
_SQLITE_UNIQUE = re.compile(r"^UNIQUE constraint failed: (.+)$")


class DuplicateError(ConflictError):
    """409 for a value a unique constraint already holds; ``constraint`` names it."""

    def __init__(self, constraint: str):
        duplicate = DUPLICATES[constraint]
        super().__init__(duplicate.message, reason=duplicate.reason, **duplicate.extra)
        self.constraint = constraint


def conflict(constraint: str) -> DuplicateError:
    """The 409 for ``constraint``, for a service's own duplicate check."""
    return DuplicateError(constraint)


@cache
def _constraints_by_columns() -> dict[tuple[str, tuple[str, ...]], str]:
    """(table, columns) -> constraint name: SQLite names the columns, not the constraint."""
    found: dict[tuple[str, tuple[str, ...]], str] = {}
    for table in db.metadata.tables.values():
        keys = [c for c in table.constraints if isinstance(c, (UniqueConstraint, PrimaryKeyConstraint))]
        keys += [index for index in table.indexes if index.unique]
        for key in keys:
            found[(table.name, tuple(column.name for column in key.columns))] = str(key.name)
    return found


def violated_constraint(exc: IntegrityError) -> str | None:
    """The unique constraint (or primary key) ``exc`` reports, or None for any other violation."""
    orig = exc.orig
    diag = getattr(orig, "diag", None)
    if diag is not None:  # psycopg
        return diag.constraint_name if getattr(orig, "sqlstate", None) == _PG_UNIQUE_VIOLATION else None
    match = _SQLITE_UNIQUE.match(str(orig))
    if match is None:
        return None
    # "table.column, table.column"; an index on expressions is named instead ("index 'ix'").
    qualified = [name.strip().split(".") for name in match.group(1).split(",")]
    if any(len(parts) != 2 for parts in qualified) or len({table for table, _ in qualified}) != 1:
        return None
    return _constraints_by_columns().get((qualified[0][0], tuple(column for _, column in qualified)))


@contextmanager
def or_conflict() -> Iterator[None]:
    """Flush what the block adds or changes in a SAVEPOINT; a known duplicate raises ``DuplicateError``.

    Make the changes inside the block: opening the SAVEPOINT flushes what is
    already pending, outside of it.
    """
    try:
        with db.session.begin_nested():
            yield
            db.session.flush()
    except IntegrityError as exc:
        constraint = violated_constraint(exc)
        if constraint not in DUPLICATES:
            raise
        raise DuplicateError(constraint) from None


_INSERT = {"postgresql": postgresql.insert, "sqlite": sqlite.insert}


def insert(table):
    """An INSERT that can take ON CONFLICT, in the dialect of the two supported engines."""
    return insert_for(db.session.get_bind().dialect.name, table)


def insert_for(dialect: str, table):
    """``insert`` for a dialect named in advance (statements built once and kept)."""
    return _INSERT[dialect](table)
