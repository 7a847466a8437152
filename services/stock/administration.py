"""The stock admin's pages: who has stock access (list, invite by e-mail, change, take
away) and the stores (block, unblock, CD flag). Every function checks its actor is a stock
``admin``; grants themselves go through ``access.grant``, the same rule as the CLI."""

from __future__ import annotations

import secrets
import uuid

from flask import current_app
from sqlalchemy import func, select

from extensions import db
from models.auth import User
from models.stock import Loja
from services import auth as auth_service
from services.errors import FieldError, ForbiddenError, NotFoundError, ValidationFailed
from services.mail import send_mail
from services.stock import access
from services.text import contains_any

# Accounts shown at once: those with access, or those a search finds.
LISTED = 200


def list_accounts(actor: User, q: str | None = None) -> list[User]:
    """Accounts with a stock role, by role then name; with ``q``, any account whose name or
    e-mail contains it (to grant access to an existing account)."""
    access.ensure_stock_access(actor, "admin")
    stmt = select(User).order_by(User.papel.is_(None), User.papel, func.lower(User.name), User.email)
    found = contains_any(q, User.name, User.email)
    stmt = stmt.where(User.papel.is_not(None)) if found is None else stmt.where(found)
    return list(db.session.scalars(stmt.limit(LISTED)))


def get_account(actor: User, user_id: uuid.UUID) -> User:
    access.ensure_stock_access(actor, "admin")
    user = db.session.get(User, user_id)
    if user is None:
        raise NotFoundError("Conta não encontrada", reason="account_not_found")
    return user


def change_access(actor: User, user_id: uuid.UUID, papel: str | None, loja_id: uuid.UUID | None) -> User:
    """Give, change or (``papel=None``) take away an account's stock role. An admin does not
    take its own admin role away here: another admin (or the CLI) does, so the installation
    never loses its last admin by a slip."""
    target = get_account(actor, user_id)
    if target.id == actor.id and papel != "admin":
        raise ForbiddenError("Um admin não remove o próprio papel de admin", reason="own_admin_role")
    return access.grant(actor, target, papel, loja_id)


def invite(actor: User, email: str, nome: str, papel: str, loja_id: uuid.UUID | None) -> tuple[User, bool]:
    """Stock access for an e-mail address. The account that proved the address gets the
    role at once and is told; otherwise a new account is made with the role and the address
    gets a link to choose its password (following it proves the address). Returns the
    account and whether it was made now."""
    access.ensure_stock_access(actor, "admin")
    email = auth_service.normalize_email(email)
    if "@" not in email:
        message = "E-mail inválido"
        raise ValidationFailed([FieldError(("body", "email"), message, reason="invalid_email")], message)
    owner = auth_service.verified_owner(email)
    if owner is not None:
        access.grant(actor, owner, papel, loja_id)
        send_mail(
            owner.email,
            "Giro: acesso ao remanejamento",
            f"Olá, {owner.name}.\n\n{actor.name} deu a você acesso ao remanejamento do Giro.\n"
            f"Entre em {current_app.config['PUBLIC_URL']}/login com a sua conta de sempre.\n",
        )
        return owner, False
    user = auth_service.create_user(
        email=email,
        # Nobody knows this password: the invited person chooses one through the e-mailed link.
        password=secrets.token_urlsafe(32),
        name=nome.strip() or email.split("@")[0],
        verified=False,
    )
    access.grant(actor, user, papel, loja_id)
    link = auth_service.password_reset_link(user)
    send_mail(
        user.email,
        "Giro: convite para o remanejamento",
        f"Olá, {user.name}.\n\n{actor.name} convidou você para o remanejamento do Giro.\n"
        f"Para criar a sua senha, abra o link abaixo (válido por 1 hora; depois dele, use "
        f"“Esqueci a senha” na página de entrada):\n{link}\n",
    )
    return user, True


def list_lojas(actor: User, q: str | None = None) -> list[Loja]:
    access.ensure_stock_access(actor, "admin")
    stmt = select(Loja).order_by(Loja.is_cd.desc(), func.lower(Loja.nome))
    found = contains_any(q, Loja.nome, Loja.cidade, Loja.codigo)
    return list(db.session.scalars(stmt if found is None else stmt.where(found)))


def update_loja(actor: User, loja_id: uuid.UUID, changes: dict) -> Loja:
    """Block or unblock a store (``bloqueada``: never an origin or a destination) or mark it a
    CD (``isCd``). Absent keys stay as they are."""
    access.ensure_stock_access(actor, "admin")
    loja = db.session.get(Loja, loja_id)
    if loja is None:
        raise NotFoundError("Loja não encontrada", reason="loja_not_found")
    if "bloqueada" in changes:
        loja.bloqueada = bool(changes["bloqueada"])
    if "is_cd" in changes:
        loja.is_cd = bool(changes["is_cd"])
    db.session.flush()
    return loja
