"""Remanejamento notifications: the outbox of what each person hears (by e-mail or Web Push),
and the browsers subscribed to Web Push."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid, text
from sqlalchemy.orm import Mapped, mapped_column

from extensions import db
from models.base import CreatedAt, UTCDateTime, UUIDPrimaryKey

CHANNELS = ("email", "push")
KINDS = (
    "lote_gerado",
    "separar",
    "chegando",
    "receber",
    "atrasada",
    "estoque_errado",
    "problema",
    "resumo_semanal",
)
OUTBOX_STATES = ("pending", "sending", "sent", "skipped", "failed")
OUTBOX_UNSENT = text("state IN ('pending', 'sending')")


class StockNotification(UUIDPrimaryKey, CreatedAt, db.Model):
    """One thing one person is to hear on one channel. ``dedupe_key`` names the event
    (``aprovada:<id>``, ``resumo:2026-W49``...): the same event never queues twice."""

    __tablename__ = "stock_notifications"
    __table_args__ = (
        UniqueConstraint("user_id", "channel", "dedupe_key", name="uq_stock_notifications_user_id"),
        Index(
            "ix_stock_notifications_unsent",
            "next_attempt_at",
            postgresql_where=OUTBOX_UNSENT,
            sqlite_where=OUTBOX_UNSENT,
        ),
    )

    user_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("users.id", ondelete="CASCADE"), index=True)
    channel: Mapped[str] = mapped_column(String(10))
    kind: Mapped[str] = mapped_column(String(20))
    dedupe_key: Mapped[str] = mapped_column(String(120))
    payload: Mapped[dict] = mapped_column(JSON)
    state: Mapped[str] = mapped_column(String(10), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime)
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)


class PushSubscription(UUIDPrimaryKey, CreatedAt, db.Model):
    """One browser's Web Push subscription (RFC 8030 endpoint and RFC 8291 keys)."""

    __tablename__ = "push_subscriptions"

    user_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("users.id", ondelete="CASCADE"), index=True)
    endpoint: Mapped[str] = mapped_column(String(2000), unique=True)
    p256dh: Mapped[str] = mapped_column(String(200))
    auth: Mapped[str] = mapped_column(String(100))
