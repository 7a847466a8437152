"""Webhooks: an organization's subscriptions to its issue events, and the delivery outbox.

A change to an issue writes one ``webhook_deliveries`` row per subscribed
webhook in its own transaction; a job (or ``flask tracker deliver``) sends them
later, so nothing leaves the process inside the request that made the change.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    Uuid,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from extensions import db
from models.base import CreatedAt, UTCDateTime, UUIDPrimaryKey, utcnow

WEBHOOK_EVENTS = (
    "issue.created",
    "issue.updated",
    "issue.deleted",
    "comment.created",
    "attachment.created",
    "attachment.deleted",
)
DELIVERY_STATES = ("pending", "sending", "delivered", "failed")
# Rows the sender still has to look at; the partial index below holds only these.
DELIVERY_UNSENT = text("state IN ('pending', 'sending')")


class Webhook(UUIDPrimaryKey, CreatedAt, db.Model):
    """An URL told about some events of one organization, each delivery signed with ``secret``."""

    __tablename__ = "webhooks"
    __table_args__ = (
        Index("ix_webhooks_organization_id", "organization_id"),
        Index("ix_webhooks_created_by_id", "created_by_id"),
    )

    organization_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.id", ondelete="CASCADE")
    )
    url: Mapped[str] = mapped_column(String(2000))
    events: Mapped[list[str]] = mapped_column(JSON)
    secret: Mapped[str] = mapped_column(String(200))
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_by_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The first failed attempt since the last success: a day of failures disables the webhook.
    failing_since: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # Set when the sender disabled it (a day of failures); cleared when someone enables it again.
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    disabled_reason: Mapped[str | None] = mapped_column(String(300), nullable=True)


class WebhookDelivery(UUIDPrimaryKey, CreatedAt, db.Model):
    """One event for one webhook: its exact body, and what became of each attempt to send it.

    ``pending`` -> claimed as ``sending`` by one sender -> ``delivered`` (a 2xx answer),
    or back to ``pending`` with ``next_attempt_at`` further away, or ``failed`` once
    it is too old or its webhook was disabled. A claim older than the lease is due again.
    """

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        # The webhook's page lists its last deliveries, newest first.
        Index("ix_webhook_deliveries_webhook_id_created_at", "webhook_id", "created_at"),
        Index(
            "ix_webhook_deliveries_due",
            "next_attempt_at",
            postgresql_where=DELIVERY_UNSENT,
            sqlite_where=DELIVERY_UNSENT,
        ),
        CheckConstraint("state IN ('pending', 'sending', 'delivered', 'failed')", name="state_valid"),
    )

    webhook_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("webhooks.id", ondelete="CASCADE"))
    event: Mapped[str] = mapped_column(String(40))
    # The JSON body exactly as sent (and signed), the same bytes on every attempt.
    body: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(10), default="pending")
    attempts: Mapped[int] = mapped_column(SmallInteger, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    last_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    response_status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
