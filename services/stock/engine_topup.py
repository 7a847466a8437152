"""The top-up of the routes a batch pays (docs/engine.md §4).

Once the plan's routes are pruned to those whose shipments pay the trip, each route kept
carries one more lot of every item its origin can still give and its destination does not yet
receive, while each unit nets the bar: a unit riding a paid trip costs only what its origin
loses.
"""

from __future__ import annotations

import numpy as np

from services.stock.engine_cells import CellValues, unit_gains, unit_losses
from services.stock.engine_routing import Destinations, Plan, expand_groups, group_starts

# Rounds of the top-up of paid routes: an origin gives one lot of an item per round, each
# valued after what it already gave.
TOPUP_ROUNDS = 3


def _join_routes(
    routes: np.ndarray, n_nodes: int, dn: np.ndarray, dk: np.ndarray, gives: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(destination cell, origin) pairs: each destination cell (``dn``, ``dk``) joined with the kept
    routes (origin x n_nodes + destination, sorted) into its node whose origin ``gives`` the item,
    sorted by destination cell, then origin (the order the rounds break ties in).

    Joined from the smaller side: from the destination cells when few routes reach each node,
    from the origin cells that can still give a lot when they are fewer (at 1.8 M cells, 500,000
    destination cells on 20 routes each against 40,000 origin cells on 60)."""
    r_orig, r_dest = routes // n_nodes, routes % n_nodes  # sorted by origin, then destination
    in_count = np.bincount(r_dest, minlength=n_nodes)
    g_node, g_item = np.nonzero(gives)
    out_count, out_start = group_starts(r_orig, n_nodes)
    if int(in_count[dn].sum()) <= int(out_count[g_node].sum()):
        by_dest = np.lexsort((r_orig, r_dest))
        in_start = group_starts(r_dest[by_dest], n_nodes)[1]
        cell_of, pos = expand_groups(in_count[dn])
        c_orig = r_orig[by_dest][in_start[dn[cell_of]] + pos - 1]
        keep = gives[c_orig, dk[cell_of]]
        return cell_of[keep], c_orig[keep]
    route_of, pos = expand_groups(out_count[g_node])
    cell_index = np.full(gives.shape, -1, dtype=np.int32)
    cell_index[dn, dk] = np.arange(dn.shape[0], dtype=np.int32)
    c_cell = cell_index[r_dest[out_start[g_node[route_of]] + pos - 1], g_item[route_of]].astype(np.int64)
    c_orig = g_node[route_of]
    joined = c_cell >= 0
    order = np.lexsort((c_orig[joined], c_cell[joined]))
    return c_cell[joined][order], c_orig[joined][order]


def top_up(
    p: Plan,
    dest: Destinations,
    cells: CellValues,
    avail: np.ndarray,
    is_cd: np.ndarray,
    keep_cd: float,
    qmin: int,
    qmax: int,
    bar: float,
) -> Plan:
    """One more lot on the routes the batch pays, of every item the origin can still give and the
    destination does not yet receive, while each unit nets at least ``bar``.

    The trip is paid by the route's own shipments (``_prune_routes``): a unit riding it costs
    only what its origin loses. A lot's first ``qmin`` units pass on their mean, each further unit
    on its own. Cells that give or receive an item in the plan do neither here (no circles, one
    recommendation per origin, destination and item); an origin gives one lot of an item per
    round, valued after what it already sent.
    """
    if p.origin.shape[0] == 0:
        return p
    n_nodes, n_items = cells.held.shape
    sent = np.zeros(cells.held.shape, dtype=np.int64)
    np.add.at(sent, (p.origin, p.item), p.quantity)
    received = np.zeros(cells.held.shape, dtype=bool)
    received[p.dest, p.item] = True
    left = np.where(received, 0, avail - sent)
    pairs = _pairs(np.unique(p.origin * n_nodes + p.dest), dest, received, left >= qmin, bar)
    if pairs is None:
        return p
    c_cell, c_orig, dn, dk = pairs
    gains = _destination_gains(cells, dn, dk, qmax)
    out_o, out_d, out_k, out_q = [p.origin], [p.dest], [p.item], [p.quantity]
    filled = np.zeros(dn.shape[0], dtype=bool)
    for _ in range(TOPUP_ROUNDS):
        live = ~filled[c_cell] & (left[c_orig, dk[c_cell]] >= qmin)
        c_cell, c_orig = c_cell[live], c_orig[live]
        if c_cell.shape[0] == 0:
            break
        k = dk[c_cell]
        # each origin cell is valued once, shared by the destinations it may serve
        o_key = c_orig * n_items + k
        o_cells, o_of = np.unique(o_key, return_inverse=True)
        o_loss = _origin_losses(cells, sent, is_cd, keep_cd, o_cells, qmax)
        q, total = _lots(gains, c_cell, o_loss, o_of, np.minimum(left[c_orig, k], qmax), qmin, bar)
        cand = _one_lot_each(q, total, qmin, c_cell, o_key)
        if cand.shape[0] == 0:
            break
        o, d, kk, qq = c_orig[cand], dn[c_cell[cand]], k[cand], q[cand].astype(np.int64)
        out_o.append(o)
        out_d.append(d)
        out_k.append(kk)
        out_q.append(qq)
        sent[o, kk] += qq
        left[o, kk] -= qq
        filled[c_cell[cand]] = True
    if len(out_o) == 1:
        return p
    return Plan(*(np.concatenate(a).astype(np.int64) for a in (out_o, out_d, out_k, out_q)))


def _pairs(
    routes: np.ndarray, dest: Destinations, received: np.ndarray, gives: np.ndarray, bar: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The (destination cell, origin) pairs the top-up may fill: ``c_cell`` indexes the destination
    cells (``dn``, ``dk``) some kept route (origin x n_nodes + destination, sorted) serves from an
    origin that ``gives`` the item, ``c_orig`` is that origin. None when there is no such pair."""
    n_nodes = received.shape[0]
    into = np.zeros(n_nodes, dtype=bool)
    into[routes % n_nodes] = True
    # destination cells: the candidates the plan left out (their first unit cleared the bar,
    # they give nothing) on a node a kept route reaches, whose first lot may still pay
    pick = ~received[dest.node, dest.item] & into[dest.node] & (dest.urgency >= bar)
    dn, dk = dest.node[pick].astype(np.int64), dest.item[pick].astype(np.int64)
    if dn.shape[0] == 0:
        return None
    c_cell, c_orig = _join_routes(routes, n_nodes, dn, dk, gives)
    if c_cell.shape[0] == 0:
        return None
    # only the destination cells some route can serve are valued
    used, c_cell = np.unique(c_cell, return_inverse=True)
    return c_cell, c_orig, dn[used], dk[used]


def _destination_gains(cells: CellValues, dn: np.ndarray, dk: np.ndarray, q_cap: int) -> np.ndarray:
    """(len(dn), q_cap) what each unit received adds at each destination cell (``engine_cells.unit_gains``)."""
    phi = None if cells.dispersion is None else cells.dispersion[dn, dk]
    held = cells.held[dn, dk]
    uplift = np.where(held <= 0, cells.uplift[dn, dk], 0.0)
    return unit_gains(held, cells.mu[dn, dk], phi, cells.alive[dn, dk], uplift, q_cap)


def _origin_losses(
    cells: CellValues, sent: np.ndarray, is_cd: np.ndarray, keep_cd: float, o_cells: np.ndarray, q_cap: int
) -> np.ndarray:
    """(len(o_cells), q_cap) what each origin cell (node x n_items + item) loses, unit by unit,
    after the ``sent`` units it already gave: a CD the value of keeping each unit."""
    n_items = cells.held.shape[1]
    o_node, o_item = o_cells // n_items, o_cells % n_items
    o_loss = np.full((o_cells.shape[0], q_cap), keep_cd)
    st = ~is_cd[o_node]
    if st.any():
        so, sk = o_node[st], o_item[st]
        phi = None if cells.dispersion is None else cells.dispersion[so, sk]
        held = cells.held[so, sk] - sent[so, sk]
        o_loss[st] = unit_losses(held, cells.mu[so, sk], phi, cells.alive[so, sk], q_cap)
    return o_loss


def _lots(
    gains: np.ndarray,
    c_cell: np.ndarray,
    o_loss: np.ndarray,
    o_of: np.ndarray,
    cap: np.ndarray,
    qmin: int,
    bar: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's lot and what it nets in all: a minimum lot netting ``bar`` on average, then the
    units while each nets ``bar`` (at most ``cap``, what the origin still has). A pair whose
    minimum lot falls short gets 0 units (and -inf) before its other units are valued."""
    ok = np.nonzero((gains[c_cell, :qmin] - o_loss[o_of, :qmin]).mean(axis=1) >= bar)[0]
    net = gains[c_cell[ok]] - o_loss[o_of[ok]]
    steps = np.arange(1, gains.shape[1] + 1)
    more = (net >= bar) & (steps[None, :] <= cap[ok][:, None])
    more[:, :qmin] = True
    q = np.zeros(c_cell.shape[0], dtype=np.int64)
    q[ok] = np.argmin(np.c_[more, np.zeros(more.shape[0], dtype=bool)], axis=1)
    total = np.full(c_cell.shape[0], -np.inf)
    total[ok] = np.cumsum(net, axis=1)[np.arange(ok.shape[0]), q[ok] - 1]  # q >= qmin >= 1
    return q, total


def _one_lot_each(
    q: np.ndarray, total: np.ndarray, qmin: int, c_cell: np.ndarray, o_key: np.ndarray
) -> np.ndarray:
    """The pairs that ship this round: the best lot of each destination cell, then of each origin
    cell, in the order of the pairs (which breaks ties)."""
    cand = np.nonzero(q >= qmin)[0]
    cand = cand[np.argsort(-total[cand], kind="stable")]
    _, first = np.unique(c_cell[cand], return_index=True)
    cand = cand[np.sort(first)]
    _, first = np.unique(o_key[cand], return_index=True)
    return cand[np.sort(first)]
