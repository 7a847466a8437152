"""Single sign-on: an organization's OpenID Connect provider, the e-mail domains it vouches
for, the identities it has signed in, and the sign-ins under way."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Index, String, Text, UniqueConstraint, Uuid, text
from sqlalchemy.orm import Mapped, mapped_column

from extensions import db
from models.base import CreatedAt, UTCDateTime, UUIDPrimaryKey, utcnow

SSO_ROLES = ("admin", "member", "viewer")
DOMAIN_VERIFIED = text("verified_at IS NOT NULL")


class SsoConnection(CreatedAt, db.Model):
    """One organization's provider. The client secret is stored encrypted (``services.tracker.sso``)."""

    __tablename__ = "sso_connections"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True
    )
    issuer: Mapped[str] = mapped_column(String(500))
    client_id: Mapped[str] = mapped_column(String(255))
    client_secret_encrypted: Mapped[str] = mapped_column(Text)
    enabled: Mapped[bool] = mapped_column(Boolean, default=False)
    enforced: Mapped[bool] = mapped_column(Boolean, default=False)
    # The role a first SSO sign-in gets in the organization.
    default_role: Mapped[str] = mapped_column(String(20), default="member")
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class SsoDomain(UUIDPrimaryKey, CreatedAt, db.Model):
    """An e-mail domain an organization's provider vouches for, once proven by a DNS TXT record
    (or by an operator). A proven domain belongs to one organization only."""

    __tablename__ = "sso_domains"
    __table_args__ = (
        UniqueConstraint("organization_id", "domain", name="uq_sso_domains_organization_id_domain"),
        Index(
            "uq_sso_domains_verified_domain",
            "domain",
            unique=True,
            postgresql_where=DOMAIN_VERIFIED,
            sqlite_where=DOMAIN_VERIFIED,
        ),
    )

    organization_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.id", ondelete="CASCADE")
    )
    domain: Mapped[str] = mapped_column(String(253))
    verification_token: Mapped[str] = mapped_column(String(64))
    verified_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # "dns" or "operator"
    verified_by: Mapped[str | None] = mapped_column(String(20), nullable=True)


class SsoIdentity(UUIDPrimaryKey, CreatedAt, db.Model):
    """The provider's subject linked to an account: the next sign-in finds the account by it."""

    __tablename__ = "sso_identities"
    __table_args__ = (UniqueConstraint("issuer", "subject", name="uq_sso_identities_issuer_subject"),)

    user_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("users.id", ondelete="CASCADE"), index=True)
    organization_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    issuer: Mapped[str] = mapped_column(String(500))
    subject: Mapped[str] = mapped_column(String(255))
    last_sign_in_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class SsoLoginState(CreatedAt, db.Model):
    """A sign-in sent to the provider and not yet back: ``state`` (its SHA-256 here), the
    nonce, the PKCE verifier and the browser it belongs to (the SHA-256 of a cookie's value).
    Used once: the callback marks it, so a replayed ``state`` is refused."""

    __tablename__ = "sso_login_states"

    state_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    organization_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    browser_hash: Mapped[str] = mapped_column(String(64))
    nonce: Mapped[str] = mapped_column(String(128))
    code_verifier: Mapped[str] = mapped_column(String(128))
    next_url: Mapped[str] = mapped_column(String(2000), default="/")
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
