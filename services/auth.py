"""Accounts and sessions shared by both services.

Refresh tokens are recorded server-side. Refreshing rotates (the presented
token is revoked and a new one issued in the same family); presenting a token
that was already revoked means it leaked, so its whole family is revoked.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from flask import current_app
from flask_jwt_extended import create_access_token, create_refresh_token, decode_token
from jwt import ExpiredSignatureError, InvalidTokenError
from sqlalchemy import select, update

from extensions import db
from models.auth import PasswordResetToken, RefreshToken, User
from models.base import utcnow
from services import token_denylist
from services.errors import AuthenticationError, ConflictError, DomainError, ForbiddenError
from services.mail import queue_mail

_DUMMY_HASH: str | None = None


def _hasher() -> PasswordHasher:
    cfg = current_app.config
    return PasswordHasher(time_cost=cfg["ARGON2_TIME_COST"], memory_cost=cfg["ARGON2_MEMORY_COST"])


def hash_password(password: str) -> str:
    return _hasher().hash(password)


def verify_password(user: User | None, password: str) -> bool:
    """Check a password; with no user, burn the same time so emails cannot be probed."""
    global _DUMMY_HASH
    hasher = _hasher()
    if user is None:
        if _DUMMY_HASH is None:
            _DUMMY_HASH = hasher.hash(secrets.token_hex(16))
        with contextlib.suppress(VerificationError):
            hasher.verify(_DUMMY_HASH, password)
        return False
    try:
        hasher.verify(user.password_hash, password)
    except (VerificationError, InvalidHashError):
        return False
    if hasher.check_needs_rehash(user.password_hash):
        user.password_hash = hasher.hash(password)
    return True


def normalize_email(email: str) -> str:
    return email.strip().lower()


def _holders(email: str):
    """Accounts holding ``email``: the verified owner first, then unverified ones, oldest first."""
    return (
        select(User)
        .where(User.email == normalize_email(email))
        .order_by(User.email_verified_at.is_(None), User.created_at)
    )


def find_user_by_email(email: str) -> User | None:
    """The account an address names: its verified owner, else the oldest that claims it."""
    return db.session.scalars(_holders(email).limit(1)).first()


def verified_owner(email: str) -> User | None:
    return db.session.scalar(
        select(User).where(User.email == normalize_email(email), User.email_verified_at.is_not(None))
    )


def is_superadmin(user: User) -> bool:
    """Granted (CLI or another superadmin), or the configured address once it is proven."""
    configured = current_app.config.get("SUPERADMIN_EMAIL")
    return user.superadmin or (
        configured is not None and user.email == configured and user.email_verified_at is not None
    )


def create_user(
    *,
    email: str,
    password: str,
    name: str,
    papel: str | None = None,
    loja_id: uuid.UUID | None = None,
    superadmin: bool = False,
    verified: bool = True,
) -> User:
    """An account. Operators (CLI, demo) vouch for the address (``verified``); a public
    registration does not, and may then share an unproven address with other accounts."""
    email = normalize_email(email)
    if verified and verified_owner(email) is not None:
        raise ConflictError("A user with this email already exists", reason="email_registered", field="email")
    user = User(
        email=email,
        name=name.strip(),
        password_hash=hash_password(password),
        papel=papel,
        loja_id=loja_id,
        superadmin=superadmin,
        email_verified_at=utcnow() if verified else None,
    )
    db.session.add(user)
    db.session.flush()
    return user


# Unproven accounts that may share one address and are each tried at sign-in.
MAX_CANDIDATES = 3
# Checks a password sign-in must pass too, registered by the services that impose them
# (single sign-on enforcement): each raises a ``DomainError`` to refuse.
_password_guards: list[Callable[[User], None]] = []


def password_sign_in_guard(check: Callable[[User], None]) -> Callable[[User], None]:
    _password_guards.append(check)
    return check


def authenticate(email: str, password: str) -> User:
    """The user with these credentials, or an error that does not say which part was wrong.

    A verified owner is the only account that signs in with its address; until an
    address is proven, each account that registered it signs in with its own password.
    """
    candidates = list(db.session.scalars(_holders(email).limit(MAX_CANDIDATES)))
    if candidates and candidates[0].email_verified_at is not None:
        candidates = candidates[:1]
    user = next((c for c in candidates if verify_password(c, password)), None)
    if user is None:
        if not candidates:
            verify_password(None, password)
        raise AuthenticationError(
            "Invalid email or password", code="INVALID_CREDENTIALS", reason="invalid_credentials"
        )
    if user.banned:
        raise ForbiddenError("This account is banned", code="USER_BANNED", reason="account_banned")
    for guard in _password_guards:
        guard(user)
    user.last_seen_at = utcnow()
    return user


def _refresh_lifetime(remember: bool) -> timedelta:
    cfg = current_app.config
    return cfg["JWT_REFRESH_TOKEN_EXPIRES"] if remember else cfg["JWT_REFRESH_TOKEN_SHORT_EXPIRES"]


def issue_access_token(user: User) -> str:
    # "ts" carries the issue time with sub-second precision (the standard "iat"
    # has whole seconds), so ending sessions does not spare a token issued in
    # the same second, nor reject one issued just after.
    return create_access_token(identity=str(user.id), additional_claims={"ts": time.time()})


def _expiry(claims: dict) -> datetime:
    return datetime.fromtimestamp(claims["exp"], tz=UTC)


def issue_refresh_token(
    user: User, *, remember: bool = True, family_id: uuid.UUID | None = None, access_token: str | None = None
) -> str:
    """A refresh token, recorded with the access token issued beside it (logout ends both)."""
    lifetime = _refresh_lifetime(remember)
    family_id = family_id or uuid.uuid4()
    token = create_refresh_token(
        identity=str(user.id), expires_delta=lifetime, additional_claims={"fam": str(family_id)}
    )
    claims = decode_token(token)
    access_claims = decode_token(access_token) if access_token else None
    db.session.add(
        RefreshToken(
            jti=claims["jti"],
            user_id=user.id,
            family_id=family_id,
            remember=remember,
            expires_at=_expiry(claims),
            access_jti=access_claims["jti"] if access_claims else None,
            access_expires_at=_expiry(access_claims) if access_claims else None,
        )
    )
    db.session.flush()
    return token


def issue_tokens(user: User, *, remember: bool = True, family_id: uuid.UUID | None = None) -> tuple[str, str]:
    """A new (access, refresh) pair."""
    access = issue_access_token(user)
    return access, issue_refresh_token(user, remember=remember, family_id=family_id, access_token=access)


def login(email: str, password: str, *, remember: bool = True) -> tuple[User, str, str]:
    user = authenticate(email, password)
    return user, *issue_tokens(user, remember=remember)


def _load_refresh(token: str) -> tuple[RefreshToken, dict]:
    try:
        claims = decode_token(token)
    except ExpiredSignatureError:
        raise AuthenticationError(
            "Refresh token expired, log in again", code="TOKEN_EXPIRED", reason="refresh_token_expired"
        ) from None
    except (InvalidTokenError, ValueError, TypeError, KeyError):
        raise AuthenticationError(
            "Invalid refresh token", code="INVALID_TOKEN", reason="invalid_refresh_token"
        ) from None
    if claims.get("type") != "refresh":
        raise AuthenticationError(
            "Invalid refresh token", code="INVALID_TOKEN", reason="invalid_refresh_token"
        )
    # Lock the row so two refreshes of one token cannot both rotate it.
    record = db.session.scalar(
        select(RefreshToken).where(RefreshToken.jti == claims["jti"]).with_for_update()
    )
    if record is None:
        raise AuthenticationError(
            "Invalid refresh token", code="INVALID_TOKEN", reason="invalid_refresh_token"
        )
    return record, claims


def revoke_family(family_id: uuid.UUID) -> None:
    db.session.execute(
        update(RefreshToken)
        .where(RefreshToken.family_id == family_id, RefreshToken.revoked_at.is_(None))
        .values(revoked_at=utcnow())
    )


def revoke_all_for_user(user_id: uuid.UUID) -> None:
    db.session.execute(
        update(RefreshToken)
        .where(RefreshToken.user_id == user_id, RefreshToken.revoked_at.is_(None))
        .values(revoked_at=utcnow())
    )


def end_all_sessions(user: User) -> None:
    """Revoke every refresh token and refuse every access token issued until now."""
    revoke_all_for_user(user.id)
    user.sessions_valid_after = utcnow()


class TokenReuseError(AuthenticationError):
    """A revoked refresh token came back: the family was revoked and this must be committed."""


def rotate_refresh(token: str) -> tuple[User, str, str]:
    """Exchange a live refresh token for a new pair; the old one dies."""
    record, _claims = _load_refresh(token)
    user = db.session.get(User, record.user_id)
    if user is None:
        raise AuthenticationError(
            "Invalid refresh token", code="INVALID_TOKEN", reason="invalid_refresh_token"
        )
    # A ban revokes every refresh token: say so rather than "already used".
    if user.banned:
        raise ForbiddenError("This account is banned", code="USER_BANNED", reason="account_banned")
    if record.revoked_at is not None:
        revoke_family(record.family_id)
        raise TokenReuseError(
            "Refresh token was already used", code="INVALID_TOKEN", reason="refresh_token_reused"
        )
    record.revoked_at = utcnow()
    user.last_seen_at = utcnow()
    access, new_refresh = issue_tokens(user, remember=record.remember, family_id=record.family_id)
    return user, access, new_refresh


def logout(token: str | None, access_claims: dict | None = None) -> None:
    """End a session: the refresh token's whole family and every access token issued in it,
    plus the access token presented with the request. Unknown or expired tokens are
    ignored: logout always succeeds."""
    if access_claims is not None and access_claims.get("type") == "access":
        token_denylist.deny(access_claims["jti"], _expiry(access_claims))
    if token is None:
        return
    try:
        record, _ = _load_refresh(token)
    except AuthenticationError:
        return
    now = utcnow()
    family = db.session.scalars(
        select(RefreshToken).where(RefreshToken.family_id == record.family_id).with_for_update()
    )
    for member in family:
        if member.revoked_at is None:
            member.revoked_at = now
        if member.access_jti and member.access_expires_at and member.access_expires_at > now:
            token_denylist.deny(member.access_jti, member.access_expires_at)
    db.session.flush()


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def password_reset_link(user: User) -> str:
    """A new single-use link that sets ``user``'s password (and proves its address)."""
    token = secrets.token_urlsafe(32)
    db.session.add(
        PasswordResetToken(
            token_hash=_digest(token),
            user_id=user.id,
            expires_at=utcnow() + current_app.config["PASSWORD_RESET_TTL"],
        )
    )
    db.session.flush()
    return f"{current_app.config['PUBLIC_URL']}/reset-password?token={token}"


def request_password_reset(email: str) -> None:
    """E-mail a single-use reset link if the account exists; silent either way."""
    user = find_user_by_email(email)
    if user is None or user.banned:
        return
    link = password_reset_link(user)
    queue_mail(
        user.email,
        "Giro: redefinição de senha",
        f"Olá, {user.name}.\n\nPara criar uma nova senha, abra o link abaixo (válido por 1 hora):\n"
        f"{link}\n\nSe você não pediu a redefinição, ignore este e-mail.\n",
    )


def reset_password(token: str, new_password: str) -> User:
    """Set a new password from an e-mailed link; following it also proves the address."""
    record = db.session.scalar(
        select(PasswordResetToken).where(PasswordResetToken.token_hash == _digest(token)).with_for_update()
    )
    if record is None or record.used_at is not None or record.expires_at <= utcnow():
        raise DomainError(
            "Token de redefinição inválido ou expirado", "INVALID_TOKEN", 400, reason="invalid_reset_token"
        )
    user = db.session.get(User, record.user_id)
    record.used_at = utcnow()
    user.password_hash = hash_password(new_password)
    if user.email_verified_at is None and verified_owner(user.email) is None:
        user.email_verified_at = utcnow()
    # A new password ends every open session.
    end_all_sessions(user)
    db.session.flush()
    return user
