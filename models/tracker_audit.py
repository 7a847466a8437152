"""The organization's audit log: administrative events, appended in the transaction of the change.

Rows are never changed or removed by the application (no service updates or
deletes them); they go only with their organization (``ON DELETE CASCADE``).
The target is kept as text (type, id, name at the time) so an entry still
reads right after the project, status or person it names is gone.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from extensions import db
from models.base import UTCDateTime, utcnow
from models.tracker_collab import SequenceId

# What the log records, as ``<target>.<what happened>``.
AUDIT_ACTIONS = (
    "organization.created",
    "organization.renamed",
    "organization.suspended",
    "organization.reactivated",
    "plan.changed",
    "member.invited",
    "invitation.revoked",
    "member.joined",
    "member.role_changed",
    "member.removed",
    "member.left",
    "workspace.created",
    "workspace.updated",
    "project.created",
    "project.updated",
    "project.deleted",
    "status.created",
    "status.updated",
    "status.moved",
    "status.deleted",
    "label.created",
    "label.deleted",
    "audit_log.exported",
    "sso.configured",
    "sso.updated",
    "sso.deleted",
    "sso.domain_verified",
    "sso.disabled_by_operator",
    "sso.sessions_ended",
    "sso.break_glass",
    "sso.linked",
    "sso.account_created",
    "sso.signed_in",
    "sso.refused",
)


class AuditEvent(db.Model):
    __tablename__ = "audit_log"
    __table_args__ = (
        # The log reads an organization's events newest first; actor and action filter within it.
        Index("ix_audit_log_organization_id_created_at", "organization_id", "created_at", "id"),
        Index("ix_audit_log_organization_id_actor_id", "organization_id", "actor_id", "created_at"),
        Index("ix_audit_log_organization_id_action", "organization_id", "action", "created_at"),
        Index("ix_audit_log_actor_id", "actor_id"),
    )

    id: Mapped[int] = mapped_column(SequenceId, primary_key=True, autoincrement=True)
    organization_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.id", ondelete="CASCADE")
    )
    actor_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    # The actor's name when it happened: the entry keeps it after the account goes.
    actor_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    action: Mapped[str] = mapped_column(String(40))
    target_type: Mapped[str] = mapped_column(String(30))
    target_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    target_name: Mapped[str | None] = mapped_column(String(320), nullable=True)
    details: Mapped[Any] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    @property
    def actor(self) -> dict | None:
        """Who did it as the log shows them: the id (None once the account is gone) and name."""
        if self.actor_id is None and self.actor_name is None:
            return None
        return {"id": self.actor_id, "name": self.actor_name}

    @property
    def target(self) -> dict:
        return {"type": self.target_type, "id": self.target_id, "name": self.target_name}
