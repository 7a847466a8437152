"""Routing: which origins serve each destination's lots, and over which routes.

Part of the engine's planning (``engine_plan``, ``docs/engine.md`` §4). Destinations come
with their units in matching order; each item's candidate origins are its CDs first, then
the stores with most free stock. In rounds over each item's destinations, most urgent first,
each destination gets one lot from the cheapest shipment: a route the batch already uses
costs no trip more, and a trip not yet used is weighed shared among the items it could carry.
Up to ``ROUTING_PASSES`` lots, each from another origin, serve one destination and item.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

# Origins considered per item when routing (CDs first, then by free stock).
MAX_ORIGINS_PER_ITEM = 32
# Passes of the routing: a destination an origin served only in part asks the next origin.
# Each pass is one more lot (at most qtdMaxima units) from another origin, so a destination
# may receive up to ROUTING_PASSES x qtdMaxima units of an item.
ROUTING_PASSES = 3


def group_starts(sorted_keys: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    counts = np.bincount(sorted_keys, minlength=size)
    starts = np.cumsum(counts) - counts
    return counts, starts


def expand_groups(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For groups of the given sizes: the group index and 1-based position of each unit."""
    counts = np.asarray(counts, dtype=np.int64)
    owner = np.repeat(np.arange(counts.shape[0]), counts)
    starts = np.cumsum(counts) - counts
    pos = np.arange(owner.shape[0]) - starts[owner] + 1
    return owner, pos


@dataclass
class Plan:
    """Routes chosen by the planner, in the order they were assigned."""

    origin: np.ndarray
    dest: np.ndarray
    item: np.ndarray
    quantity: np.ndarray

    @classmethod
    def empty(cls) -> Plan:
        none = np.zeros(0, dtype=np.int64)
        return cls(none, none.copy(), none.copy(), none.copy())

    def take(self, keep: np.ndarray) -> Plan:
        return Plan(self.origin[keep], self.dest[keep], self.item[keep], self.quantity[keep])


@dataclass
class Destinations:
    """Cells that may receive their item, and their units in matching order."""

    item: np.ndarray  # (D,) item of each candidate cell, ordered by item, then node
    node: np.ndarray  # (D,) its node
    urgency: np.ndarray  # (D,) mean gain of its first qmin units
    unit_cell: np.ndarray  # (U,) candidate cell of each unit: by item, then value descending
    unit_value: np.ndarray  # (U,) expected units sold that the unit adds (plus the lot bonus)


def _origin_table(
    avail: np.ndarray, ok_: np.ndarray, on: np.ndarray, is_cd: np.ndarray, n_items: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each item's candidate origins (CDs first, then by free stock), up to MAX_ORIGINS_PER_ITEM.

    Returns the row of each item in the table (-1 without origins), the origin node of
    each cell (-1 when empty) and the units it may still give.
    """
    o_avail = avail[on, ok_]
    o_order = np.lexsort((on, -o_avail, ~is_cd[on], ok_))
    o_item, o_node, o_avail = ok_[o_order], on[o_order], o_avail[o_order]
    _, os_start = group_starts(o_item, n_items)
    o_rank = np.arange(o_item.shape[0]) - os_start[o_item]
    keep = o_rank < MAX_ORIGINS_PER_ITEM
    o_item, o_node, o_avail, o_rank = o_item[keep], o_node[keep], o_avail[keep], o_rank[keep]
    items_with_origins = np.unique(o_item)
    row_of_item = np.full(n_items, -1, dtype=np.int64)
    row_of_item[items_with_origins] = np.arange(items_with_origins.shape[0])
    width = int(o_rank.max()) + 1
    cand_node = np.full((items_with_origins.shape[0], width), -1, dtype=np.int64)
    cand_rem = np.zeros((items_with_origins.shape[0], width), dtype=np.int64)
    cand_node[row_of_item[o_item], o_rank] = o_node
    cand_rem[row_of_item[o_item], o_rank] = o_avail
    return row_of_item, cand_node, cand_rem


def _trip_sharers(
    d_item: np.ndarray,
    d_node: np.ndarray,
    row_of_item: np.ndarray,
    cand_node: np.ndarray,
    cand_rem: np.ndarray,
    qmin: int,
    n_nodes: int,
) -> np.ndarray:
    """(N, N) items each route could carry among the destination lines left (at least 1).

    A trip not yet opened is charged to an item at its cost over this count: a route that
    can carry many of a destination's items is worth opening once for all of them, where
    each item choosing alone would open its own cheapest (a greedy set cover).
    """
    rows = row_of_item[d_item]
    has = rows >= 0
    lines = sparse.csr_matrix(
        (np.ones(int(has.sum())), (d_node[has], rows[has])), shape=(n_nodes, cand_node.shape[0])
    )
    r, c = np.nonzero((cand_node >= 0) & (cand_rem >= qmin))
    origins = sparse.csr_matrix(
        (np.ones(r.shape[0]), (r, cand_node[r, c])), shape=(cand_node.shape[0], n_nodes)
    )
    carried = (lines @ origins).T.toarray()  # [origin, destination]
    return np.maximum(carried, 1.0)


def route_lots(
    dest: Destinations,
    q_cell: np.ndarray,
    avail: np.ndarray,
    ok_: np.ndarray,
    on: np.ndarray,
    is_cd: np.ndarray,
    cost: np.ndarray,
    trip: np.ndarray,
    priorizar_cd: bool,
    qmin: int,
    qmax: int,
    n_items: int,
) -> Plan:
    """Origins for each destination, in rounds over each item's destinations, most urgent first.

    In a round every item serves one destination with one lot of at most ``qmax`` units:
    an origin that can send the whole lot beats one that cannot, a CD beats a store under
    ``priorizar_cd``, then the cheapest shipment wins: ``cost`` (the trip, ``trip``, plus a
    tie-break by distance) once per route, nothing more on a route the batch already uses, so
    the items bound for a store ride together. What is left (at least ``qmin`` units) goes to
    another origin, not one already serving that destination, in the next pass.
    """
    d_sel = np.nonzero(q_cell > 0)[0]
    if d_sel.shape[0] == 0 or ok_.shape[0] == 0:
        return Plan.empty()
    d_item, d_node, d_q, d_urg = dest.item[d_sel], dest.node[d_sel], q_cell[d_sel], dest.urgency[d_sel]
    d_order = np.lexsort((d_node, -d_urg, d_item))
    d_item, d_node, d_q = d_item[d_order], d_node[d_order], d_q[d_order].astype(np.int64)
    row_of_item, cand_node, cand_rem = _origin_table(avail, ok_, on, is_cd, n_items)
    store_penalty = np.where(is_cd, 0.0, 1.0e6 if priorizar_cd else 0.0)
    # origins already serving each destination line: one recommendation per origin, destination, item
    used = np.full((d_item.shape[0], ROUTING_PASSES), -1, dtype=np.int64)
    n_nodes = cost.shape[0]
    flat_cost = np.ascontiguousarray(cost, dtype=np.float64).ravel()
    flat_trip = np.ascontiguousarray(trip, dtype=np.float64).ravel()
    opened = np.zeros(n_nodes * n_nodes, dtype=bool)  # routes the batch already uses, by flat index

    out_o, out_d, out_k, out_q = [], [], [], []
    for p in range(ROUTING_PASSES):
        share = _trip_sharers(d_item, d_node, row_of_item, cand_node, cand_rem, qmin, n_nodes).ravel()
        _, ds_start = group_starts(d_item, n_items)
        d_rank = np.arange(d_item.shape[0]) - ds_start[d_item]
        by_round = np.argsort(d_rank, kind="stable")
        bounds = np.searchsorted(d_rank[by_round], np.arange(int(d_rank.max()) + 2))
        left = np.zeros(d_item.shape[0], dtype=np.int64)
        for r in range(bounds.shape[0] - 1):
            sel = by_round[bounds[r] : bounds[r + 1]]
            rows = row_of_item[d_item[sel]]
            has = rows >= 0
            sel, rows = sel[has], rows[has]
            if sel.shape[0] == 0:
                continue
            nodes = cand_node[rows]
            rem = cand_rem[rows]
            dnode = d_node[sel]
            q = d_q[sel]
            lot = np.minimum(q, qmax)
            safe_nodes = np.maximum(nodes, 0)
            route = safe_nodes * n_nodes + dnode[:, None]  # flat (origin, destination) index
            valid = (nodes >= 0) & (rem >= qmin) & (nodes != dnode[:, None])
            for u in range(p):
                valid &= nodes != used[sel, u][:, None]
            key = (
                np.where(rem >= lot[:, None], 0.0, 1.0e9)
                + store_penalty[safe_nodes]
                + flat_cost[route]
                - flat_trip[route]
                + np.where(opened[route], 0.0, flat_trip[route] / share[route])
            )
            key = np.where(valid, key, np.inf)
            best = np.argmin(key, axis=1)
            lines = np.arange(sel.shape[0])
            ok = np.isfinite(key[lines, best])
            if not ok.any():
                continue
            sel, rows, best, lines = sel[ok], rows[ok], best[ok], lines[ok]
            send = np.minimum(lot[ok], rem[lines, best])
            cand_rem[rows, best] -= send
            left[sel] = q[ok] - send
            used[sel, p] = nodes[lines, best]
            opened[route[lines, best]] = True
            out_o.append(nodes[lines, best])
            out_d.append(d_node[sel])
            out_k.append(d_item[sel])
            out_q.append(send)
        again = left >= qmin
        if not again.any():
            break
        d_item, d_node, d_q, used = d_item[again], d_node[again], left[again], used[again]
    if not out_o:
        return Plan.empty()
    return Plan(np.concatenate(out_o), np.concatenate(out_d), np.concatenate(out_k), np.concatenate(out_q))
