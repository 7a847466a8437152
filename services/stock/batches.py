"""The batches as the API and the pages read them: list, detail, flows and totals of a week's batch.

Building a batch is ``services.stock.generation``; the rules and the cadence are
``services.stock.rules``.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from sqlalchemy import Row, bindparam, case, func, select

from extensions import db
from models.auth import User
from models.base import utcnow
from models.stock import Loja
from models.stock_batches import Lote, Recomendacao
from services.stock.recommendations import (
    active_condition,
    existing_lote_id,
    get_lote,
    lote_chunks,
    lote_json_chunks,
    missing_lote,
    newest_lote,
    visible_condition,
)

NEW_FOR = timedelta(days=7)  # a batch is `novo` for this long


def iso_week(on: date) -> tuple[str, date, date]:
    """``("2026-W47", monday, sunday)`` of the ISO week holding ``on``."""
    year, week, weekday = on.isocalendar()
    monday = on - timedelta(days=weekday - 1)
    return f"{year}-W{week:02d}", monday, monday + timedelta(days=6)


@dataclass(frozen=True)
class LoteResumo:
    """A batch with what is derived from its recommendations."""

    id: uuid.UUID
    semana: str
    inicio: date
    fim: date
    criado_em: datetime
    status: str  # ``aberto`` while any active recommendation is pendente, else ``concluido``
    novo: bool  # the newest batch, until it is ``NEW_FOR`` old

    @property
    def periodo(self) -> str:
        """The ISO interval of the week, ``2026-11-16/2026-11-22``."""
        return f"{self.inicio.isoformat()}/{self.fim.isoformat()}"


@dataclass(frozen=True)
class NodoFluxo:
    """Units and recommendations leaving and arriving at one node of a batch."""

    id: uuid.UUID
    nome: str
    is_cd: bool
    total_enviado: int
    total_recebido: int
    itens_enviados: int
    itens_recebidos: int


@dataclass(frozen=True)
class TotaisLote:
    total_itens: int
    total_unidades: int
    origens: int
    destinos: int
    alta_prioridade: int
    via_cd: int
    via_loja: int


def _pending_counts(lote_ids: list[uuid.UUID]) -> dict[uuid.UUID, int]:
    if not lote_ids:
        return {}
    stmt = (
        select(Recomendacao.lote_id, func.count())
        .where(Recomendacao.lote_id.in_(lote_ids), Recomendacao.status == "pendente", active_condition())
        .group_by(Recomendacao.lote_id)
    )
    return {lid: int(c) for lid, c in db.session.execute(stmt)}


def lote_resumo(lote: Lote, *, pending: int | None = None, newest_id: uuid.UUID | None = None) -> LoteResumo:
    """The batch, status derived from the active pending ones, `novo` for the newest until 7 days old."""
    if pending is None:
        pending = _pending_counts([lote.id]).get(lote.id, 0)
    if newest_id is None:
        last = newest_lote()
        newest_id = last.id if last else None
    return LoteResumo(
        id=lote.id,
        semana=lote.semana,
        inicio=lote.inicio,
        fim=lote.fim,
        criado_em=lote.created_at,
        status="aberto" if pending else "concluido",
        novo=lote.id == newest_id and utcnow() - lote.created_at < NEW_FOR,
    )


def list_lotes() -> list[LoteResumo]:
    """Every batch, newest week first, without their recommendations."""
    lotes = list(db.session.scalars(select(Lote).order_by(Lote.inicio.desc())))
    counts = _pending_counts([lote.id for lote in lotes])
    newest_id = lotes[0].id if lotes else None
    return [lote_resumo(lote, pending=counts.get(lote.id, 0), newest_id=newest_id) for lote in lotes]


def _active_where(lote_id: uuid.UUID, user: User) -> list:
    where = [Recomendacao.lote_id == lote_id, active_condition()]
    cond = visible_condition(user)
    if cond is not None:
        where.append(cond)
    return where


def fluxo(lote_id: uuid.UUID, user: User) -> list[NodoFluxo]:
    """Units and recommendations leaving and arriving at each node of the batch's active ones.

    Only nodes that send or receive appear; CDs first, then stores, each by name.
    Aggregated by the database: a batch can hold hundreds of thousands of rows.
    """
    existing_lote_id(lote_id)
    where = _active_where(lote_id, user)
    flows: dict[uuid.UUID, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for column, units, items in ((Recomendacao.origem_id, 0, 2), (Recomendacao.destino_id, 1, 3)):
        for node, total, count in db.session.execute(
            select(column, func.sum(Recomendacao.quantidade), func.count()).where(*where).group_by(column)
        ):
            flows[node][units] = int(total)
            flows[node][items] = int(count)
    if not flows:
        return []
    lojas = db.session.execute(select(Loja.id, Loja.nome, Loja.is_cd).where(Loja.id.in_(flows.keys()))).all()
    lojas.sort(key=lambda r: (not r.is_cd, r.nome, str(r.id)))
    return [NodoFluxo(r.id, r.nome, bool(r.is_cd), *flows[r.id]) for r in lojas]


def _count_if(cond):
    return func.coalesce(func.sum(case((cond, 1), else_=0)), 0)


# Built once, at import: the totals are read on every view of a batch, and building this
# statement (and its cache key) cost about as much as the database's answer. Its first column
# is the batch's id, NULL when there is no such batch: one round trip answers both the 404 and
# the totals (an aggregate without GROUP BY always gives its one row). A store manager's
# visibility is added per request.
_TOTAIS = select(
    select(Lote.id).where(Lote.id == bindparam("lote_id")).scalar_subquery(),
    func.count(),
    func.coalesce(func.sum(Recomendacao.quantidade), 0),
    func.count(func.distinct(Recomendacao.origem_id)),
    func.count(func.distinct(Recomendacao.destino_id)),
    _count_if(Recomendacao.prioridade == "alta"),
    _count_if(Recomendacao.tipo_origem == "cd"),
    _count_if(Recomendacao.tipo_origem == "loja"),
).where(Recomendacao.lote_id == bindparam("lote_id"), active_condition())


def totais(lote_id: uuid.UUID, user: User) -> TotaisLote:
    """Totals of the batch's active recommendations, aggregated by the database."""
    cond = visible_condition(user)
    stmt = _TOTAIS if cond is None else _TOTAIS.where(cond)
    found, *figures = db.session.execute(stmt, {"lote_id": lote_id}).one()
    if found is None:
        raise missing_lote()
    return TotaisLote(*(int(v) for v in figures))


@dataclass(frozen=True)
class LoteDetalhe:
    """A batch and every recommendation of it the user may see, read while they are written out."""

    lote: LoteResumo
    # Chunks of rows (``recommendations.LISTED_COLUMNS``) in list order, read on demand while
    # the response is written: consume it once, inside the app context. None when
    # ``recomendacoes_json`` holds them.
    recomendacoes: Iterator[Sequence[Row]] | None
    # The same, already JSON (``recommendations.lote_json_chunks``), when asked for and the
    # database writes it.
    recomendacoes_json: Iterator[bytes] | None = None


def lote_detail(lote_id: uuid.UUID, user: User, row_json=None) -> LoteDetalhe:
    """The batch (404 when unknown) and, lazily, its recommendations ``user`` may see: as JSON
    written by the database with ``row_json`` (a row's JSON expression over ``LISTED_COLUMNS``)
    where it can, else as rows."""
    lote = get_lote(lote_id)
    if row_json is not None:
        encoded = lote_json_chunks(lote_id, user, row_json)
        if encoded is not None:
            return LoteDetalhe(lote_resumo(lote), None, encoded)
    return LoteDetalhe(lote_resumo(lote), lote_chunks(lote_id, user))
