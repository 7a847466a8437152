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
from datetime import datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from flask import current_app
from flask_jwt_extended import create_access_token, create_refresh_token, decode_token
from jwt import ExpiredSignatureError, InvalidTokenError
from sqlalchemy import func, select, update

from extensions import db
from models.auth import PasswordResetToken, RefreshToken, User
from models.base import utcnow
from services.errors import AuthenticationError, ConflictError, DomainError, ForbiddenError
from services.mail import send_mail

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


def find_user_by_email(email: str) -> User | None:
    return db.session.scalar(select(User).where(User.email == normalize_email(email)))


def is_superadmin(user: User) -> bool:
    configured = current_app.config.get("SUPERADMIN_EMAIL")
    return user.superadmin or (configured is not None and user.email == configured)


def create_user(
    *,
    email: str,
    password: str,
    name: str,
    papel: str = "visualizador",
    loja_id: uuid.UUID | None = None,
    superadmin: bool = False,
) -> User:
    email = normalize_email(email)
    if find_user_by_email(email) is not None:
        raise ConflictError("A user with this email already exists", field="email")
    user = User(
        email=email,
        name=name.strip(),
        password_hash=hash_password(password),
        papel=papel,
        loja_id=loja_id,
        superadmin=superadmin,
    )
    db.session.add(user)
    db.session.flush()
    return user


def authenticate(email: str, password: str) -> User:
    """The user with these credentials, or an error that does not say which part was wrong."""
    user = find_user_by_email(email)
    if not verify_password(user, password):
        raise AuthenticationError("Invalid email or password", code="INVALID_CREDENTIALS")
    if user.banned:
        raise ForbiddenError("This account is banned", code="USER_BANNED")
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


def issue_refresh_token(user: User, *, remember: bool = True, family_id: uuid.UUID | None = None) -> str:
    lifetime = _refresh_lifetime(remember)
    family_id = family_id or uuid.uuid4()
    token = create_refresh_token(
        identity=str(user.id), expires_delta=lifetime, additional_claims={"fam": str(family_id)}
    )
    claims = decode_token(token)
    db.session.add(
        RefreshToken(
            jti=claims["jti"],
            user_id=user.id,
            family_id=family_id,
            remember=remember,
            expires_at=datetime.fromtimestamp(claims["exp"], tz=utcnow().tzinfo),
        )
    )
    db.session.flush()
    return token


def login(email: str, password: str, *, remember: bool = True) -> tuple[User, str, str]:
    user = authenticate(email, password)
    return user, issue_access_token(user), issue_refresh_token(user, remember=remember)


def _load_refresh(token: str) -> tuple[RefreshToken, dict]:
    try:
        claims = decode_token(token)
    except ExpiredSignatureError:
        raise AuthenticationError("Refresh token expired, log in again", code="TOKEN_EXPIRED") from None
    except (InvalidTokenError, ValueError, TypeError, KeyError):
        raise AuthenticationError("Invalid refresh token", code="INVALID_TOKEN") from None
    if claims.get("type") != "refresh":
        raise AuthenticationError("Invalid refresh token", code="INVALID_TOKEN")
    # Lock the row so two refreshes of one token cannot both rotate it.
    record = db.session.scalar(
        select(RefreshToken).where(RefreshToken.jti == claims["jti"]).with_for_update()
    )
    if record is None:
        raise AuthenticationError("Invalid refresh token", code="INVALID_TOKEN")
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
    if record.revoked_at is not None:
        revoke_family(record.family_id)
        raise TokenReuseError("Refresh token was already used", code="INVALID_TOKEN")
    user = db.session.get(User, record.user_id)
    if user is None:
        raise AuthenticationError("Invalid refresh token", code="INVALID_TOKEN")
    if user.banned:
        raise ForbiddenError("This account is banned", code="USER_BANNED")
    record.revoked_at = utcnow()
    user.last_seen_at = utcnow()
    new_refresh = issue_refresh_token(user, remember=record.remember, family_id=record.family_id)
    return user, issue_access_token(user), new_refresh


def logout(token: str) -> None:
    """Revoke a refresh token. Unknown or expired tokens are ignored: logout always succeeds."""
    try:
        record, _ = _load_refresh(token)
    except AuthenticationError:
        return
    if record.revoked_at is None:
        record.revoked_at = utcnow()
    db.session.flush()


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def request_password_reset(email: str) -> None:
    """E-mail a single-use reset link if the account exists; silent either way."""
    user = find_user_by_email(email)
    if user is None or user.banned:
        return
    token = secrets.token_urlsafe(32)
    db.session.add(
        PasswordResetToken(
            token_hash=_digest(token),
            user_id=user.id,
            expires_at=utcnow() + current_app.config["PASSWORD_RESET_TTL"],
        )
    )
    db.session.flush()
    link = f"{current_app.config['PUBLIC_URL']}/reset-password?token={token}"
    send_mail(
        user.email,
        "Giro: redefinição de senha",
        f"Olá, {user.name}.\n\nPara criar uma nova senha, abra o link abaixo (válido por 1 hora):\n"
        f"{link}\n\nSe você não pediu a redefinição, ignore este e-mail.\n",
    )


def reset_password(token: str, new_password: str) -> User:
    record = db.session.scalar(
        select(PasswordResetToken).where(PasswordResetToken.token_hash == _digest(token)).with_for_update()
    )
    if record is None or record.used_at is not None or record.expires_at <= utcnow():
        raise DomainError("Token de redefinição inválido ou expirado", "INVALID_TOKEN", 400)
    user = db.session.get(User, record.user_id)
    record.used_at = utcnow()
    user.password_hash = hash_password(new_password)
    # A new password ends every open session.
    end_all_sessions(user)
    db.session.flush()
    return user


def count_users() -> int:
    return db.session.scalar(select(func.count()).select_from(User)) or 0
