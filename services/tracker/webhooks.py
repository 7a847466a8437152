"""Webhooks: an organization's owners and admins subscribe URLs to its issue events.

This module holds the subscriptions (create, change, delete, list them and
their deliveries) and the events' payloads. Nothing is sent inside the request
that made a change: the change calls ``emit`` in its own transaction, which
writes one outbox row (``webhook_deliveries``) per enabled webhook subscribed
to the event, holding the exact JSON body, and queues a delivery pass for after
the commit: ``services.tracker.webhook_delivery`` sends the rows (its ``webhooks``
job); ``services.outbound`` decides which URLs a webhook may point at.
"""

from __future__ import annotations

import json
import secrets
import uuid
from datetime import date, datetime
from typing import Any

from sqlalchemy import delete, func, insert, select

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import Issue, Organization
from models.tracker_attachments import Attachment
from models.tracker_collab import Comment
from models.tracker_webhooks import WEBHOOK_EVENTS, Webhook, WebhookDelivery
from services import locks
from services.errors import ConflictError, FieldError, NotFoundError, ValidationFailed
from services.outbound import validate_url
from services.tracker import webhook_delivery
from services.tracker.access import MANAGE, organization_access

MAX_PER_ORGANIZATION = 20
DELIVERIES_SHOWN = 50
SECRET_MIN = 16


# --------------------------------------------------------------------------- managing webhooks


def _events(events: list[str]) -> list[str]:
    unknown = [event for event in events if event not in WEBHOOK_EVENTS]
    if unknown or not events:
        message = f"Unknown event {unknown[0]!r}" if unknown else "Name at least one event"
        raise ValidationFailed(
            [FieldError(("body", "events"), message, reason="webhook_events_invalid")], "Validation failed"
        )
    return [event for event in WEBHOOK_EVENTS if event in set(events)]


def _find(organization_id: uuid.UUID, webhook_id: uuid.UUID, lock: bool = False) -> Webhook:
    query = select(Webhook).where(Webhook.id == webhook_id, Webhook.organization_id == organization_id)
    webhook = db.session.scalar(query.with_for_update() if lock else query)
    if webhook is None:
        raise NotFoundError("Webhook not found", reason="webhook_not_found")
    return webhook


def list_webhooks(user: User, organization_id: uuid.UUID) -> list[Webhook]:
    organization_access(user, organization_id, MANAGE)
    return list(
        db.session.scalars(
            select(Webhook)
            .where(Webhook.organization_id == organization_id)
            .order_by(Webhook.created_at, Webhook.id)
        )
    )


def get_webhook(user: User, organization_id: uuid.UUID, webhook_id: uuid.UUID) -> Webhook:
    organization_access(user, organization_id, MANAGE)
    return _find(organization_id, webhook_id)


def create_webhook(
    user: User, organization_id: uuid.UUID, url: str, events: list[str], secret: str | None = None
) -> Webhook:
    """A new webhook, enabled; its secret is generated unless given (shown only in this answer)."""
    access = organization_access(user, organization_id, MANAGE)
    validate_url(url)
    events = _events(events)
    # Serialises creations in one organization, so two at once cannot pass the limit.
    locks.lock_row(Organization, organization_id)
    count = db.session.scalar(
        select(func.count()).select_from(Webhook).where(Webhook.organization_id == organization_id)
    )
    if (count or 0) >= MAX_PER_ORGANIZATION:
        raise ConflictError(
            f"An organization has at most {MAX_PER_ORGANIZATION} webhooks",
            reason="webhook_limit",
            params={"limit": MAX_PER_ORGANIZATION},
        )
    now = utcnow()
    webhook = Webhook(
        organization_id=access.organization.id,
        url=url,
        events=events,
        secret=secret or secrets.token_hex(32),
        enabled=True,
        created_by_id=user.id,
        created_at=now,
        updated_at=now,
    )
    db.session.add(webhook)
    db.session.flush()
    return webhook


def update_webhook(user: User, organization_id: uuid.UUID, webhook_id: uuid.UUID, changes: dict) -> Webhook:
    """Change the URL, the events or whether it is enabled. Enabling it again starts afresh:
    the failure clock is reset; disabling it fails its pending deliveries."""
    organization_access(user, organization_id, MANAGE)
    webhook = _find(organization_id, webhook_id, lock=True)
    if "url" in changes:
        validate_url(changes["url"])
        webhook.url = changes["url"]
    if "events" in changes:
        webhook.events = _events(changes["events"])
    if "enabled" in changes and changes["enabled"] != webhook.enabled:
        webhook.enabled = changes["enabled"]
        webhook.failing_since = None
        webhook.disabled_at = None
        webhook.disabled_reason = None
        if not webhook.enabled:
            webhook_delivery.fail_pending(webhook.id, "Webhook disabled")
    webhook.updated_at = utcnow()
    db.session.flush()
    return webhook


def delete_webhook(user: User, organization_id: uuid.UUID, webhook_id: uuid.UUID) -> None:
    """Delete it and its deliveries (``ON DELETE CASCADE``)."""
    organization_access(user, organization_id, MANAGE)
    webhook = _find(organization_id, webhook_id, lock=True)
    db.session.execute(
        delete(WebhookDelivery)
        .where(WebhookDelivery.webhook_id == webhook.id)
        .execution_options(synchronize_session=False)
    )
    db.session.delete(webhook)
    db.session.flush()


def list_deliveries(
    user: User, organization_id: uuid.UUID, webhook_id: uuid.UUID, limit: int = DELIVERIES_SHOWN
) -> list[WebhookDelivery]:
    """The webhook's last ``limit`` deliveries, newest first."""
    organization_access(user, organization_id, MANAGE)
    webhook = _find(organization_id, webhook_id)
    return list(
        db.session.scalars(
            select(WebhookDelivery)
            .where(WebhookDelivery.webhook_id == webhook.id)
            .order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc())
            .limit(min(limit, DELIVERIES_SHOWN))
        )
    )


# --------------------------------------------------------------------------- events


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _person(user: User | None) -> dict | None:
    return None if user is None else {"id": str(user.id), "name": user.name}


def issue_data(issue: Issue) -> dict[str, Any]:
    """An issue as a webhook receiver sees it."""
    return {
        "id": str(issue.id),
        "key": issue.key,
        "number": issue.number,
        "title": issue.title,
        "description": issue.description,
        "type": issue.type,
        "priority": issue.priority_name,
        "status": {"id": str(issue.status.id), "name": issue.status.name, "category": issue.status.category},
        "assignee": _person(issue.assignee),
        "parent_id": str(issue.parent_id) if issue.parent_id else None,
        "labels": [{"id": str(label.id), "name": label.name} for label in issue.labels],
        "start_date": issue.start_date,
        "due_date": issue.due_date,
        "estimate": issue.estimate,
        "project": {"id": str(issue.project.id), "key": issue.project.key, "name": issue.project.name},
        "created_at": issue.created_at,
        "updated_at": issue.updated_at,
    }


def comment_data(comment: Comment, issue: Issue) -> dict[str, Any]:
    return {
        "comment": {
            "id": str(comment.id),
            "body": comment.body,
            "author": _person(comment.author),
            "created_at": comment.created_at,
        },
        "issue": {"id": str(issue.id), "key": issue.key, "title": issue.title},
    }


def attachment_data(attachment: Attachment, issue: Issue) -> dict[str, Any]:
    """A file as the API shows it, and its issue."""
    return {
        "attachment": {
            "id": str(attachment.id),
            "filename": attachment.filename,
            "content_type": attachment.content_type,
            "size_bytes": attachment.size_bytes,
            "has_thumbnail": attachment.has_thumbnail,
            "created_by": _person(attachment.created_by),
            "created_at": attachment.created_at,
        },
        "issue": {"id": str(issue.id), "key": issue.key, "title": issue.title},
    }


def emit(
    organization_id: uuid.UUID,
    event: str,
    data: dict[str, Any],
    actor: User | None,
    at: datetime | None = None,
) -> int:
    """Queue ``event`` for every enabled webhook of the organization subscribed to it, in the
    current transaction (flush only); a delivery job runs once it commits. How many rows."""
    hooks = [
        webhook_id
        for webhook_id, events in db.session.execute(
            select(Webhook.id, Webhook.events).where(
                Webhook.organization_id == organization_id, Webhook.enabled.is_(True)
            )
        )
        if event in (events or ())
    ]
    if not hooks:
        return 0
    at = at or utcnow()
    payload = {**data, "actor": _person(actor), "organization_id": str(organization_id)}
    rows = []
    for webhook_id in hooks:
        delivery_id = uuid.uuid4()
        body = json.dumps(
            {"id": str(delivery_id), "event": event, "created_at": at, "data": payload},
            default=_plain,
            ensure_ascii=False,
            separators=(",", ":"),
        )
        rows.append(
            {
                "id": delivery_id,
                "webhook_id": webhook_id,
                "event": event,
                "body": body,
                "state": "pending",
                "attempts": 0,
                "next_attempt_at": at,
                "created_at": at,
            }
        )
    db.session.execute(insert(WebhookDelivery), rows)
    webhook_delivery.queue_pass()
    return len(hooks)
