"""Each issue's history: who changed what, when, written in the transaction of the change.

The services that change issues call ``record`` (or ``record_changes`` with
snapshots taken before and after an edit); nothing here commits. Values are
JSON snapshots of what a reader needs (a status's name, a person's name, a
related issue's key and title), so an entry still reads right after the thing
it names changes or goes away.

Entries by kind (``field``; ``old`` -> ``new``):

- ``created``: the issue was created (``new``: its key and title).
- ``updated``: one field changed (``title``, ``description``, ``type``,
  ``priority``, ``assignee``, ``parent``, ``start_date``, ``due_date``,
  ``estimate``, ``labels``), with its value before and after.
- ``status_changed``: ``status``, ``{id, name, category}`` before and after.
- ``relation_added`` / ``relation_removed``: the relation type as seen from this
  issue; ``new`` / ``old`` the other issue ``{id, key, title}``.
- ``sub_issue_added`` / ``sub_issue_removed``: the sub-issue ``{id, key, title}``.
- ``comment_added`` / ``comment_edited`` / ``comment_deleted``: ``{id}`` of the
  comment (its text lives in the comment; a deleted one leaves no text behind).
- ``attachment_added`` / ``attachment_deleted``: ``new`` / ``old`` the file
  ``{id, filename}`` (deleting the issue or its project writes none per file).
"""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any

from sqlalchemy import select

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import Issue, Status
from models.tracker_collab import IssueActivity

# Fields of an issue the history follows, in the order a change to several is written.
TRACKED = (
    "title",
    "description",
    "type",
    "priority",
    "status",
    "assignee",
    "parent",
    "start_date",
    "due_date",
    "estimate",
    "labels",
)


def issue_ref(issue: Issue) -> dict:
    return {"id": str(issue.id), "key": issue.key, "title": issue.title}


def user_ref(user: User | None) -> dict | None:
    return None if user is None else {"id": str(user.id), "name": user.name}


def status_ref(status: Status) -> dict:
    return {"id": str(status.id), "name": status.name, "category": status.category}


def _plain(value: Any) -> Any:
    if isinstance(value, date | datetime):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def record(
    issue_id: uuid.UUID,
    actor_id: uuid.UUID | None,
    kind: str,
    *,
    field: str | None = None,
    old: Any = None,
    new: Any = None,
    at: datetime | None = None,
) -> None:
    db.session.add(
        IssueActivity(
            issue_id=issue_id,
            actor_id=actor_id,
            kind=kind,
            field=field,
            old_value=old,
            new_value=new,
            created_at=at or utcnow(),
        )
    )


def present(issue_ids: set[uuid.UUID]) -> set[uuid.UUID]:
    """Those of ``issue_ids`` that exist and that no other transaction is deleting.

    History is sometimes written on a neighbour of the issue being changed (a
    parent, a related issue). Those rows are share-locked until commit without
    waiting (``SKIP LOCKED``): a neighbour being deleted at that moment is left
    out instead of the two transactions waiting for each other.
    """
    if not issue_ids:
        return set()
    query = (
        select(Issue.id)
        .where(Issue.id.in_(issue_ids))
        .with_for_update(of=Issue, read=True, key_share=True, skip_locked=True)
    )
    return set(db.session.scalars(query))


def snapshot(issue: Issue, *, with_parent: bool) -> dict[str, Any]:
    """The tracked fields as the history shows them; ``parent`` only when asked (one query)."""
    values = {
        "title": issue.title,
        "description": issue.description,
        "type": issue.type,
        "priority": issue.priority_name,
        "status": status_ref(issue.status),
        "assignee": user_ref(issue.assignee),
        "start_date": _plain(issue.start_date),
        "due_date": _plain(issue.due_date),
        "estimate": issue.estimate,
        "labels": [{"id": str(label.id), "name": label.name} for label in issue.labels],
    }
    if with_parent:
        parent = db.session.get(Issue, issue.parent_id) if issue.parent_id else None
        values["parent"] = issue_ref(parent) if parent else None
    return values


def _same(field: str, old: Any, new: Any) -> bool:
    """References compare by id (a rename in between is not a change of this issue)."""
    if field in ("status", "assignee", "parent"):
        return (old or {}).get("id") == (new or {}).get("id")
    if field == "labels":
        return {label["id"] for label in old} == {label["id"] for label in new}
    return old == new


def record_changes(
    issue: Issue, actor_id: uuid.UUID, before: dict[str, Any], after: dict[str, Any], at: datetime
) -> set[str]:
    """One entry per field that changed between the two snapshots; the names of those fields."""
    changed = set()
    for field in TRACKED:
        if field not in before or field not in after or _same(field, before[field], after[field]):
            continue
        changed.add(field)
        kind = "status_changed" if field == "status" else "updated"
        record(issue.id, actor_id, kind, field=field, old=before[field], new=after[field], at=at)
    if "parent" in changed:
        child = issue_ref(issue)
        old_parent = uuid.UUID(before["parent"]["id"]) if before["parent"] else None
        if old_parent in present({old_parent} - {None}):
            record(old_parent, actor_id, "sub_issue_removed", old=child, at=at)
        if after["parent"]:
            # The new parent is share-locked already (the edit checked it exists).
            record(uuid.UUID(after["parent"]["id"]), actor_id, "sub_issue_added", new=child, at=at)
    return changed
