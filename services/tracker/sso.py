"""Single sign-on settings: an organization's OpenID Connect provider, its vouched domains,
and who must sign in through it.

Owners and admins of an organization whose plan has the feature ``sso`` set the
provider (issuer, client id, client secret, domains, ``enabled``, ``enforced``,
the role of people it signs up). The client secret is stored encrypted
(Fernet, keys from ``SSO_ENCRYPTION_KEYS`` or derived from ``SECRET_KEY``) and
never shown again.

A domain vouches for addresses only once it is proven: the organization
publishes a TXT record (``_giro-sso.<domain>``, value ``giro-sso=<token>``)
and asks for a check, or an operator vouches for it (``flask tracker sso
verify-domain``). A proven domain belongs to one organization: another one
cannot claim it.

``enforced`` applies to the members (owners excepted: break-glass) whose
address is in a proven domain: their password sign-ins are refused, and their
sessions end when enforcement begins. None of it applies while the provider is
disabled or the plan lacks the feature, so neither locks anyone out.
"""

from __future__ import annotations

import base64
import logging
import re
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime

import dns.exception
import dns.resolver
from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from flask import current_app
from sqlalchemy import delete, or_, select

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import Membership, Organization
from models.tracker_sso import SSO_ROLES, SsoConnection, SsoDomain
from services import auth as auth_service
from services import unique
from services.errors import ConflictError, FieldError, ForbiddenError, NotFoundError, ValidationFailed
from services.tracker import audit, plans
from services.tracker.access import MANAGE, organization_access
from services.tracker.sso_provider import check_provider_url

log = logging.getLogger("giro.sso")

FEATURE = "sso"
MAX_DOMAINS = 20
TXT_PREFIX = "_giro-sso"
TXT_VALUE = "giro-sso={token}"
# A host name (RFC 1123 labels), at least two labels, lower case.
_DOMAIN = re.compile(r"^(?=.{4,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$")


# --------------------------------------------------------------------------- the client secret


def _fernet() -> MultiFernet:
    """The first key encrypts, every key decrypts (rotation: put the new key first)."""
    configured = [k.strip() for k in (current_app.config.get("SSO_ENCRYPTION_KEYS") or "").split(",")]
    keys = [Fernet(k) for k in configured if k]
    if not keys:
        derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"giro sso client secret")
        key = derived.derive(current_app.config["SECRET_KEY"].encode())
        keys = [Fernet(base64.urlsafe_b64encode(key))]
    return MultiFernet(keys)


def encrypt_secret(secret: str) -> str:
    return _fernet().encrypt(secret.encode()).decode()


def decrypt_secret(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise RuntimeError("The SSO client secret cannot be decrypted with the configured keys") from exc


# --------------------------------------------------------------------------- reading


@dataclass
class DomainStatus:
    domain: str
    verified: bool
    verified_at: datetime | None
    verified_by: str | None
    txt_name: str
    txt_value: str
    check: str | None = None  # what the last DNS check found, when one just ran


@dataclass
class SsoSettings:
    organization_id: uuid.UUID
    organization_slug: str
    issuer: str
    client_id: str
    has_client_secret: bool
    enabled: bool
    enforced: bool
    default_role: str
    domains: list[str]
    domain_status: list[DomainStatus]
    updated_at: datetime


def _status(row: SsoDomain, check: str | None = None) -> DomainStatus:
    return DomainStatus(
        domain=row.domain,
        verified=row.verified_at is not None,
        verified_at=row.verified_at,
        verified_by=row.verified_by,
        txt_name=f"{TXT_PREFIX}.{row.domain}",
        txt_value=TXT_VALUE.format(token=row.verification_token),
        check=check,
    )


def _domains(organization_id: uuid.UUID) -> list[SsoDomain]:
    return list(
        db.session.scalars(
            select(SsoDomain).where(SsoDomain.organization_id == organization_id).order_by(SsoDomain.domain)
        )
    )


def _settings(connection: SsoConnection) -> SsoSettings:
    rows = _domains(connection.organization_id)
    return SsoSettings(
        organization_id=connection.organization_id,
        organization_slug=db.session.get(Organization, connection.organization_id).slug,
        issuer=connection.issuer,
        client_id=connection.client_id,
        has_client_secret=bool(connection.client_secret_encrypted),
        enabled=connection.enabled,
        enforced=connection.enforced,
        default_role=connection.default_role,
        domains=[row.domain for row in rows],
        domain_status=[_status(row) for row in rows],
        updated_at=connection.updated_at,
    )


def _managed(user: User, organization_id: uuid.UUID) -> Organization:
    access = organization_access(user, organization_id, MANAGE)
    plans.ensure_feature(access.organization, FEATURE)
    return access.organization


def _connection(organization_id: uuid.UUID, lock: bool = False) -> SsoConnection:
    query = select(SsoConnection).where(SsoConnection.organization_id == organization_id)
    connection = db.session.scalar(query.with_for_update() if lock else query)
    if connection is None:
        raise NotFoundError("Single sign-on is not configured", reason="sso_not_configured")
    return connection


def get_settings(user: User, organization_id: uuid.UUID) -> SsoSettings:
    _managed(user, organization_id)
    return _settings(_connection(organization_id))


def find_settings(user: User, organization_id: uuid.UUID) -> SsoSettings | None:
    """The settings, or None when there are none yet (the page's empty form)."""
    _managed(user, organization_id)
    connection = db.session.get(SsoConnection, organization_id)
    return _settings(connection) if connection is not None else None


# --------------------------------------------------------------------------- changing


def _invalid(field: str, message: str, *, reason: str) -> ValidationFailed:
    return ValidationFailed([FieldError(("body", field), message, reason=reason)], "Validation failed")


def normalize_domains(domains: list[str]) -> list[str]:
    cleaned: list[str] = []
    for raw in domains:
        domain = raw.strip().lower().rstrip(".").removeprefix("@")
        try:
            domain = domain.encode("idna").decode("ascii")
        except UnicodeError:
            raise _invalid("domains", f"{raw!r} is not a domain name", reason="sso_domain_invalid") from None
        if not _DOMAIN.match(domain):
            raise _invalid("domains", f"{raw!r} is not a domain name", reason="sso_domain_invalid")
        if domain not in cleaned:
            cleaned.append(domain)
    if len(cleaned) > MAX_DOMAINS:
        raise _invalid("domains", f"At most {MAX_DOMAINS} domains", reason="sso_too_many_domains")
    return cleaned


def _claimed_elsewhere(organization_id: uuid.UUID, domains: list[str]) -> str | None:
    return db.session.scalar(
        select(SsoDomain.domain)
        .where(
            SsoDomain.domain.in_(domains),
            SsoDomain.organization_id != organization_id,
            SsoDomain.verified_at.is_not(None),
        )
        .limit(1)
    )


def _sync_domains(organization_id: uuid.UUID, domains: list[str]) -> None:
    """Keep the proof of domains that stay; new ones start unproven with a fresh token."""
    taken = _claimed_elsewhere(organization_id, domains)
    if taken is not None:
        raise ConflictError(
            f"The domain {taken} is already vouched for by another organization",
            reason="sso_domain_claimed",
            params={"domain": taken},
            field="domains",
        )
    existing = {row.domain: row for row in _domains(organization_id)}
    for domain, row in existing.items():
        if domain not in domains:
            db.session.delete(row)
    for domain in domains:
        if domain not in existing:
            db.session.add(
                SsoDomain(
                    organization_id=organization_id, domain=domain, verification_token=secrets.token_hex(16)
                )
            )
    db.session.flush()


def put_settings(user: User, organization_id: uuid.UUID, data: dict) -> SsoSettings:
    """Create or replace the settings. Without ``client_secret`` the stored one stays."""
    organization = _managed(user, organization_id)
    connection = db.session.scalar(
        select(SsoConnection).where(SsoConnection.organization_id == organization_id).with_for_update()
    )
    before = _audit_view(connection) if connection is not None else None
    secret = data.get("client_secret")
    if connection is None and not secret:
        raise _invalid(
            "client_secret", "Required when single sign-on is first configured", reason="sso_secret_required"
        )
    if data.get("enforced") and not data.get("enabled"):
        raise _invalid(
            "enforced", "Enforcing needs the provider enabled", reason="sso_enforced_needs_enabled"
        )
    role = data.get("default_role", "member")
    if role not in SSO_ROLES:
        raise _invalid("default_role", f"One of {', '.join(SSO_ROLES)}", reason="sso_role_invalid")
    issuer = data["issuer"].strip()
    check_provider_url(issuer, field="issuer")
    domains = normalize_domains(data.get("domains", []))
    was_enforced = connection is not None and connection.enforced and connection.enabled
    if connection is None:
        connection = SsoConnection(organization_id=organization_id, created_at=utcnow())
        db.session.add(connection)
    connection.issuer = issuer
    connection.client_id = data["client_id"].strip()
    if secret:
        connection.client_secret_encrypted = encrypt_secret(secret)
    connection.enabled = bool(data.get("enabled", False))
    connection.enforced = bool(data.get("enforced", False))
    connection.default_role = role
    connection.updated_at = utcnow()
    with unique.or_conflict():
        _sync_domains(organization_id, domains)
    after = _audit_view(connection)
    audit.record(
        organization.id,
        user,
        "sso.configured" if before is None else "sso.updated",
        "sso",
        organization.id,
        organization.name,
        {"old": before, "new": after, "client_secret_changed": bool(secret)},
    )
    log.info("sso settings saved", extra={"organization_id": str(organization.id), "sso": after})
    if connection.enforced and not was_enforced:
        end_enforced_sessions(organization, user)
    return _settings(connection)


def _audit_view(connection: SsoConnection) -> dict:
    return {
        "issuer": connection.issuer,
        "client_id": connection.client_id,
        "enabled": connection.enabled,
        "enforced": connection.enforced,
        "default_role": connection.default_role,
        "domains": [row.domain for row in _domains(connection.organization_id)],
    }


def delete_settings(user: User, organization_id: uuid.UUID) -> None:
    """Remove the provider, its domains and the identities it linked; passwords work again."""
    organization = organization_access(user, organization_id, MANAGE).organization
    connection = _connection(organization_id, lock=True)
    before = _audit_view(connection)
    db.session.execute(delete(SsoDomain).where(SsoDomain.organization_id == organization_id))
    db.session.delete(connection)
    db.session.flush()
    audit.record(
        organization.id, user, "sso.deleted", "sso", organization.id, organization.name, {"old": before}
    )


# --------------------------------------------------------------------------- domains


def _resolver() -> dns.resolver.Resolver:
    configured = current_app.config.get("SSO_DNS_NAMESERVERS") or ""
    if not configured:
        return dns.resolver.Resolver()
    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers = []
    for entry in configured.split(","):
        host, _, port = entry.strip().rpartition(":") if entry.count(":") == 1 else (entry.strip(), "", "")
        resolver.nameservers.append(host)
        if port:
            resolver.nameserver_ports[host] = int(port)
    return resolver


def _txt_values(name: str) -> tuple[list[str], str | None]:
    """The TXT strings at ``name``, or an explanation of why there are none."""
    resolver = _resolver()
    resolver.lifetime = 5.0
    try:
        answer = resolver.resolve(name, "TXT")
    except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
        return [], f"Nenhum registro TXT em {name}."
    except (dns.exception.Timeout, dns.resolver.NoNameservers) as exc:
        return [], f"O DNS não respondeu ao consultar {name}: {exc.__class__.__name__}."
    values = [b"".join(record.strings).decode("utf-8", "replace") for record in answer]
    return values, None


def verify_domain(user: User, organization_id: uuid.UUID, domain: str) -> DomainStatus:
    """Look for the domain's TXT record now; a found record proves it for this organization."""
    organization = _managed(user, organization_id)
    row = db.session.scalar(
        select(SsoDomain)
        .where(SsoDomain.organization_id == organization_id, SsoDomain.domain == domain.lower())
        .with_for_update()
    )
    if row is None:
        raise NotFoundError("Domain not found", reason="sso_domain_not_found")
    if row.verified_at is not None:
        return _status(row)
    status = _status(row)
    values, problem = _txt_values(status.txt_name)
    if problem is None and status.txt_value not in values:
        problem = f"O registro TXT em {status.txt_name} não tem o valor {status.txt_value}."
    if problem is not None:
        return _status(row, check=problem)
    _prove(organization, row, "dns", user)
    return _status(row, check="Domínio comprovado.")


def _prove(organization: Organization, row: SsoDomain, how: str, actor: User | None) -> None:
    if _claimed_elsewhere(organization.id, [row.domain]) is not None:
        raise ConflictError(
            f"The domain {row.domain} is already vouched for by another organization",
            reason="sso_domain_claimed",
            params={"domain": row.domain},
        )
    with unique.or_conflict():
        row.verified_at = utcnow()
        row.verified_by = how
        db.session.flush()
    audit.record(
        organization.id, actor, "sso.domain_verified", "sso_domain", row.id, row.domain, {"how": how}
    )
    connection = db.session.get(SsoConnection, organization.id)
    if connection is not None and connection.enforced and connection.enabled:
        end_enforced_sessions(organization, actor)


def operator_verify_domain(organization: Organization, domain: str) -> None:
    """An operator vouches for a domain (CLI): it is added if missing and proven at once."""
    domain = normalize_domains([domain])[0]
    row = db.session.scalar(
        select(SsoDomain).where(SsoDomain.organization_id == organization.id, SsoDomain.domain == domain)
    )
    if row is None:
        if db.session.get(SsoConnection, organization.id) is None:
            raise NotFoundError("Single sign-on is not configured", reason="sso_not_configured")
        row = SsoDomain(
            organization_id=organization.id, domain=domain, verification_token=secrets.token_hex(16)
        )
        db.session.add(row)
    if row.verified_at is None:
        _prove(organization, row, "operator", None)


def operator_disable(organization: Organization) -> None:
    """Turn the provider off (a provider that is gone): every member signs in with a password."""
    connection = _connection(organization.id, lock=True)
    connection.enabled = False
    connection.enforced = False
    connection.updated_at = utcnow()
    audit.record(organization.id, None, "sso.disabled_by_operator", "sso", organization.id, organization.name)


# --------------------------------------------------------------------------- enforcement


def email_domain(email: str) -> str:
    return email.rpartition("@")[2].lower()


def _enforced_members(organization_id: uuid.UUID) -> list[User]:
    """The members an enforcement covers: not owners, with an address in a proven domain."""
    proven = db.session.scalars(
        select(SsoDomain.domain).where(
            SsoDomain.organization_id == organization_id, SsoDomain.verified_at.is_not(None)
        )
    ).all()
    if not proven:
        return []
    return list(
        db.session.scalars(
            select(User)
            .join(Membership, Membership.user_id == User.id)
            .where(
                Membership.organization_id == organization_id,
                Membership.role != "owner",
                or_(*(User.email.like(f"%@{domain}") for domain in proven)),
            )
        )
    )


def end_enforced_sessions(organization: Organization, actor: User | None) -> None:
    """Enforcement begins: the sessions of the members it covers end (owners keep theirs)."""
    ended = 0
    for member in _enforced_members(organization.id):
        if actor is not None and member.id == actor.id:
            continue
        auth_service.end_all_sessions(member)
        ended += 1
    audit.record(
        organization.id,
        actor,
        "sso.sessions_ended",
        "sso",
        organization.id,
        organization.name,
        {"members": ended},
    )


def after_joining(organization: Organization, user: User, role: str) -> None:
    """Someone joined with a password session: under enforcement that covers them, it ends
    (they come back through the provider)."""
    if role == "owner" or not organization.plan_features.get(FEATURE):
        return
    connection = db.session.get(SsoConnection, organization.id)
    if connection is None or not (connection.enabled and connection.enforced):
        return
    if any(member.id == user.id for member in _enforced_members(organization.id)):
        auth_service.end_all_sessions(user)
        audit.record(
            organization.id, user, "sso.sessions_ended", "member", user.id, user.name, {"members": 1}
        )


def password_refusal(user: User) -> Organization | None:
    """The organization whose enforced sign-on forbids ``user`` a password sign-in, if any."""
    domain = email_domain(user.email)
    row = db.session.execute(
        select(Organization, Membership.role)
        .join(SsoConnection, SsoConnection.organization_id == Organization.id)
        .join(SsoDomain, SsoDomain.organization_id == Organization.id)
        .join(Membership, Membership.organization_id == Organization.id)
        .where(
            SsoConnection.enabled.is_(True),
            SsoConnection.enforced.is_(True),
            SsoDomain.domain == domain,
            SsoDomain.verified_at.is_not(None),
            Membership.user_id == user.id,
        )
        .limit(1)
    ).first()
    if row is None:
        return None
    organization, role = row
    if not organization.plan_features.get(FEATURE) or organization.suspended:
        return None
    if role == "owner":
        audit.record(
            organization.id, user, "sso.break_glass", "member", user.id, user.name, {"via": "password"}
        )
        log.warning("owner signed in with a password under enforced sso", extra={"user_id": str(user.id)})
        return None
    return organization


@auth_service.password_sign_in_guard
def refuse_password_when_enforced(user: User) -> None:
    organization = password_refusal(user)
    if organization is not None:
        raise ForbiddenError(
            f"{organization.name} requires single sign-on: sign in at /tracker/sso/{organization.slug}/login",
            code="SSO_REQUIRED",
            reason="sso_required",
            params={"organization": organization.name, "slug": organization.slug},
        )
