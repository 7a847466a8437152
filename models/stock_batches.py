"""Weekly batches of transfer recommendations and the log of every decision on them."""

from __future__ import annotations

import uuid
from datetime import date, datetime

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Date,
    Float,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    Uuid,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from extensions import db
from models.base import CreatedAt, UTCDateTime, UUIDPrimaryKey, utcnow

PRIORIDADES = ("alta", "media", "baixa")
PRIORIDADE_RANK = {p: i for i, p in enumerate(PRIORIDADES)}
STATUS_RECOMENDACAO = ("pendente", "aprovada", "executada", "recusada")
TIPOS_ORIGEM = ("cd", "loja")
# Why a planner refuses: the stock figures were wrong, the store refuses, the cost, another reason.
MOTIVOS_RECUSA = ("estoque_errado", "loja_recusa", "custo", "outro")
ACOES = ("aprovar", "recusar", "executar", "vetar", "restaurar", "receber")
# Approved or executed and not received: stock in transit (services.stock.transit).
EM_TRANSITO = ("aprovada", "executada")


class Lote(UUIDPrimaryKey, CreatedAt, db.Model):
    """One ISO week's batch. Generating again for the week refreshes it in place."""

    __tablename__ = "lotes"

    semana: Mapped[str] = mapped_column(String(10), unique=True)  # "2026-W47"
    inicio: Mapped[date] = mapped_column(Date)  # Monday of the week
    fim: Mapped[date] = mapped_column(Date)  # Sunday of the week
    # Business date of the latest generation (the engine's reference day).
    data: Mapped[date] = mapped_column(Date)
    gerado_em: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    geracoes: Mapped[int] = mapped_column(Integer, default=1)
    criado_por_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    # Stock-out risk of the network on ``data``, from the arrays the engine read
    # (``services.stock.metrics.risk_figures``): the dashboard shows it without
    # re-aggregating millions of sales rows.
    tamanhos_em_risco: Mapped[int | None] = mapped_column(Integer, nullable=True)
    lojas_em_risco: Mapped[int | None] = mapped_column(Integer, nullable=True)
    rupturas: Mapped[int | None] = mapped_column(Integer, nullable=True)


class Recomendacao(UUIDPrimaryKey, db.Model):
    """Move ``quantidade`` units of one product and size from an origin to a destination store."""

    __tablename__ = "recomendacoes"
    __table_args__ = (
        CheckConstraint("quantidade > 0", name="quantidade_positive"),
        # Only decided rows are indexed: the history reads them, a new batch adds none.
        Index(
            "ix_recomendacoes_decididas",
            "ultima_acao_em",
            postgresql_where=text("ultima_acao_em IS NOT NULL"),
            sqlite_where=text("ultima_acao_em IS NOT NULL"),
        ),
        # A batch's decided rows by moment: an open batch page asks what changed (migration 0037).
        Index(
            "ix_recomendacoes_lote_decididas",
            "lote_id",
            "ultima_acao_em",
            postgresql_where=text("ultima_acao_em IS NOT NULL"),
            sqlite_where=text("ultima_acao_em IS NOT NULL"),
        ),
        # The transfers in transit: few rows, read by every generation and each store's list.
        Index(
            "ix_recomendacoes_em_transito",
            "destino_id",
            "origem_id",
            postgresql_where=text("status IN ('aprovada', 'executada') AND recebida_em IS NULL"),
            sqlite_where=text("status IN ('aprovada', 'executada') AND recebida_em IS NULL"),
        ),
    )

    # No foreign keys on lote_id and the catalogue ids, on purpose: a batch writes ~170 k rows
    # in one COPY, and PostgreSQL's per-row FK triggers made that write 2-3 times slower on the
    # 2-core target (docs/batches.md). The lote is created in the same transaction just
    # before, the catalogue ids come from that transaction's read, and the API deletes
    # neither batches nor stores nor products.
    lote_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    produto_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    tamanho: Mapped[str] = mapped_column(String(20))
    cor: Mapped[str] = mapped_column(String(60))
    origem_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    destino_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    tipo_origem: Mapped[str] = mapped_column(String(4))
    quantidade: Mapped[int] = mapped_column(Integer)
    estoque_destino: Mapped[int] = mapped_column(Integer)
    venda_media_destino: Mapped[float] = mapped_column(Float)
    estoque_origem: Mapped[int] = mapped_column(Integer)
    venda_media_origem: Mapped[float] = mapped_column(Float)
    distancia_km: Mapped[float] = mapped_column(Float)
    justificativa: Mapped[str] = mapped_column(Text)
    prioridade: Mapped[str] = mapped_column(String(5))
    prioridade_rank: Mapped[int] = mapped_column(SmallInteger)  # 0 alta, 1 media, 2 baixa: list order
    score: Mapped[int] = mapped_column(Integer)
    posicao: Mapped[int] = mapped_column(Integer)  # the engine's output order, the last tie-breaker
    dias_ate_ruptura: Mapped[int] = mapped_column(Integer)
    em_campanha: Mapped[bool] = mapped_column(Boolean, default=False)
    # The engine's predicted extra units sold at the destination over its horizon (14 days) for
    # these units: the ESI the outcome metric compares with what sold (migration 0026). NULL on
    # recommendations generated before it was stored.
    venda_extra_esperada: Mapped[float | None] = mapped_column(Float, nullable=True)
    data: Mapped[date] = mapped_column(Date)  # batch date of the generation that proposed it
    status: Mapped[str] = mapped_column(String(10), default="pendente")
    vetado: Mapped[bool] = mapped_column(Boolean, default=False)
    motivo_veto: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Why it was refused: one of MOTIVOS_RECUSA and the planner's words (migration 0021).
    motivo_recusa: Mapped[str | None] = mapped_column(String(20), nullable=True)
    motivo_recusa_texto: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Last action that changed it; NULL means nobody has touched it (regeneration may replace it).
    ultima_acao_em: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    ultima_acao_por_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    ultima_acao_por_nome: Mapped[str | None] = mapped_column(String(200), nullable=True)
    executada_em: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # Business day of the execution: sales from that day on count as its result.
    executada_data: Mapped[date | None] = mapped_column(Date, nullable=True)
    # Receipt at the destination (both NULL until then): by its manager or a planner, or by a
    # stock import that shows the goods there (services.stock.transit).
    quantidade_recebida: Mapped[int | None] = mapped_column(Integer, nullable=True)
    recebida_em: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # Business day of the receipt: the outcome windows (services.stock.outcome) start there.
    recebida_data: Mapped[date | None] = mapped_column(Date, nullable=True)


# The list order (priority, score descending, engine order) within a batch. The engine emits
# rows in this order too, so a new batch appends to the index instead of splitting it.
Index(
    "ix_recomendacoes_lote_ordem",
    Recomendacao.lote_id,
    Recomendacao.prioridade_rank,
    Recomendacao.score.desc(),
    Recomendacao.posicao,
)


class AcaoRecomendacao(UUIDPrimaryKey, db.Model):
    """One action that changed a recommendation: who, when, and the state it left."""

    __tablename__ = "acoes_recomendacao"
    __table_args__ = (
        Index("ix_acoes_recomendacao_recomendacao_id", "recomendacao_id"),
        Index("ix_acoes_recomendacao_criado_em", "criado_em"),
    )

    recomendacao_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("recomendacoes.id", ondelete="CASCADE")
    )
    acao: Mapped[str] = mapped_column(String(10))
    status_anterior: Mapped[str] = mapped_column(String(10))
    status_novo: Mapped[str] = mapped_column(String(10))
    vetado: Mapped[bool] = mapped_column(Boolean)
    motivo: Mapped[str | None] = mapped_column(Text, nullable=True)
    motivo_recusa: Mapped[str | None] = mapped_column(String(20), nullable=True)
    usuario_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    # Kept as text so the history still names who acted after the account is deleted.
    usuario_nome: Mapped[str] = mapped_column(String(200))
    criado_em: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
