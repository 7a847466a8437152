"""Signing in through an organization's provider: the authorization code flow with PKCE.

``start`` builds the provider's URL and the sign-in's record (``state``'s digest, the
nonce, the PKCE verifier and the digest of a value the browser keeps in a cookie),
which ``remember`` stores. ``claim_state`` takes the record back once, for that
browser only: the caller commits the claim before anything else, so a replayed
``state`` is refused even when the sign-in it belonged to failed.
``verified_claims`` exchanges the code and checks the ID token; ``sign_in`` returns
the account: found by its linked identity, else by its proven address (then
linked), else created without a password; the person joins the organization with
the provider's role when not yet a member.

The steps that talk to the provider write nothing, so that the callers hold no write
lock (SQLite's is the whole database) while waiting on the network.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, exists, select

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import Membership, Organization
from models.tracker_sso import SsoConnection, SsoDomain, SsoIdentity, SsoLoginState
from services import auth as auth_service
from services.errors import PlanLimitError
from services.tracker import audit, plans, sso
from services.tracker import sso_provider as provider
from services.tracker.sso_provider import SsoRefused

log = logging.getLogger("giro.sso")

STATE_LIFETIME = timedelta(minutes=10)
NAME_MAX = 200


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _usable(organization: Organization | None) -> SsoConnection:
    connection = db.session.get(SsoConnection, organization.id) if organization is not None else None
    if (
        connection is None
        or not connection.enabled
        or organization.suspended
        or not organization.plan_features.get(sso.FEATURE)
    ):
        raise SsoRefused("sso_unavailable", "Single sign-on is not available for this organization")
    return connection


def any_enabled() -> bool:
    """Whether the login page should ask for the address first."""
    return bool(db.session.scalar(select(exists().where(SsoConnection.enabled.is_(True)))))


def organization_for_email(email: str) -> Organization | None:
    """The organization whose enabled provider vouches for this address's domain."""
    organization = db.session.scalar(
        select(Organization)
        .join(SsoDomain, SsoDomain.organization_id == Organization.id)
        .join(SsoConnection, SsoConnection.organization_id == Organization.id)
        .where(
            SsoDomain.domain == sso.email_domain(auth_service.normalize_email(email)),
            SsoDomain.verified_at.is_not(None),
            SsoConnection.enabled.is_(True),
        )
    )
    if organization is None or organization.suspended or not organization.plan_features.get(sso.FEATURE):
        return None
    return organization


@dataclass(frozen=True)
class Started:
    url: str
    browser_token: str  # kept by the browser in a cookie until the callback
    pending: SsoLoginState  # recorded by ``remember``


def start(slug: str, *, redirect_uri: str, next_url: str, login_hint: str | None) -> Started:
    """The provider's URL for a new sign-in; reads and asks the provider, writes nothing (the
    caller records the sign-in with ``remember`` in a short write of its own)."""
    organization = db.session.scalar(select(Organization).where(Organization.slug == slug))
    connection = _usable(organization)
    metadata = provider.discover(connection.issuer)
    state, nonce, browser = (secrets.token_urlsafe(32) for _ in range(3))
    verifier = secrets.token_urlsafe(64)
    now = utcnow()
    pending = SsoLoginState(
        state_hash=_digest(state),
        organization_id=organization.id,
        browser_hash=_digest(browser),
        nonce=nonce,
        code_verifier=verifier,
        next_url=next_url,
        expires_at=now + STATE_LIFETIME,
        created_at=now,
    )
    url = provider.authorization_url(
        metadata,
        connection.client_id,
        redirect_uri,
        state=state,
        nonce=nonce,
        verifier=verifier,
        login_hint=login_hint,
    )
    return Started(url=url, browser_token=browser, pending=pending)


def remember(started: Started) -> None:
    now = utcnow()
    db.session.execute(delete(SsoLoginState).where(SsoLoginState.expires_at < now - STATE_LIFETIME))
    db.session.add(started.pending)
    db.session.flush()


@dataclass(frozen=True)
class Claimed:
    organization_id: uuid.UUID
    nonce: str
    code_verifier: str
    next_url: str


def claim_state(state: str | None, browser_token: str | None) -> Claimed:
    """This browser's sign-in under way, marked used; anything else is ``state_invalid``."""
    row = None
    if state:
        row = db.session.scalar(
            select(SsoLoginState).where(SsoLoginState.state_hash == _digest(state)).with_for_update()
        )
    if (
        row is None
        or row.used_at is not None
        or row.expires_at < utcnow()
        or not browser_token
        or not secrets.compare_digest(row.browser_hash, _digest(browser_token))
    ):
        raise SsoRefused("state_invalid", "Unknown, expired or already used sign-in state")
    row.used_at = utcnow()
    db.session.flush()
    return Claimed(row.organization_id, row.nonce, row.code_verifier, row.next_url)


def verified_claims(claimed: Claimed, params: dict[str, str], redirect_uri: str) -> dict:
    """The ID token's claims for the provider's answer; reads and asks the provider, writes nothing."""
    organization = db.session.get(Organization, claimed.organization_id)
    connection = _usable(organization)
    if params.get("error"):
        raise SsoRefused("provider_error", "The provider ended the sign-in", error=params["error"][:100])
    if not params.get("code"):
        raise SsoRefused("provider_error", "The provider sent no code", error="no code")
    if params.get("iss") and params["iss"] != connection.issuer:  # RFC 9207: a mix-up of providers
        raise SsoRefused("wrong_issuer", "The answer comes from another issuer")
    metadata = provider.discover(connection.issuer)
    secret = sso.decrypt_secret(connection.client_secret_encrypted)
    id_token = provider.exchange_code(
        metadata, connection.client_id, secret, redirect_uri, params["code"], claimed.code_verifier
    )
    return provider.verify_id_token(id_token, metadata, connection.client_id, claimed.nonce)


def sign_in(claimed: Claimed, claims: dict) -> User:
    """The account the checked claims name, found, linked or created, and a member."""
    organization = db.session.get(Organization, claimed.organization_id)
    connection = _usable(organization)
    return _account(organization, connection, claims)


def _checked_email(organization: Organization, claims: dict) -> str:
    email = claims.get("email")
    if not isinstance(email, str) or "@" not in email:
        raise SsoRefused("email_unverified", "The provider sent no address", email="(nenhum)")
    email = auth_service.normalize_email(email)
    if claims.get("email_verified") is not True:
        raise SsoRefused("email_unverified", "The provider does not vouch for the address", email=email)
    domain = sso.email_domain(email)
    owner = db.session.scalar(
        select(SsoDomain.organization_id).where(
            SsoDomain.domain == domain, SsoDomain.verified_at.is_not(None)
        )
    )
    if owner != organization.id:
        reason = "email_domain_elsewhere" if owner is not None else "email_outside_domains"
        raise SsoRefused(reason, "The address is outside this organization's domains", email=email)
    return email


def _name(claims: dict, email: str) -> str:
    name = claims.get("name")
    if isinstance(name, str) and name.strip():
        return name.strip()[:NAME_MAX]
    return email.partition("@")[0][:NAME_MAX]


def _find_or_create(organization: Organization, connection: SsoConnection, claims: dict, email: str) -> User:
    identity = db.session.scalar(
        select(SsoIdentity).where(
            SsoIdentity.issuer == connection.issuer, SsoIdentity.subject == claims["sub"]
        )
    )
    if identity is not None:
        user = db.session.get(User, identity.user_id)
    else:
        user = auth_service.verified_owner(email)
        action = "sso.linked"
        if user is None:
            # Accounts that only claimed the address (never proved it) stay as they are.
            user = User(
                email=email,
                name=_name(claims, email),
                password_hash=auth_service.hash_password(secrets.token_urlsafe(32)),
                email_verified_at=utcnow(),
            )
            db.session.add(user)
            db.session.flush()
            action = "sso.account_created"
        identity = SsoIdentity(
            user_id=user.id, organization_id=organization.id, issuer=connection.issuer, subject=claims["sub"]
        )
        db.session.add(identity)
        audit.record(organization.id, user, action, "member", user.id, user.name, {"email": email})
    identity.last_sign_in_at = utcnow()
    return user


def _account(organization: Organization, connection: SsoConnection, claims: dict) -> User:
    email = _checked_email(organization, claims)
    user = _find_or_create(organization, connection, claims, email)
    if user.banned:
        raise SsoRefused("account_banned", "This account is banned")
    if db.session.get(Membership, (organization.id, user.id)) is None:
        try:
            plans.ensure_within_limit(organization, "members")
        except PlanLimitError:
            raise SsoRefused("members_full", "The organization is at its plan's member limit") from None
        db.session.add(
            Membership(organization_id=organization.id, user_id=user.id, role=connection.default_role)
        )
        audit.record(
            organization.id,
            user,
            "member.joined",
            "member",
            user.id,
            user.name,
            {"new": {"role": connection.default_role}, "via": "sso"},
        )
    user.last_seen_at = utcnow()
    audit.record(organization.id, user, "sso.signed_in", "member", user.id, user.name)
    log.info("sso sign-in", extra={"organization_id": str(organization.id), "user_id": str(user.id)})
    db.session.flush()
    return user


def record_refusal(organization_id, exc: SsoRefused) -> None:
    """Write a refused sign-in to the audit log (in the caller's transaction, after the
    sign-in's own work was rolled back)."""
    audit.record(
        organization_id,
        None,
        "sso.refused",
        "sso",
        organization_id,
        None,
        {"reason": exc.reason, **exc.params},
    )
    log.warning("sso sign-in refused", extra={"organization_id": str(organization_id), "reason": exc.reason})
