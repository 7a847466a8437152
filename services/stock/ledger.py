"""Stock-out days read from the receipt ledger.

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
"""

from __future__ import annotations

import uuid
from datetime import date

import numpy as np
from sqlalchemy import and_, func, select

from extensions import db
from models.stock import Estoque, Venda
from models.stock_batches import Recomendacao

Cell = tuple[uuid.UUID, uuid.UUID, str]


def receipt_out_days(
    stock: np.ndarray,
    node_index: dict[uuid.UUID, int],
    item_index: dict[tuple[uuid.UUID, str], int],
    start: date,
    recent: date,
    on: date,
) -> tuple[np.ndarray, np.ndarray] | None:
    """(N, K) days of ``[start, on)`` and of ``[recent, on)`` each cell had nothing on the shelf
    before its last receipt in the window; None when nothing was received in it.

    ``stock`` is the stock on hand now (before units in transit are taken off)."""
    received = _receipts(start, on)
    # A cell holding more than it received in the window had stock before every receipt: it was
    # never out on those days, and its sales need not be read.
    cells = [
        cell
        for cell, by_day in received.items()
        if cell[0] in node_index
        and (cell[1], cell[2]) in item_index
        and stock[node_index[cell[0]], item_index[(cell[1], cell[2])]] <= sum(by_day.values())
    ]
    if not cells:
        return None
    days = (on - start).days
    row = {cell: i for i, cell in enumerate(cells)}
    into = np.zeros((len(cells), days), dtype=np.int64)
    for cell, by_day in received.items():
        if cell in row:
            for day, units in by_day.items():
                into[row[cell], (day - start).days] += units
    sold = _daily_sales(row, start, on, days)
    now = np.array([stock[node_index[c[0]], item_index[(c[1], c[2])]] for c in cells], dtype=np.int64)
    out = days_out(now, sold, into)
    recent_from = (recent - start).days
    totals = np.zeros(stock.shape, dtype=np.int16)
    recents = np.zeros(stock.shape, dtype=np.int16)
    ni = np.array([node_index[c[0]] for c in cells], dtype=np.int64)
    ki = np.array([item_index[(c[1], c[2])] for c in cells], dtype=np.int64)
    totals[ni, ki] = out.sum(axis=1)
    recents[ni, ki] = out[:, recent_from:].sum(axis=1)
    return totals, recents


def dense_out_days(
    stock: np.ndarray, sold: np.ndarray, into: np.ndarray, recent_days: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """``receipt_out_days`` from dense (D, N, K) daily sales and receipts of the window (the
    simulator's ledger); None when nothing was received."""
    cells = into.sum(axis=0) > 0
    if not cells.any():
        return None
    out = days_out(
        stock[cells].astype(np.int64), sold[:, cells].T.astype(np.int64), into[:, cells].T.astype(np.int64)
    )
    totals = np.zeros(stock.shape, dtype=np.int16)
    recents = np.zeros(stock.shape, dtype=np.int16)
    totals[cells] = out.sum(axis=1)
    recents[cells] = out[:, -recent_days:].sum(axis=1)
    return totals, recents


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
