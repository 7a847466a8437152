"""The one identity both services share, and its server-side token records."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Index, String, Uuid
from sqlalchemy.orm import Mapped, mapped_column, relationship

from extensions import db
from models.base import CreatedAt, UTCDateTime, UUIDPrimaryKey

PAPEIS = ("admin", "planejador", "gerente_loja", "visualizador")
# Order used to tell a promotion from a demotion.
PAPEL_RANK = {"visualizador": 0, "gerente_loja": 1, "planejador": 2, "admin": 3}


class User(UUIDPrimaryKey, CreatedAt, db.Model):
    __tablename__ = "users"

    # `nome` in the stock dialect and `name` in the tracker's: one column.
    name: Mapped[str] = mapped_column(String(200))
    email: Mapped[str] = mapped_column(String(320), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    papel: Mapped[str] = mapped_column(String(20), default="visualizador")
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

    loja = relationship("Loja", lazy="joined")

    @property
    def iniciais(self) -> str:
        parts = [p for p in self.name.split() if p]
        if not parts:
            return ""
        if len(parts) == 1:
            return parts[0][:2].upper()
        return (parts[0][0] + parts[-1][0]).upper()

    def __repr__(self) -> str:
        return f"<User {self.email}>"


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


class PasswordResetToken(CreatedAt, db.Model):
    """A single-use reset token; only its SHA-256 digest is stored."""

    __tablename__ = "password_reset_tokens"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("users.id", ondelete="CASCADE"), index=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
