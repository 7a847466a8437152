"""Profile changes of the stock dialect, with the role rules documented in the README."""

from __future__ import annotations

from extensions import db
from models.auth import PAPEL_RANK, User
from models.stock import Loja
from services.errors import FieldError, ForbiddenError, ValidationFailed
from services.identity import request_email_change


def update_profile(user: User, changes: dict) -> User:
    """Apply a PATCH /users/me body. ``None`` or absent means "leave as is"."""
    nome = changes.get("nome")
    email = changes.get("email")
    papel = changes.get("papel")
    loja_id = changes.get("lojaId")

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
        request_email_change(user, email, changes.get("senhaAtual"))
    if nome is not None:
        user.name = nome.strip()
    if papel is not None:
        user.papel = papel
    if loja_id is not None:
        user.loja_id = loja_id
    db.session.flush()
    return user


def update_preferences(user: User, prefs: dict) -> User:
    user.notif_email = prefs["notifEmail"]
    user.notif_push = prefs["notifPush"]
    user.digest_semanal = prefs["digestSemanal"]
    db.session.flush()
    return user
