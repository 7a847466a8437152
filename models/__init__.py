"""Every model, imported so that Alembic and the app see one metadata."""

from models.auth import PasswordResetToken, RefreshToken, User
from models.stock import Campanha, Estoque, Loja, Produto, RegrasRemanejamento, Venda
from models.remanejamento import AcaoRecomendacao, Lote, Recomendacao
from models.tracker import (
    Invitation,
    Issue,
    IssueLabel,
    IssueRelation,
    Label,
    Membership,
    Organization,
    Plan,
    Project,
    Status,
    Workspace,
)

__all__ = [
    "AcaoRecomendacao",
    "Lote",
    "Recomendacao",
    "Campanha",
    "Estoque",
    "Loja",
    "PasswordResetToken",
    "Produto",
    "RefreshToken",
    "RegrasRemanejamento",
    "User",
    "Venda",
    "Invitation",
    "Issue",
    "IssueLabel",
    "IssueRelation",
    "Label",
    "Membership",
    "Organization",
    "Plan",
    "Project",
    "Status",
    "Workspace",
]
