"""The demo's past weeks: earlier batches decided, shipped and received, so that every screen
has something to show on the first visit (approval rate, learning, expected against sold,
units on their way to and from the store manager's store).

Three weeks of batches are generated on their own dates and decided by the demo planner
through the same services as the pages, then dated as they would have been:

- three weeks ago: the head of the batch (``DECIDED``) mostly approved, executed the next day and received two days later
  (a few boxes short), some refused with a reason, one vetoed; its 14-day outcome windows are
  complete today;
- two weeks ago: the same, with part of the executed transfers still on their way;
- last week: approved and executed, nothing received yet (in transit), the store manager's
  store's transfers first.

The sales history is the demo's own (drawn before any transfer), so the outcome figures say
how a real history would read, not what these transfers caused.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy import select, update

from extensions import db
from models.auth import User
from models.stock_batches import AcaoRecomendacao, Lote, Recomendacao
from services.stock import decisions, generation, transit

REFUSALS = ("custo", "loja_recusa", "estoque_errado")
# A planner decides the head of a week's batch (its most urgent transfers); the rest stays
# pending and is superseded by the next week's.
DECIDED = 120


@dataclass(frozen=True)
class PastWeek:
    weeks_ago: int
    received_share: float  # of the executed transfers, by position in the batch


PAST_WEEKS = (PastWeek(3, 1.0), PastWeek(2, 0.6), PastWeek(1, 0.0))


@dataclass
class History:
    batches: int = 0
    approved: int = 0
    refused: int = 0
    received: int = 0
    in_transit: int = 0

    def describe(self) -> str:
        return (
            f"  {self.batches} past batches: {self.approved} transfers approved and executed, "
            f"{self.refused} refused, {self.received} received, {self.in_transit} still on their way"
        )


def play(ref: date, planner: User, manager_store: uuid.UUID | None) -> History:
    """Generate and decide the past weeks before ``ref``. Flushes, never commits."""
    history = History()
    for week in PAST_WEEKS:
        on = ref - timedelta(weeks=week.weeks_ago)
        lote = generation.generate(on).lote
        recs = _ordered(lote.id, manager_store)[:DECIDED]
        history.batches += 1
        executed = _decide(lote.id, recs, planner, history)
        _receive(executed[: int(len(executed) * week.received_share)], planner, history)
        history.in_transit += len(executed) - int(len(executed) * week.received_share)
        _date_back(lote.id, on)
    return history


def _ordered(lote_id: uuid.UUID, manager_store: uuid.UUID | None) -> list[Recomendacao]:
    """The batch in its order, the manager's store's transfers first (they are the ones a store
    manager opening the demo looks for)."""
    recs = list(
        db.session.scalars(
            select(Recomendacao).where(Recomendacao.lote_id == lote_id).order_by(Recomendacao.posicao)
        )
    )
    return sorted(recs, key=lambda r: manager_store not in (r.origem_id, r.destino_id))


def _decide(
    lote_id: uuid.UUID, recs: list[Recomendacao], planner: User, history: History
) -> list[Recomendacao]:
    """Every tenth refused (the reasons in turn), the seventh vetoed, the rest approved and
    executed; returns the executed ones. Decided a selection at a time, as a planner's
    bulk actions would be."""
    refused: dict[str, list[uuid.UUID]] = {}
    for i in range(9, len(recs), 10):
        refused.setdefault(REFUSALS[(i // 10) % len(REFUSALS)], []).append(recs[i].id)
    for motivo, ids in refused.items():
        history.refused += decisions.decidir_selecao(
            "recusar", lote_id, ids, planner, motivo_recusa=motivo
        ).alteradas
    if len(recs) > 6:
        decisions.vetar(lote_id, recs[6].id, planner, "Loja em inventário nesta semana")
    executed = [rec for i, rec in enumerate(recs) if i % 10 != 9 and i != 6]
    ids = [rec.id for rec in executed]
    history.approved += decisions.decidir_selecao("aprovar", lote_id, ids, planner).alteradas
    decisions.decidir_selecao("executar", lote_id, ids, planner)
    return executed


def _receive(recs: list[Recomendacao], planner: User, history: History) -> None:
    """Received in full, but one box in twenty arrives a unit short."""
    for i, rec in enumerate(recs):
        short = 1 if i % 20 == 19 and rec.quantidade > 1 else 0
        transit.receber(rec.id, planner, rec.quantidade - short)
        history.received += 1


def _date_back(lote_id: uuid.UUID, on: date) -> None:
    """What the services stamped today happened in the batch's week: decided on its day,
    executed the next, received two days after that."""
    decided = datetime.combine(on, time(14), tzinfo=UTC)
    shipped, arrived = on + timedelta(days=1), on + timedelta(days=3)
    in_batch = Recomendacao.lote_id == lote_id
    db.session.execute(
        update(Recomendacao)
        .where(in_batch, Recomendacao.executada_data.is_not(None))
        .values(executada_data=shipped, executada_em=datetime.combine(shipped, time(10), tzinfo=UTC))
    )
    db.session.execute(
        update(Recomendacao)
        .where(in_batch, Recomendacao.recebida_data.is_not(None))
        .values(recebida_data=arrived, recebida_em=datetime.combine(arrived, time(16), tzinfo=UTC))
    )
    db.session.execute(
        update(Recomendacao)
        .where(in_batch, Recomendacao.ultima_acao_em.is_not(None))
        .values(ultima_acao_em=decided)
    )
    db.session.execute(
        update(Lote).where(Lote.id == lote_id).values(gerado_em=datetime.combine(on, time(8), tzinfo=UTC))
    )
    ids = select(Recomendacao.id).where(in_batch).scalar_subquery()
    db.session.execute(
        update(AcaoRecomendacao).where(AcaoRecomendacao.recomendacao_id.in_(ids)).values(criado_em=decided)
    )
    db.session.expire_all()
