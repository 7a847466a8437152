"""The organization's audit log: who did what to its people, projects, statuses, labels, plan.

The services that make an administrative change call ``record`` in the same
transaction, for every organization whatever its plan (an organization that
moves to a plan with ``audit_log`` sees what happened before). Reading and
exporting need the plan feature ``audit_log`` and the owner or admin role; an
export is itself recorded. Nothing here changes or deletes an entry.
"""

from __future__ import annotations

import csv
import io
import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select, func, select

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker_audit import AuditEvent
from services.errors import FieldError, ValidationFailed
from services.tracker import plans
from services.tracker.access import MANAGE, organization_access

FEATURE = "audit_log"
MAX_PER_PAGE = 100
# An export holds at most this many entries, newest first (narrow the dates for older ones).
MAX_EXPORT_ROWS = 100_000
CSV_COLUMNS = (
    "id",
    "created_at",
    "actor_id",
    "actor_name",
    "action",
    "target_type",
    "target_id",
    "target_name",
    "details",
)


@dataclass
class AuditFilter:
    actor_id: uuid.UUID | None = None
    action: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    page: int = 1
    per_page: int = 50
    format: str = "json"


@dataclass
class AuditPage:
    events: list[AuditEvent]
    total: int
    page: int
    per_page: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))


def record(
    organization_id: uuid.UUID,
    actor: User | None,
    action: str,
    target_type: str,
    target_id: Any = None,
    target_name: str | None = None,
    details: dict | None = None,
) -> None:
    """Append one event (``details``: what changed, ``{"old": ..., "new": ...}`` or the like)."""
    db.session.add(
        AuditEvent(
            organization_id=organization_id,
            actor_id=actor.id if actor is not None else None,
            actor_name=actor.name if actor is not None else None,
            action=action,
            target_type=target_type,
            target_id=None if target_id is None else str(target_id),
            target_name=target_name,
            details=details,
            created_at=utcnow(),
        )
    )


def changes_of(before: dict, after: dict) -> dict:
    """``{"old": {...}, "new": {...}}`` with only the keys whose value differs."""
    changed = [key for key in after if before.get(key) != after[key]]
    return {"old": {key: before.get(key) for key in changed}, "new": {key: after[key] for key in changed}}


def _utc(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _query(organization_id: uuid.UUID, filters: AuditFilter) -> Select:
    since, until = _utc(filters.since), _utc(filters.until)
    if since is not None and until is not None and since > until:
        raise ValidationFailed(
            [
                FieldError(
                    ("query", "until"), "until cannot be before since", reason="audit_until_before_since"
                )
            ]
        )
    query = select(AuditEvent).where(AuditEvent.organization_id == organization_id)
    if filters.actor_id is not None:
        query = query.where(AuditEvent.actor_id == filters.actor_id)
    if filters.action:
        query = query.where(AuditEvent.action == filters.action)
    if since is not None:
        query = query.where(AuditEvent.created_at >= since)
    if until is not None:
        query = query.where(AuditEvent.created_at < until)
    return query


def _readable(user: User, organization_id: uuid.UUID):
    access = organization_access(user, organization_id, MANAGE)
    plans.ensure_feature(access.organization, FEATURE)
    return access


def list_events(user: User, organization_id: uuid.UUID, filters: AuditFilter) -> AuditPage:
    """One page of the organization's events, newest first, with the total that matched."""
    _readable(user, organization_id)
    query = _query(organization_id, filters)
    per_page = min(filters.per_page or 50, MAX_PER_PAGE)
    page = filters.page or 1
    total = db.session.scalar(select(func.count()).select_from(query.subquery())) or 0
    events = list(
        db.session.scalars(
            query.order_by(AuditEvent.created_at.desc(), AuditEvent.id.desc())
            .limit(per_page)
            .offset((page - 1) * per_page)
        )
    )
    return AuditPage(events=events, total=total, page=page, per_page=per_page)


def _cell(value: Any) -> str:
    """A CSV cell a spreadsheet shows as text: a leading ``= + - @`` would start a formula."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def export_csv(user: User, organization_id: uuid.UUID, filters: AuditFilter) -> str:
    """Every matching event (newest first, at most ``MAX_EXPORT_ROWS``) as CSV; the export
    itself is recorded, with the filters it used."""
    access = _readable(user, organization_id)
    query = _query(organization_id, filters)
    rows = db.session.scalars(
        query.order_by(AuditEvent.created_at.desc(), AuditEvent.id.desc()).limit(MAX_EXPORT_ROWS)
    )
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for event in rows:
        writer.writerow(
            [
                event.id,
                event.created_at.isoformat(),
                event.actor_id or "",
                _cell(event.actor_name),
                event.action,
                event.target_type,
                event.target_id or "",
                _cell(event.target_name),
                _cell(json.dumps(event.details, ensure_ascii=False, sort_keys=True) if event.details else ""),
            ]
        )
    used = {
        "actor_id": str(filters.actor_id) if filters.actor_id else None,
        "action": filters.action,
        "since": _utc(filters.since).isoformat() if filters.since else None,
        "until": _utc(filters.until).isoformat() if filters.until else None,
    }
    record(
        access.organization.id,
        user,
        "audit_log.exported",
        "organization",
        access.organization.id,
        access.organization.name,
        {"filters": {key: value for key, value in used.items() if value is not None}},
    )
    return out.getvalue()
