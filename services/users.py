"""Profile changes of the stock dialect, with the role rules documented in docs/security.md."""

from __future__ import annotations

import uuid

from extensions import db
from models.auth import PAPEL_RANK, User
from models.stock import Loja
from services.errors import FieldError, ForbiddenError, ValidationFailed
from services.identity import request_email_change


def update_profile(
    user: User,
    *,
    nome: str | None = None,
    email: str | None = None,
    papel: str | None = None,
    loja_id: uuid.UUID | None = None,
    senha_atual: str | None = None,
) -> User:
    """Change one's own profile (``PATCH /users/me``); ``None`` leaves a field as it is.
    A new ``email`` needs ``senha_atual`` and takes effect once confirmed."""
    if papel is not None and PAPEL_RANK[papel] > PAPEL_RANK[user.papel]:
        raise ForbiddenError("Não é permitido elevar o próprio papel", reason="self_promotion")
    if loja_id is not None and loja_id != user.loja_id:
        if user.papel != "admin":
            raise ForbiddenError("Só um admin pode trocar a própria loja", reason="own_store_admin_only")
        if db.session.get(Loja, loja_id) is None:
            raise ValidationFailed(
                [
                    FieldError(
                        ("body", "lojaId"), "Loja não encontrada", "value_error", reason="loja_not_found"
                    )
                ]
            )

    if email is not None:
        request_email_change(user, email, senha_atual)
    if nome is not None:
        user.name = nome.strip()
    if papel is not None:
        user.papel = papel
    if loja_id is not None:
        user.loja_id = loja_id
    db.session.flush()
    return user


KEEP = object()
"""Default of ``idioma``: leave the account's language as it is."""


def update_preferences(
    user: User,
    *,
    notif_email: bool,
    notif_push: bool,
    digest_semanal: bool,
    idioma: str | object | None = KEEP,
) -> User:
    user.notif_email = notif_email
    user.notif_push = notif_push
    user.digest_semanal = digest_semanal
    if idioma is not KEEP:
        user.idioma = idioma
    db.session.flush()
    return user
