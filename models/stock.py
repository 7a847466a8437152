"""Remanejamento catalogue: stores and CDs, products, stock, sales, campaigns, rules."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Date,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Uuid,
)
from sqlalchemy.orm import Mapped, mapped_column

from extensions import db
from models.base import UTCDateTime, UUIDPrimaryKey, utcnow


class Loja(UUIDPrimaryKey, db.Model):
    """A store or, with ``is_cd``, a distribution centre."""

    __tablename__ = "lojas"

    codigo: Mapped[str] = mapped_column(String(40), unique=True)
    nome: Mapped[str] = mapped_column(String(200))
    cidade: Mapped[str] = mapped_column(String(200))
    lat: Mapped[float | None] = mapped_column(Float, nullable=True)
    lng: Mapped[float | None] = mapped_column(Float, nullable=True)
    is_cd: Mapped[bool] = mapped_column(Boolean, default=False)
    bloqueada: Mapped[bool] = mapped_column(Boolean, default=False)


class Produto(UUIDPrimaryKey, db.Model):
    """A product in one colour, with its size run in grid order."""

    __tablename__ = "produtos"

    sku: Mapped[str] = mapped_column(String(60), unique=True)
    nome: Mapped[str] = mapped_column(String(200))
    marca: Mapped[str] = mapped_column(String(100), index=True)
    categoria: Mapped[str] = mapped_column(String(100))
    colecao: Mapped[str] = mapped_column(String(100))
    cor: Mapped[str] = mapped_column(String(60))
    tamanhos: Mapped[list[str]] = mapped_column(JSON, default=list)
    imagem: Mapped[str | None] = mapped_column(String(500), nullable=True)


class Estoque(db.Model):
    """Units of one product and size held at one store (the latest snapshot)."""

    __tablename__ = "estoque"
    __table_args__ = (CheckConstraint("qtd >= 0", name="qtd_non_negative"),)

    loja_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("lojas.id", ondelete="CASCADE"), primary_key=True
    )
    produto_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("produtos.id", ondelete="CASCADE"), primary_key=True
    )
    tamanho: Mapped[str] = mapped_column(String(20), primary_key=True)
    qtd: Mapped[int] = mapped_column(Integer)


class Venda(db.Model):
    """Units of one product and size sold at one store on one day."""

    __tablename__ = "vendas"
    __table_args__ = (
        CheckConstraint("qtd >= 0", name="qtd_non_negative"),
        # The engine's per-cell sums stream from this index alone (migration 0041).
        Index(
            "ix_vendas_celula_data",
            "produto_id",
            "loja_id",
            "tamanho",
            "data",
            postgresql_include=["qtd"],
        ),
        # SQLite: rows stored in the primary key itself, not in a rowid table beside it.
        {"sqlite_with_rowid": False},
    )

    # Leading with the day serves the engine's "last N days" range scan and the
    # importer's "replace this (day, store)" delete.
    data: Mapped[date] = mapped_column(Date, primary_key=True)
    loja_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("lojas.id", ondelete="CASCADE"), primary_key=True
    )
    produto_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("produtos.id", ondelete="CASCADE"), primary_key=True
    )
    tamanho: Mapped[str] = mapped_column(String(20), primary_key=True)
    qtd: Mapped[int] = mapped_column(Integer)


class Campanha(UUIDPrimaryKey, db.Model):
    """A product in campaign between two dates, at one store or (no store) at all."""

    __tablename__ = "campanhas"
    __table_args__ = (CheckConstraint("fim >= inicio", name="dates_ordered"),)

    produto_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("produtos.id", ondelete="CASCADE"), index=True
    )
    loja_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("lojas.id", ondelete="CASCADE"), nullable=True
    )
    inicio: Mapped[date] = mapped_column(Date)
    fim: Mapped[date] = mapped_column(Date)


class RegrasRemanejamento(db.Model):
    """The network's transfer rules and cadence: a single row (id 1)."""

    __tablename__ = "regras_remanejamento"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    priorizar_cd: Mapped[bool] = mapped_column(Boolean, default=True)
    qtd_minima: Mapped[int] = mapped_column(Integer, default=3)
    qtd_maxima: Mapped[int] = mapped_column(Integer, default=15)
    periodo: Mapped[str] = mapped_column(String(3), default="30")
    peso_distancia: Mapped[int] = mapped_column(Integer, default=40)
    peso_giro: Mapped[int] = mapped_column(Integer, default=35)
    peso_estoque: Mapped[int] = mapped_column(Integer, default=25)
    bloqueio_campanha: Mapped[bool] = mapped_column(Boolean, default=True)
    lojas_bloqueadas: Mapped[list[str]] = mapped_column(JSON, default=list)
    marcas_bloqueadas: Mapped[list[str]] = mapped_column(JSON, default=list)
    cadence: Mapped[str] = mapped_column(String(20), default="semanal")
    # thousandths of an expected unit sold per shipment and per km (services.stock.rules)
    custo_envio: Mapped[int] = mapped_column(Integer, default=300, server_default="300")
    custo_km: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    # thousandths of an expected unit sold each moved unit must add (services.stock.rules)
    ganho_minimo: Mapped[int] = mapped_column(Integer, default=150, server_default="150")
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)
    updated_by_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    # The tracker project where approved transfers become the stores' work, and the account
    # (the stock admin who named it, a member of its organization) the issues are written as.
    projeto_operacoes_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("projects.id", ondelete="SET NULL"), nullable=True
    )
    operacoes_por_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )


class ImportLog(UUIDPrimaryKey, db.Model):
    """One CSV import, from the CLI or the admin page: what file, how many rows, by whom,
    and why it was rejected (a rejected file wrote nothing but its log line)."""

    __tablename__ = "stock_import_logs"
    __table_args__ = (
        CheckConstraint("kind IN ('stores', 'products', 'stock', 'sales', 'campaigns')", name="kind_valid"),
        Index("ix_stock_import_logs_created_at", "created_at"),
        Index("ix_stock_import_logs_user_id", "user_id"),
    )

    kind: Mapped[str] = mapped_column(String(20))
    filename: Mapped[str] = mapped_column(String(255))
    rows: Mapped[int] = mapped_column(Integer, default=0)
    inserted: Mapped[int] = mapped_column(Integer, default=0)
    updated: Mapped[int] = mapped_column(Integer, default=0)
    unchanged: Mapped[int] = mapped_column(Integer, default=0)
    removed: Mapped[int] = mapped_column(Integer, default=0)
    ok: Mapped[bool] = mapped_column(Boolean)
    error_line: Mapped[int | None] = mapped_column(Integer, nullable=True)
    error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    # A rejected file's bad lines, [{"line", "reason"}] (the first is error_line / error),
    # and how many more were bad beyond the importer's cap.
    error_list: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)
    more_errors: Mapped[int | None] = mapped_column(Integer, nullable=True)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    # None: the operator's command line.
    user_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
