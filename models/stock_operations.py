"""From batch to shelf: which tracker issue holds which part of a batch's approved work."""

from __future__ import annotations

import uuid

from sqlalchemy import ForeignKey, String, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from extensions import db
from models.base import CreatedAt, UUIDPrimaryKey


class OperacaoIssue(UUIDPrimaryKey, CreatedAt, db.Model):
    """The issue of one origin's work in one batch (``destino_id`` equal to ``origem_id``), or
    the sub-issue of one destination's part of it. Unique: the same work never gets two issues."""

    __tablename__ = "operacao_issues"
    __table_args__ = (
        UniqueConstraint("lote_id", "origem_id", "destino_id", name="uq_operacao_issues_lote_id"),
    )

    lote_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("lotes.id", ondelete="CASCADE"))
    origem_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("lojas.id", ondelete="CASCADE"))
    destino_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("lojas.id", ondelete="CASCADE"))
    issue_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("issues.id", ondelete="CASCADE"), index=True)


PROBLEMAS = ("avariada", "faltando", "tamanho_errado", "outro")


class ProblemaTransferencia(UUIDPrimaryKey, CreatedAt, db.Model):
    """A problem with a transfer (damaged, missing units, wrong size, other), opened as an issue
    of the operations project."""

    __tablename__ = "problemas_transferencia"

    recomendacao_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("recomendacoes.id", ondelete="CASCADE"), index=True
    )
    issue_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("issues.id", ondelete="CASCADE"), index=True)
    tipo: Mapped[str] = mapped_column(String(20))
    relatado_por_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
