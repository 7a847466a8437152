"""Who may use remanejamento: a role granted by a stock admin, never implied by an account.

The tracker is open to sign-up; remanejamento is one retailer's private
installation. An account without a ``papel`` reaches none of its data.
"""

from __future__ import annotations

import uuid

from extensions import db
from models.auth import PAPEIS, User
from models.stock import Loja
from services.errors import FieldError, ForbiddenError, NotFoundError, ValidationFailed

NO_ACCESS = (
    "Esta conta não tem acesso ao remanejamento. Peça a um administrador de estoque que conceda um papel."
)


def has_stock_access(user: User) -> bool:
    return user.papel is not None


def ensure_stock_access(user: User, *papeis: str) -> None:
    """Refuse an account without a stock role, or (with ``papeis``) without one of those."""
    if not has_stock_access(user):
        raise ForbiddenError(NO_ACCESS, code="NO_STOCK_ACCESS", reason="no_stock_access")
    if papeis and user.papel not in papeis:
        raise ForbiddenError("Sem permissão para esta ação", reason="role_not_allowed")


def grant(actor: User | None, target: User, papel: str | None, loja_id: uuid.UUID | None = None) -> User:
    """Give, change or (``papel=None``) take away ``target``'s stock role.

    ``actor`` is a stock admin, or None for the operator's CLI. A ``gerente_loja``
    needs its store.
    """
    if actor is not None:
        ensure_stock_access(actor, "admin")
    if papel is not None and papel not in PAPEIS:
        message = f"Papel inválido: {papel}"
        raise ValidationFailed([FieldError(("body", "papel"), message, reason="unknown_papel")], message)
    if papel == "gerente_loja" and loja_id is None:
        message = "Um gerente_loja precisa de uma loja"
        raise ValidationFailed(
            [FieldError(("body", "lojaId"), message, reason="gerente_without_loja")], message
        )
    if loja_id is not None and db.session.get(Loja, loja_id) is None:
        raise NotFoundError("Loja não encontrada", reason="loja_not_found")
    target.papel = papel
    target.loja_id = loja_id if papel is not None else None
    db.session.flush()
    return target
