"""Stock in transit: transfers approved or executed and not yet received, and their receipt.

A recommendation ``aprovada`` or ``executada``, not vetoed and not received, is in transit.
The next generation counts its units as gone from the origin (committed when approved,
shipped when executed) and as held by the destination (``EngineInput.in_transit``), so no
batch sends the same goods twice nor overdraws an origin. An approved one counts at the
destination too: it is committed to that cell, and counting it only at the origin would let
a regenerated batch send the same cell from another origin.

It stops being in transit when received:

- ``receber``: the destination's ``gerente_loja``, a ``planejador`` or an ``admin``
  confirms an executed transfer with the quantity that arrived (0 to ``quantidade``);
- a stock import (``close_arrived``): a snapshot naming the destination store closes its
  executed transfers of a cell, oldest execution first, while the cell's quantity in the
  file exceeds the quantity stored before the import by at least each one's quantity
  (received in full). A rise that sales hid closes nothing: the transfer stays in the
  store's in-transit list, flagged once late (``route_alert_days``), until someone confirms it.

Until received, an origin whose own stock load already lacks the shipped goods counts them
twice: the cautious side (it is never overdrawn).
"""

from __future__ import annotations

import math
import statistics
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from flask import current_app
from sqlalchemy import ColumnElement, false, func, select
from sqlalchemy.orm import aliased

from extensions import db
from models.auth import User
from models.base import utcnow
from models.stock import Estoque, Loja, Produto
from models.stock_batches import EM_TRANSITO, AcaoRecomendacao, Recomendacao
from services.clock import today
from services.errors import ConflictError, FieldError, ForbiddenError, NotFoundError, ValidationFailed
from services.stock import operations, problems
from services.stock.access import ensure_stock_access
from services.stock.recommendations import visible_condition

RECEIVERS = ("admin", "planejador", "gerente_loja")
# A route's lead time: the median days from execution to receipt of its transfers received in
# the last LEAD_HISTORY_DAYS, where it has LEAD_MIN_RECEIPTS of them (else the store's routes').
LEAD_HISTORY_DAYS = 182
LEAD_MIN_RECEIPTS = 3
# An executed transfer is late once older than 9 in 10 of its route's receipts took (the same
# receipts; ``route_alert_days``): a 2-day route flags on day 3, a 10-day one not before day 11.
# A route with fewer receipts, and a transfer only approved, keep ``TRANSIT_ALERT_DAYS``.

Route = tuple[uuid.UUID, uuid.UUID]  # (origin, destination)

IMPORT_RECEIVER = "Importação de estoque"  # who the decision log names for a receipt by import


def in_transit_condition():
    """SQL condition on ``Recomendacao``: approved or executed, not vetoed, not received."""
    return (
        Recomendacao.status.in_(EM_TRANSITO)
        & Recomendacao.recebida_em.is_(None)
        & (Recomendacao.vetado == false())
    )


@dataclass(frozen=True)
class Movimento:
    """Units of one cell in transit from an origin to a destination."""

    origem_id: uuid.UUID
    destino_id: uuid.UUID
    produto_id: uuid.UUID
    tamanho: str
    quantidade: int


def movimentos() -> list[Movimento]:
    """Every transfer in transit, for the engine's inputs (``snapshot.read_inputs``)."""
    rows = db.session.execute(
        select(
            Recomendacao.origem_id,
            Recomendacao.destino_id,
            Recomendacao.produto_id,
            Recomendacao.tamanho,
            Recomendacao.quantidade,
        ).where(in_transit_condition())
    )
    return [Movimento(*row) for row in rows]


# --- receipt ---------------------------------------------------------------------------------


def receber(rid: uuid.UUID, user: User, quantidade_recebida: int) -> Recomendacao:
    """Confirm that ``quantidade_recebida`` units of an executed transfer arrived. Flushes.

    A ``gerente_loja`` receives at its own store only: one leaving its store is 403, one it
    cannot see 404. A transfer not executed, or already received, is 409; a quantity above
    the transfer's is 422. The decision log records it as ``receber`` with who and when.
    """
    ensure_stock_access(user, *RECEIVERS)
    stmt = (
        select(Recomendacao)
        .where(Recomendacao.id == rid)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    cond = visible_condition(user)
    if cond is not None:
        stmt = stmt.where(cond)
    rec = db.session.scalar(stmt)
    if rec is None:
        raise NotFoundError("Recomendação não encontrada", reason="recomendacao_not_found")
    if user.papel == "gerente_loja" and rec.destino_id != user.loja_id:
        raise ForbiddenError(
            "Só o gerente da loja de destino confirma o recebimento", reason="receive_not_destination"
        )
    if rec.recebida_em is not None:
        raise ConflictError("Esta transferência já foi recebida", reason="already_received")
    if rec.status != "executada":
        raise ConflictError(
            f"Só uma recomendação executada pode ser recebida (esta está {rec.status})",
            reason="receive_not_allowed",
            params={"status": rec.status},
        )
    if not 0 <= quantidade_recebida <= rec.quantidade:
        message = f"A quantidade recebida vai de 0 a {rec.quantidade}"
        raise ValidationFailed(
            [
                FieldError(
                    ("body", "quantidadeRecebida"),
                    message,
                    reason="received_quantity_out_of_range",
                )
            ],
            message,
        )
    _mark_received(rec, quantidade_recebida, user.id, user.name, motivo=None)
    db.session.flush()
    operations.request_sync(rec.lote_id)
    if quantidade_recebida < rec.quantidade:
        problems.report_short_receipt(rec.id)
    return rec


def _mark_received(
    rec: Recomendacao, quantidade: int, usuario_id: uuid.UUID | None, usuario_nome: str, motivo: str | None
) -> None:
    now = utcnow()
    rec.quantidade_recebida = quantidade
    rec.recebida_em = now
    rec.recebida_data = today()
    db.session.add(
        AcaoRecomendacao(
            recomendacao_id=rec.id,
            acao="receber",
            status_anterior=rec.status,
            status_novo=rec.status,
            vetado=rec.vetado,
            motivo=motivo,
            usuario_id=usuario_id,
            usuario_nome=usuario_nome,
            criado_em=now,
        )
    )


def close_arrived(named_stores: set[uuid.UUID], file_qtd: Callable[[uuid.UUID, uuid.UUID, str], int]) -> int:
    """Close the executed transfers a stock snapshot shows arrived; returns how many. Flushes.

    Call it before the snapshot replaces the stored stock: ``named_stores`` are the stores
    the file names, ``file_qtd(loja, produto, tamanho)`` the file's quantity of a cell of one
    of them (0 when the file omits it). See the module's docstring for the rule.
    """
    if not named_stores:
        return 0
    recs = [
        rec
        for rec in db.session.scalars(
            select(Recomendacao)
            .where(in_transit_condition(), Recomendacao.status == "executada")
            .order_by(Recomendacao.executada_em, Recomendacao.id)
            .with_for_update()
        )
        if rec.destino_id in named_stores
    ]
    if not recs:
        return 0
    cells = {(rec.destino_id, rec.produto_id, rec.tamanho) for rec in recs}
    stored = {
        (loja_id, produto_id, tamanho): qtd
        for loja_id, produto_id, tamanho, qtd in db.session.execute(
            select(Estoque.loja_id, Estoque.produto_id, Estoque.tamanho, Estoque.qtd).where(
                Estoque.loja_id.in_({cell[0] for cell in cells}),
                Estoque.produto_id.in_({cell[1] for cell in cells}),
            )
        )
    }
    rise = {cell: file_qtd(*cell) - stored.get(cell, 0) for cell in cells}
    blocked: set[tuple] = set()  # a cell stops at its first transfer the rise does not cover
    closed = 0
    lotes: set[uuid.UUID] = set()
    for rec in recs:
        cell = (rec.destino_id, rec.produto_id, rec.tamanho)
        if cell in blocked:
            continue
        if rise[cell] < rec.quantidade:
            blocked.add(cell)
            continue
        rise[cell] -= rec.quantidade
        _mark_received(
            rec,
            rec.quantidade,
            None,
            IMPORT_RECEIVER,
            motivo="A carga de estoque mostra a mercadoria no destino",
        )
        closed += 1
        lotes.add(rec.lote_id)
    db.session.flush()
    for lote_id in lotes:
        operations.request_sync(lote_id)
    return closed


# --- a store's transfers in transit ----------------------------------------------------------


@dataclass(frozen=True)
class ItemTransito:
    """One transfer in transit into (``entrada``) or out of (``saida``) a store."""

    id: uuid.UUID
    lote_id: uuid.UUID
    sentido: str
    status: str
    produto_id: uuid.UUID
    produto_nome: str
    sku: str
    cor: str
    tamanho: str
    origem_id: uuid.UUID
    origem_nome: str
    destino_id: uuid.UUID
    destino_nome: str
    quantidade: int
    desde: date  # the day it was executed (approved, while only approved)
    idade_dias: int
    dias_alerta: int  # older than this is late: its route's (``route_alert_days``), else the default
    atrasada: bool
    # executed: ``desde`` plus its route's lead time (``lead_times``); None: not sent yet, or no
    # route of the store has enough receipts to tell
    previsao_chegada: date | None


@dataclass(frozen=True)
class TransitoLoja:
    loja: Loja
    dias_alerta: int
    itens: list[ItemTransito]

    @property
    def loja_id(self) -> uuid.UUID:
        return self.loja.id

    @property
    def entradas(self) -> list[ItemTransito]:
        return [item for item in self.itens if item.sentido == "entrada"]

    @property
    def saidas(self) -> list[ItemTransito]:
        return [item for item in self.itens if item.sentido == "saida"]


def _business_day(moment: datetime | None, fallback: date) -> date:
    """The retailer's day of a moment (the approval of one not yet executed)."""
    if moment is None:
        return fallback
    return moment.astimezone(ZoneInfo(current_app.config["TIMEZONE"])).date()


def count_arriving(loja_id: uuid.UUID) -> int:
    """Executed transfers on their way to the store, still to confirm."""
    return (
        db.session.scalar(
            select(func.count()).where(
                in_transit_condition(), Recomendacao.status == "executada", Recomendacao.destino_id == loja_id
            )
        )
        or 0
    )


def alert_days() -> int:
    return int(current_app.config["TRANSIT_ALERT_DAYS"])


def em_transito(loja_id: uuid.UUID, user: User) -> TransitoLoja:
    """The store's transfers in transit: arriving first, then leaving, each oldest first.

    Every stock role reads any store's list, but a ``gerente_loja`` only its own (another
    store is not found, as its transfers are).
    """
    ensure_stock_access(user)
    loja = db.session.get(Loja, loja_id)
    if loja is None or (user.papel == "gerente_loja" and user.loja_id != loja_id):
        raise NotFoundError("Loja não encontrada", reason="loja_not_found")
    origem, destino = aliased(Loja), aliased(Loja)
    rows = db.session.execute(
        select(Recomendacao, Produto.nome, Produto.sku, origem.nome, destino.nome)
        .join(Produto, Produto.id == Recomendacao.produto_id)
        .join(origem, origem.id == Recomendacao.origem_id)
        .join(destino, destino.id == Recomendacao.destino_id)
        .where(
            in_transit_condition(),
            (Recomendacao.destino_id == loja_id) | (Recomendacao.origem_id == loja_id),
        )
    ).all()
    ref, limit = today(), alert_days()
    receipts = _receipt_days((Recomendacao.destino_id == loja_id) | (Recomendacao.origem_id == loja_id))
    by_route, pooled = lead_times(receipts)
    alerts = route_alert_days(receipts)
    itens = []
    for rec, produto_nome, sku, origem_nome, destino_nome in rows:
        desde = rec.executada_data or _business_day(rec.ultima_acao_em, rec.data)
        idade = max((ref - desde).days, 0)
        route = (rec.origem_id, rec.destino_id)
        lead = by_route.get(route, pooled)
        alerta = limit if rec.executada_data is None else alerts.get(route, limit)
        itens.append(
            ItemTransito(
                id=rec.id,
                lote_id=rec.lote_id,
                sentido="entrada" if rec.destino_id == loja_id else "saida",
                status=rec.status,
                produto_id=rec.produto_id,
                produto_nome=produto_nome,
                sku=sku,
                cor=rec.cor,
                tamanho=rec.tamanho,
                origem_id=rec.origem_id,
                origem_nome=origem_nome,
                destino_id=rec.destino_id,
                destino_nome=destino_nome,
                quantidade=rec.quantidade,
                desde=desde,
                idade_dias=idade,
                dias_alerta=alerta,
                atrasada=idade > alerta,
                previsao_chegada=None
                if rec.executada_data is None or lead is None
                else rec.executada_data + timedelta(days=lead),
            )
        )
    itens.sort(key=lambda i: (i.sentido != "entrada", i.desde, i.produto_nome, i.tamanho, str(i.id)))
    return TransitoLoja(loja=loja, dias_alerta=limit, itens=itens)


def _receipt_days(where: ColumnElement[bool] | None = None) -> dict[Route, list[int]]:
    """Days from execution to receipt of each route's transfers received in the last
    ``LEAD_HISTORY_DAYS`` (of the routes ``where`` selects; all without it)."""
    query = select(
        Recomendacao.origem_id,
        Recomendacao.destino_id,
        Recomendacao.executada_data,
        Recomendacao.recebida_data,
    ).where(
        Recomendacao.recebida_data >= today() - timedelta(days=LEAD_HISTORY_DAYS),
        Recomendacao.executada_data.is_not(None),
    )
    days: dict[Route, list[int]] = {}
    for origem, destino, executada, recebida in db.session.execute(
        query if where is None else query.where(where)
    ):
        days.setdefault((origem, destino), []).append(max((recebida - executada).days, 0))
    return days


def lead_times(receipts: dict[Route, list[int]]) -> tuple[dict[Route, int], int | None]:
    """Each route's lead time, the median of its receipts' days (rounded up) where it has
    ``LEAD_MIN_RECEIPTS``; and the same over all the routes given, for the others (None: fewer
    receipts than that)."""

    def median(values: list[int]) -> int | None:
        return math.ceil(statistics.median(values)) if len(values) >= LEAD_MIN_RECEIPTS else None

    by_route = {route: lead for route, values in receipts.items() if (lead := median(values)) is not None}
    return by_route, median([d for values in receipts.values() for d in values])


def route_alert_days(receipts: dict[Route, list[int]]) -> dict[Route, int]:
    """Days after its execution past which a route's transfer is late: the 90th percentile of
    its receipts' days (rounded up), where it has ``LEAD_MIN_RECEIPTS``."""
    return {
        route: math.ceil(round(statistics.quantiles(values, n=10, method="inclusive")[-1], 6))
        for route, values in receipts.items()
        if len(values) >= LEAD_MIN_RECEIPTS
    }


@dataclass(frozen=True)
class Atrasada:
    id: uuid.UUID
    aprovada_por_id: uuid.UUID | None
    dias_alerta: int  # the days past which it is late (its route's, else the default)


def late_transfers(limit_days: int, now: datetime) -> list[Atrasada]:
    """Transfers in transit for more than their route's alert days once executed, else
    ``limit_days`` business days (the store's list flags the same ones), with who approved each."""
    approver = (
        select(AcaoRecomendacao.usuario_id)
        .where(AcaoRecomendacao.recomendacao_id == Recomendacao.id, AcaoRecomendacao.acao == "aprovar")
        .order_by(AcaoRecomendacao.criado_em.desc())
        .limit(1)
        .scalar_subquery()
    )
    alerts = route_alert_days(_receipt_days())
    soonest = min([limit_days, *alerts.values()])
    rows = db.session.execute(
        select(
            Recomendacao.id,
            Recomendacao.origem_id,
            Recomendacao.destino_id,
            Recomendacao.executada_data,
            Recomendacao.ultima_acao_em,
            Recomendacao.data,
            approver,
        ).where(in_transit_condition(), Recomendacao.ultima_acao_em < now - timedelta(days=soonest))
    )
    ref = today()
    late = []
    for rid, origem, destino, executada_data, ultima_acao_em, data, aprovada_por in rows:
        desde = executada_data or _business_day(ultima_acao_em, data)
        alerta = limit_days if executada_data is None else alerts.get((origem, destino), limit_days)
        if (ref - desde).days > alerta:
            late.append(Atrasada(rid, aprovada_por, alerta))
    return late


def receber_todas(issue_id: uuid.UUID, user: User) -> int:
    """Receive in full every transfer of an operations issue ``user`` may receive (its page's
    "receive all"); returns how many."""
    received = 0
    for transfer in operations.transfers_of_issue(issue_id, user) or []:
        if transfer.can_receive:
            receber(transfer.item.id, user, transfer.item.quantidade)
            received += 1
    return received
