"""Every model, imported so that Alembic and the app see one metadata."""

from models.auth import PasswordResetToken, RefreshToken, User
from models.jobs import Job
from models.stock import Campanha, Estoque, Loja, Produto, RegrasRemanejamento, Venda
from models.stock_batches import AcaoRecomendacao, Lote, Recomendacao
from models.stock_notifications import PushSubscription, StockNotification
from models.stock_operations import OperacaoIssue, ProblemaTransferencia
from models.tracker import (
    Invitation,
    Issue,
    IssueCount,
    IssueLabel,
    IssueLabelCount,
    IssueRelation,
    IssueTitleTerm,
    Label,
    Membership,
    Organization,
    Plan,
    Project,
    Status,
    TitleTerm,
    Workspace,
)
from models.tracker_attachments import Attachment
from models.tracker_audit import AuditEvent
from models.tracker_collab import (
    Comment,
    CommentMention,
    IssueActivity,
    IssueWatcher,
    Notification,
    NotificationEmail,
)
from models.tracker_fields import CustomField, CustomFieldValue
from models.tracker_search import IssueVector, SearchModel, SearchPending
from models.tracker_sso import SsoConnection, SsoDomain, SsoIdentity, SsoLoginState
from models.tracker_webhooks import Webhook, WebhookDelivery

__all__ = [
    "AcaoRecomendacao",
    "Attachment",
    "AuditEvent",
    "Campanha",
    "Comment",
    "CommentMention",
    "CustomField",
    "CustomFieldValue",
    "Estoque",
    "Invitation",
    "Issue",
    "IssueActivity",
    "IssueCount",
    "IssueLabel",
    "IssueLabelCount",
    "IssueRelation",
    "IssueTitleTerm",
    "IssueVector",
    "IssueWatcher",
    "Job",
    "Label",
    "Loja",
    "Lote",
    "Membership",
    "Notification",
    "NotificationEmail",
    "OperacaoIssue",
    "Organization",
    "PasswordResetToken",
    "Plan",
    "ProblemaTransferencia",
    "Produto",
    "Project",
    "PushSubscription",
    "Recomendacao",
    "RefreshToken",
    "RegrasRemanejamento",
    "SearchModel",
    "SearchPending",
    "SsoConnection",
    "SsoDomain",
    "SsoIdentity",
    "SsoLoginState",
    "Status",
    "StockNotification",
    "TitleTerm",
    "User",
    "Venda",
    "Webhook",
    "WebhookDelivery",
    "Workspace",
]
