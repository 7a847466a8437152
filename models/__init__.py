"""Every model, imported so that Alembic and the app see one metadata."""

from models.auth import PasswordResetToken, RefreshToken, User
from models.stock import Campanha, Estoque, Loja, Produto, RegrasRemanejamento, Venda

__all__ = [
    "Campanha",
    "Estoque",
    "Loja",
    "PasswordResetToken",
    "Produto",
    "RefreshToken",
    "RegrasRemanejamento",
    "User",
    "Venda",
]
