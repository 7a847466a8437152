"""Proving an address: the link a new account is sent, and changing one's e-mail.

An address grants things (the configured superadmin, invitations addressed to
it), so it counts only once its owner followed a single-use link sent to it.
A new address takes effect when its link is followed; until then the account
keeps the old one. Links last ``EMAIL_VERIFICATION_TTL``; only the token's
SHA-256 digest is stored.
"""

from __future__ import annotations

import hashlib
import secrets

from flask import current_app
from sqlalchemy import select

from extensions import db
from models.auth import EmailVerification, User
from models.base import utcnow
from services import auth as auth_service
from services import unique
from services.errors import ConflictError, DomainError, ForbiddenError
from services.mail import queue_mail


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def send_verification(user: User, email: str | None = None) -> None:
    """E-mail ``user`` a link proving ``email`` (their current address by default)."""
    email = auth_service.normalize_email(email or user.email)
    token = secrets.token_urlsafe(32)
    db.session.add(
        EmailVerification(
            token_hash=_digest(token),
            user_id=user.id,
            email=email,
            expires_at=utcnow() + current_app.config["EMAIL_VERIFICATION_TTL"],
        )
    )
    db.session.flush()
    link = f"{current_app.config['PUBLIC_URL']}/verify-email?token={token}"
    change = email != user.email
    queue_mail(
        email,
        "Giro: confirme seu e-mail",
        f"Olá, {user.name}.\n\n"
        + ("Para usar este endereço na sua conta do Giro" if change else "Para confirmar seu e-mail no Giro")
        + f", abra o link abaixo (válido por 48 horas):\n{link}\n\n"
        "Se não foi você, ignore este e-mail.\n",
    )


def resend_verification(user: User) -> None:
    """Another link for an unproven address (or a pending change); nothing when all is proven."""
    if user.pending_email:
        send_verification(user, user.pending_email)
    elif user.email_verified_at is None:
        send_verification(user)


def registration_attempt_on_known_address(owner: User) -> None:
    """Someone registered an address that already has an owner: tell the owner, not the caller."""
    queue_mail(
        owner.email,
        "Giro: tentativa de cadastro com seu e-mail",
        f"Olá, {owner.name}.\n\nAlguém tentou criar uma conta no Giro com este endereço, que já é seu.\n"
        f"Se foi você, entre com sua senha ou peça uma nova em {current_app.config['PUBLIC_URL']}"
        "/forgot-password.\nSe não foi você, nada muda na sua conta.\n",
    )


def verify_email(token: str) -> User:
    """Follow a link: the address becomes the account's, proven. Single use."""
    now = utcnow()
    record = db.session.scalar(
        select(EmailVerification).where(EmailVerification.token_hash == _digest(token)).with_for_update()
    )
    if record is None or record.used_at is not None or record.expires_at <= now:
        raise DomainError(
            "Link de confirmação inválido ou expirado",
            "INVALID_TOKEN",
            400,
            reason="invalid_verification_link",
        )
    user = db.session.get(User, record.user_id)
    record.used_at = now
    owner = auth_service.verified_owner(record.email)
    if owner is not None and owner.id != user.id:
        raise ConflictError("Este e-mail já pertence a outra conta", reason="email_taken", field="email")
    if record.email != user.email and record.email != user.pending_email:
        # A later change replaced the address this link was sent for.
        raise DomainError(
            "Link de confirmação inválido ou expirado",
            "INVALID_TOKEN",
            400,
            reason="invalid_verification_link",
        )
    # Another account may prove the same address at the same moment: one wins, one gets 409.
    with unique.or_conflict():
        user.email = record.email
        user.email_verified_at = now
        user.pending_email = None
    return user


def request_email_change(user: User, new_email: str, current_password: str | None) -> None:
    """Ask to move the account to ``new_email``: it needs the current password, and takes
    effect only when the link sent to the new address is followed."""
    new_email = auth_service.normalize_email(new_email)
    if new_email == user.email:
        user.pending_email = None
        return
    if not current_password or not auth_service.verify_password(user, current_password):
        raise ForbiddenError(
            "Senha atual incorreta: ela é necessária para trocar o e-mail", reason="wrong_current_password"
        )
    # Whether another account owns the address is told only to whoever opens the link.
    user.pending_email = new_email
    send_verification(user, new_email)
    queue_mail(
        user.email,
        "Giro: pedido de troca de e-mail",
        f"Olá, {user.name}.\n\nFoi pedido que sua conta do Giro passe a usar {new_email}. A troca só vale "
        "quando o link enviado ao novo endereço for aberto. Se não foi você, troque sua senha.\n",
    )
