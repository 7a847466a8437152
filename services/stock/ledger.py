"""Stock-out days and units read from the transfer ledger: receipts and transfers out.

Only today's stock is stored (``Estoque`` is the latest snapshot), so the demand estimate
takes a cell with stock as having had stock all window (docs/engine.md, censored demand).
Where transfers were received during the window, their receipts and the cell's daily sales
say more. Walking back from today, the units on the shelf when a day began are those at its
end plus what it sold, less what it received; a day that began with nothing and received
nothing was a day out of stock. A store that sold out, waited three weeks and was then refilled
by a transfer otherwise reads as a store that had stock all month and sold little, and the
next batch would send its goods away again.

Only the days before a cell's last receipt are read here: after it, the last-sale rule already
counts a cell that is out now. A day with sales is a day on the shelf whatever the walk says
(a stock import between two receipts can make the ledger disagree with itself).

Transfers out are read too (``sent_units``): the units they took were given to the origin by
the allocation, and a cell that sent its last units away had them on the shelf until then, not
since its last sale. Read from the last sale alone, a store that sat on a product for weeks and
then sent it away looks like a fast seller that sold out, and the next batch sends it back.
"""

from __future__ import annotations

import uuid
from datetime import date, timedelta
from typing import NamedTuple

import numpy as np
from sqlalchemy import and_, false, func, or_, select

from extensions import db
from models.stock import Estoque, Venda
from models.stock_batches import Recomendacao
from services.stock.engine_contract import NO_SEND

Cell = tuple[uuid.UUID, uuid.UUID, str]


class Receipts(NamedTuple):
    """(N, K) days each cell had nothing on the shelf before its last receipt, and the units
    transfers brought it (what the allocation did not give it)."""

    window: np.ndarray  # int16: days out of the window ``[start, on)``
    recent: np.ndarray  # int16: of its last days ``[recent, on)``
    history: np.ndarray  # int16: of each cell's span of the estimate's history (all of ``[since, on)``)
    units: np.ndarray  # int32: units received in the window
    units_history: np.ndarray  # int32: units received in each cell's span of the history


def receipt_out_days(
    stock: np.ndarray,
    node_index: dict[uuid.UUID, int],
    item_index: dict[tuple[uuid.UUID, str], int],
    start: date,
    recent: date,
    on: date,
    since: date | None = None,
    span: np.ndarray | None = None,
) -> Receipts | None:
    """The days of the window, of its last days and of the estimate's history (from ``since``,
    at most ``start``; of each cell's last ``span`` days of it when given) each cell had nothing
    on the shelf before its last receipt, and the units it received in the window and in its
    span; None when nothing was received in them. One walk back from today serves the three.

    ``stock`` is the stock on hand now (before units in transit are taken off)."""
    since = start if since is None else min(since, start)
    received = {
        cell: by_day
        for cell, by_day in _receipts(since, on).items()
        if cell[0] in node_index and (cell[1], cell[2]) in item_index
    }
    if not received:
        return None
    days = (on - since).days
    units, units_history = _cell_units(received, stock.shape, node_index, item_index, start, on, days, span)
    # A cell holding more than it received had stock before every receipt: it was never out on
    # those days, and its sales need not be read.
    cells = [
        cell
        for cell, by_day in received.items()
        if stock[node_index[cell[0]], item_index[(cell[1], cell[2])]] <= sum(by_day.values())
    ]
    if not cells:
        none = np.zeros(stock.shape, dtype=np.int16)
        return Receipts(none, none.copy(), none.copy(), units, units_history)
    row = {cell: i for i, cell in enumerate(cells)}
    into = np.zeros((len(cells), days), dtype=np.int64)
    for cell, by_day in received.items():
        if cell in row:
            for day, q in by_day.items():
                into[row[cell], (day - since).days] += q
    sold = _daily_sales(row, since, on, days)
    now = np.array([stock[node_index[c[0]], item_index[(c[1], c[2])]] for c in cells], dtype=np.int64)
    out = days_out(now, sold, into)
    ni = np.array([node_index[c[0]] for c in cells], dtype=np.int64)
    ki = np.array([item_index[(c[1], c[2])] for c in cells], dtype=np.int64)

    def counted(days_back: np.ndarray | int) -> np.ndarray:
        totals = np.zeros(stock.shape, dtype=np.int16)
        totals[ni, ki] = _last_days(out, days_back)
        return totals

    history = counted(days if span is None else span[ni, ki])
    return Receipts(counted((on - start).days), counted((on - recent).days), history, units, units_history)


class Sent(NamedTuple):
    """(N, K) units transfers took from each cell, in the window and in each cell's span, and
    the days after the last day they took any (``NO_SEND``: none)."""

    window: np.ndarray  # int32
    history: np.ndarray  # int32
    age: np.ndarray  # int16


def sent_units(
    shape: tuple[int, int],
    node_index: dict[uuid.UUID, int],
    item_index: dict[tuple[uuid.UUID, str], int],
    start: date,
    on: date,
    since: date | None = None,
    span: np.ndarray | None = None,
) -> Sent | None:
    """The units transfers took from each cell (as ``receipt_out_days``' units, from the
    origin's side): executed in the window or the history (``since``), and those approved and
    not yet executed, which the snapshot takes off the origin's stock as in transit (counted as
    of the day before ``on``). None when no transfer took any."""
    since = start if since is None else min(since, start)
    taken: dict[Cell, dict[date, int]] = {}
    day_before = on - timedelta(days=1)
    columns = (
        Recomendacao.origem_id,
        Recomendacao.produto_id,
        Recomendacao.tamanho,
        Recomendacao.status,
        Recomendacao.executada_data,
    )
    for origem, produto, tamanho, status, day, units in db.session.execute(
        select(*columns, func.sum(Recomendacao.quantidade))
        .where(
            Recomendacao.vetado == false(),
            or_(
                and_(
                    Recomendacao.status == "executada",
                    Recomendacao.executada_data >= since,
                    Recomendacao.executada_data < on,
                ),
                and_(Recomendacao.status == "aprovada", Recomendacao.recebida_em.is_(None)),
            ),
        )
        .group_by(*columns)
    ):
        if origem not in node_index or (produto, tamanho) not in item_index:
            continue
        by_day = taken.setdefault((origem, produto, tamanho), {})
        day = day_before if status == "aprovada" else day
        by_day[day] = by_day.get(day, 0) + units
    if not taken:
        return None
    age = np.full(shape, NO_SEND, dtype=np.int16)
    for (node, produto, tamanho), by_day in taken.items():
        age[node_index[node], item_index[(produto, tamanho)]] = (on - max(by_day)).days - 1
    return Sent(*_cell_units(taken, shape, node_index, item_index, start, on, (on - since).days, span), age)


def _cell_units(
    moves: dict[Cell, dict[date, int]],
    shape: tuple[int, int],
    node_index: dict[uuid.UUID, int],
    item_index: dict[tuple[uuid.UUID, str], int],
    start: date,
    on: date,
    days: int,
    span: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """(N, K) int32 the units of each cell's moves from ``start`` on, and over each cell's last
    ``span`` days (``days`` without)."""
    window = np.zeros(shape, dtype=np.int32)
    history = np.zeros(shape, dtype=np.int32)
    for (node, produto, tamanho), by_day in moves.items():
        n, k = node_index[node], item_index[(produto, tamanho)]
        reach = days if span is None else int(span[n, k])
        for day, q in by_day.items():
            window[n, k] += q if day >= start else 0
            history[n, k] += q if (on - day).days <= reach else 0
    return window, history


def _last_days(out: np.ndarray, days_back: np.ndarray | int) -> np.ndarray:
    """(M,) the days marked in each row's last ``days_back`` columns (one count, or one per row)."""
    first = out.shape[1] - np.asarray(days_back, dtype=np.int64).reshape(-1, 1)
    return (out & (np.arange(out.shape[1])[None, :] >= first)).sum(axis=1)


def dense_out_days(
    stock: np.ndarray,
    sold: np.ndarray,
    into: np.ndarray,
    recent_days: int,
    window_days: int | None = None,
    span: np.ndarray | None = None,
) -> Receipts | None:
    """``receipt_out_days`` from dense (D, N, K) daily sales and receipts (the simulator's
    ledger): the history is all D days (each cell's last ``span``), the window their last
    ``window_days`` (all without); None when nothing was received."""
    cells = into.sum(axis=0) > 0
    if not cells.any():
        return None
    days = into.shape[0]
    units, units_history = dense_units(into, window_days, span)
    out = days_out(
        stock[cells].astype(np.int64), sold[:, cells].T.astype(np.int64), into[:, cells].T.astype(np.int64)
    )

    def counted(days_back: np.ndarray | int) -> np.ndarray:
        totals = np.zeros(stock.shape, dtype=np.int16)
        totals[cells] = _last_days(out, days_back)
        return totals

    history = counted(days if span is None else span[cells])
    return Receipts(
        counted(min(window_days or days, days)),
        counted(min(recent_days, days)),
        history,
        units,
        units_history,
    )


def dense_units(
    daily: np.ndarray, window_days: int | None = None, span: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(N, K) int32 units of dense (D, N, K) daily moves over the last ``window_days`` (all D
    without) and over each cell's last ``span`` days (all D without)."""
    days = daily.shape[0]
    units = daily[days - min(window_days or days, days) :].sum(axis=0).astype(np.int32)
    reach = np.full(daily.shape[1:], days) if span is None else np.minimum(span, days)
    # the moves of each cell's last ``reach`` days: a suffix sum read at its start
    suffix = np.cumsum(daily[::-1], axis=0)[::-1]
    in_span = np.where(
        reach > 0, np.take_along_axis(suffix, (days - np.maximum(reach, 1))[None].astype(np.int64), 0)[0], 0
    ).astype(np.int32)
    return units, in_span


def days_out(now: np.ndarray, sold: np.ndarray, into: np.ndarray) -> np.ndarray:
    """(M, D) the days each cell began with nothing, sold nothing and received nothing, before
    its last receipt. Stock at a day's start = stock now + what was sold from that day on − what
    was received from that day on (a suffix sum, walking back from today)."""
    flow = sold - into
    at_start = now[:, None] + np.cumsum(flow[:, ::-1], axis=1)[:, ::-1]
    days = np.arange(sold.shape[1])
    last_receipt = np.where(into > 0, days, -1).max(axis=1)
    return (at_start <= 0) & (sold == 0) & (into == 0) & (days[None, :] < last_receipt[:, None])


def _receipts(start: date, on: date) -> dict[Cell, dict[date, int]]:
    """Units received into each cell on each day of ``[start, on)``."""
    received: dict[Cell, dict[date, int]] = {}
    for destino, produto, tamanho, day, units in db.session.execute(
        select(
            Recomendacao.destino_id,
            Recomendacao.produto_id,
            Recomendacao.tamanho,
            Recomendacao.recebida_data,
            Recomendacao.quantidade_recebida,
        ).where(
            Recomendacao.recebida_data >= start,
            Recomendacao.recebida_data < on,
            Recomendacao.quantidade_recebida > 0,
        )
    ):
        by_day = received.setdefault((destino, produto, tamanho), {})
        by_day[day] = by_day.get(day, 0) + units
    return received


def _daily_sales(row: dict[Cell, int], start: date, on: date, days: int) -> np.ndarray:
    """(M, D) units each received cell sold on each day of the window."""
    sold = np.zeros((len(row), days), dtype=np.int64)
    # The same pruning in SQL: only the sales of cells whose stock now is at most what they received.
    received = (
        select(
            Recomendacao.destino_id,
            Recomendacao.produto_id,
            Recomendacao.tamanho,
            func.sum(Recomendacao.quantidade_recebida).label("units"),
        )
        .where(
            Recomendacao.recebida_data >= start,
            Recomendacao.recebida_data < on,
            Recomendacao.quantidade_recebida > 0,
        )
        .group_by(Recomendacao.destino_id, Recomendacao.produto_id, Recomendacao.tamanho)
        .subquery()
    )
    receipts = (
        select(received.c.destino_id, received.c.produto_id, received.c.tamanho)
        .outerjoin(
            Estoque,
            and_(
                Estoque.loja_id == received.c.destino_id,
                Estoque.produto_id == received.c.produto_id,
                Estoque.tamanho == received.c.tamanho,
            ),
        )
        .where(func.coalesce(Estoque.qtd, 0) <= received.c.units)
        .subquery()
    )
    for loja, produto, tamanho, day, units in db.session.execute(
        select(Venda.loja_id, Venda.produto_id, Venda.tamanho, Venda.data, Venda.qtd)
        .join(
            receipts,
            and_(
                receipts.c.destino_id == Venda.loja_id,
                receipts.c.produto_id == Venda.produto_id,
                receipts.c.tamanho == Venda.tamanho,
            ),
        )
        .where(Venda.data >= start, Venda.data < on)
    ):
        i = row.get((loja, produto, tamanho))
        if i is not None:
            sold[i, (day - start).days] += units
    return sold
