"""The one identity both services share, and its server-side token records."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Boolean, Float, ForeignKey, Index, Integer, String, Uuid, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from extensions import db
from models.base import CreatedAt, UTCDateTime, UUIDPrimaryKey

PAPEIS = ("admin", "planejador", "gerente_loja", "visualizador")
# Order used to tell a promotion from a demotion.
PAPEL_RANK = {"visualizador": 0, "gerente_loja": 1, "planejador": 2, "admin": 3}


VERIFIED = text("email_verified_at IS NOT NULL")


class User(UUIDPrimaryKey, CreatedAt, db.Model):
    """One person's account for both services.

    An address belongs to the one account that proved it (``email_verified_at``):
    only verified addresses are unique, so registering a known address answers
    like any other registration and never tells whether the address has an account.
    """

    __tablename__ = "users"
    __table_args__ = (
        Index(
            "uq_users_email_verified", "email", unique=True, postgresql_where=VERIFIED, sqlite_where=VERIFIED
        ),
        Index("ix_users_email", "email"),
    )

    # `nome` in the stock dialect and `name` in the tracker's: one column.
    name: Mapped[str] = mapped_column(String(200))
    email: Mapped[str] = mapped_column(String(320))
    email_verified_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # A new address waiting for its confirmation link to be followed.
    pending_email: Mapped[str | None] = mapped_column(String(320), nullable=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    # Stock access is granted by a stock admin; None means no access to remanejamento.
    papel: Mapped[str | None] = mapped_column(String(20), nullable=True)
    loja_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("lojas.id", ondelete="SET NULL"), nullable=True
    )
    avatar_url: Mapped[str | None] = mapped_column(String(500), nullable=True)
    superadmin: Mapped[bool] = mapped_column(Boolean, default=False)
    banned: Mapped[bool] = mapped_column(Boolean, default=False)
    last_seen_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # Access tokens issued before this instant are refused (password reset, ban).
    sessions_valid_after: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    notif_email: Mapped[bool] = mapped_column(Boolean, default=True)
    notif_push: Mapped[bool] = mapped_column(Boolean, default=False)
    digest_semanal: Mapped[bool] = mapped_column(Boolean, default=True)
    # Formats numbers and dates on the pages; None: pt-BR, whatever the browser says.
    idioma: Mapped[str | None] = mapped_column(String(10), nullable=True)

    loja = relationship("Loja", lazy="joined")

    @property
    def iniciais(self) -> str:
        return initials(self.name)

    def __repr__(self) -> str:
        return f"<User {self.email}>"


def initials(name: str) -> str:
    """Up to two letters for an avatar: first and last word, or the first two of a lone word."""
    parts = name.split()
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0][:2].upper()
    return (parts[0][0] + parts[-1][0]).upper()


class RefreshToken(CreatedAt, db.Model):
    """One issued refresh token. Rotation chains tokens into a family."""

    __tablename__ = "refresh_tokens"
    __table_args__ = (Index("ix_refresh_tokens_family_id", "family_id"),)

    jti: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("users.id", ondelete="CASCADE"), index=True)
    family_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    remember: Mapped[bool] = mapped_column(Boolean, default=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # The access token issued with this refresh token: logging out denies it too.
    access_jti: Mapped[str | None] = mapped_column(String(64), nullable=True)
    access_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class PasswordResetToken(CreatedAt, db.Model):
    """A single-use reset token; only its SHA-256 digest is stored."""

    __tablename__ = "password_reset_tokens"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("users.id", ondelete="CASCADE"), index=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class EmailVerification(CreatedAt, db.Model):
    """A single-use link proving ``email`` for ``user_id``: a new account's address, or a
    changed one that takes effect when followed. Only the token's SHA-256 digest is stored."""

    __tablename__ = "email_verifications"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("users.id", ondelete="CASCADE"), index=True)
    email: Mapped[str] = mapped_column(String(320))
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class RevokedAccessToken(db.Model):
    """An access token ended before its expiry (logout), kept until it would have expired.

    Used when no Redis is configured; with Redis the same entries live there.
    """

    __tablename__ = "revoked_access_tokens"

    jti: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)


class RateLimitCounter(db.Model):
    """One rate-limit budget's count in its current window (sign-in failures, account e-mails),
    kept here when no Redis is configured, so that every worker process and host counts
    against the same budget (``services.rate_limits``)."""

    __tablename__ = "rate_limit_counters"

    key: Mapped[str] = mapped_column(String(700), primary_key=True)
    hits: Mapped[int] = mapped_column(Integer)
    # Seconds since the epoch, the clock of the ``limits`` library that reads it.
    expires_at: Mapped[float] = mapped_column(Float, index=True)
