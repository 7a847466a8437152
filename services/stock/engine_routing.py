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

    @classmethod
    def joined(cls, parts: list[Plan]) -> Plan:
        """The parts' shipments one after the other."""
        if not parts:
            return cls.empty()
        columns = ("origin", "dest", "item", "quantity")
        return cls(*(np.concatenate([getattr(part, name) for part in parts]) for name in columns))


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
    lines = _Lines.most_urgent_first(dest, d_sel, q_cell)
    router = _Router.over(avail, ok_, on, is_cd, cost, trip, priorizar_cd, qmin, qmax, n_items)
    for p in range(ROUTING_PASSES):
        left = router.serve_pass(lines, p)
        again = left >= qmin
        if not again.any():
            break
        lines = lines.take(again, left)
    return Plan.joined(router.shipped)


@dataclass
class _Lines:
    """The destination lines (a cell and the units it still asks for) a routing pass serves,
    each item's most urgent first, with the origins already serving each line."""

    item: np.ndarray
    node: np.ndarray
    q: np.ndarray
    # (lines, ROUTING_PASSES) origin of each pass's lot, -1 before it: one recommendation per
    # origin, destination and item
    used: np.ndarray

    @classmethod
    def most_urgent_first(cls, dest: Destinations, d_sel: np.ndarray, q_cell: np.ndarray) -> _Lines:
        d_item, d_node, d_q, d_urg = dest.item[d_sel], dest.node[d_sel], q_cell[d_sel], dest.urgency[d_sel]
        order = np.lexsort((d_node, -d_urg, d_item))
        used = np.full((d_sel.shape[0], ROUTING_PASSES), -1, dtype=np.int64)
        return cls(d_item[order], d_node[order], d_q[order].astype(np.int64), used)

    def take(self, keep: np.ndarray, left: np.ndarray) -> _Lines:
        """The lines ``keep`` selects, each asking for its ``left`` units."""
        return _Lines(self.item[keep], self.node[keep], left[keep], self.used[keep])

    def rounds(self, n_items: int) -> list[np.ndarray]:
        """The lines of each round: the r-th line of every item, in the r-th round."""
        _, starts = group_starts(self.item, n_items)
        rank = np.arange(self.item.shape[0]) - starts[self.item]
        by_round = np.argsort(rank, kind="stable")
        bounds = np.searchsorted(rank[by_round], np.arange(int(rank.max()) + 2))
        return [by_round[bounds[r] : bounds[r + 1]] for r in range(bounds.shape[0] - 1)]


@dataclass
class _Router:
    """What the rounds share: each item's candidate origins and what they may still give, the
    routes the batch already uses, and the shipments chosen so far."""

    row_of_item: np.ndarray
    cand_node: np.ndarray
    cand_rem: np.ndarray
    store_penalty: np.ndarray  # added to a store origin's key under priorizar_cd
    cost: np.ndarray  # (N x N,) flat: a shipment's cost with its distance tie-break
    trip: np.ndarray  # (N x N,) flat: a shipment's cost
    opened: np.ndarray  # (N x N,) flat: routes the batch already uses
    n_nodes: int
    qmin: int
    qmax: int
    n_items: int
    shipped: list[Plan]

    @classmethod
    def over(
        cls,
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
    ) -> _Router:
        row_of_item, cand_node, cand_rem = _origin_table(avail, ok_, on, is_cd, n_items)
        n_nodes = cost.shape[0]
        return cls(
            row_of_item,
            cand_node,
            cand_rem,
            store_penalty=np.where(is_cd, 0.0, 1.0e6 if priorizar_cd else 0.0),
            cost=np.ascontiguousarray(cost, dtype=np.float64).ravel(),
            trip=np.ascontiguousarray(trip, dtype=np.float64).ravel(),
            opened=np.zeros(n_nodes * n_nodes, dtype=bool),
            n_nodes=n_nodes,
            qmin=qmin,
            qmax=qmax,
            n_items=n_items,
            shipped=[],
        )

    def serve_pass(self, lines: _Lines, p: int) -> np.ndarray:
        """Pass ``p``: one lot for each line, round by round; the units each line still asks for."""
        share = _trip_sharers(
            lines.item, lines.node, self.row_of_item, self.cand_node, self.cand_rem, self.qmin, self.n_nodes
        ).ravel()
        left = np.zeros(lines.item.shape[0], dtype=np.int64)
        for sel in lines.rounds(self.n_items):
            self._serve_round(lines, sel, p, share, left)
        return left

    def _serve_round(
        self, lines: _Lines, sel: np.ndarray, p: int, share: np.ndarray, left: np.ndarray
    ) -> None:
        """Serve the lines ``sel`` (one per item) from their cheapest origin each; ``left`` gets
        what each line served still asks for."""
        rows = self.row_of_item[lines.item[sel]]
        has = rows >= 0
        sel, rows = sel[has], rows[has]
        if sel.shape[0] == 0:
            return
        nodes = self.cand_node[rows]
        rem = self.cand_rem[rows]
        dnode = lines.node[sel]
        q = lines.q[sel]
        lot = np.minimum(q, self.qmax)
        route = np.maximum(nodes, 0) * self.n_nodes + dnode[:, None]  # flat (origin, destination) index
        valid = (nodes >= 0) & (rem >= self.qmin) & (nodes != dnode[:, None])
        for u in range(p):
            valid &= nodes != lines.used[sel, u][:, None]
        key = np.where(valid, self._keys(nodes, rem, lot, route, share), np.inf)
        best = np.argmin(key, axis=1)
        at = np.arange(sel.shape[0])
        ok = np.isfinite(key[at, best])
        if not ok.any():
            return
        sel, rows, best, at = sel[ok], rows[ok], best[ok], at[ok]
        send = np.minimum(lot[ok], rem[at, best])
        self.cand_rem[rows, best] -= send
        left[sel] = q[ok] - send
        lines.used[sel, p] = nodes[at, best]
        self.opened[route[at, best]] = True
        self.shipped.append(Plan(nodes[at, best], lines.node[sel], lines.item[sel], send))

    def _keys(
        self, nodes: np.ndarray, rem: np.ndarray, lot: np.ndarray, route: np.ndarray, share: np.ndarray
    ) -> np.ndarray:
        """What each candidate shipment costs the batch, lowest first: an origin short of the whole
        lot last, a store after the CDs under priorizar_cd, then the shipment's cost with the trip
        charged only on a route not yet used, shared among the items it could carry."""
        return (
            np.where(rem >= lot[:, None], 0.0, 1.0e9)
            + self.store_penalty[np.maximum(nodes, 0)]
            + self.cost[route]
            - self.trip[route]
            + np.where(self.opened[route], 0.0, self.trip[route] / share[route])
        )
