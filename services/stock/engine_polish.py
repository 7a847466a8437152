"""A local search after the greedy plan and its top-up (docs/engine.md §4).

The routing picks each lot's origin by what its shipment costs, not by what the origin loses,
and the quantities are fixed before the routes: a lot may come from a store that would have sold
the units while another origin gives them for less, a lot may ride a paid route while a better
one is left out because its item's origin was taken. In a few rounds, each valued exactly on the
expected sales the destinations gain and the origins lose and on the trips opened or closed:

- **swap**: a shipment moves whole to one of its item's other origins;
- **trade**: the weakest minimum lots are dropped for as many of the best minimum lots the plan
  leaves out (destination candidates of §2, origins with a free lot);
- **closure**: a route's trip is saved by moving each of its shipments to an origin whose trip
  to the same destination the plan already pays.

Only moves that gain are made, in each round a set touching no origin cell or route twice, so
every gain is exact; the units moved are unchanged, every shipment still nets the bar, a trip a
lot opens is paid by it, and no route is left below what pays its trip.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from services.stock.engine_cells import CellValues, unit_losses
from services.stock.engine_demand import pmf_step, prob_at_least, prob_exactly
from services.stock.engine_routing import Destinations, Plan, expand_groups, group_starts

# Rounds of the search (swaps, then trades); each values the shipments touched again.
POLISH_ROUNDS = 2
# Other origins weighed per item: the ones losing least on their next unit given.
POLISH_ORIGINS = 6
# Independent sets drawn per round from the moves that gain (no revaluation between them).
POLISH_PICKS = 4
# Shipments of a route the search may close: a trip is worth a few lots, not many.
CLOSE_MAX_SHIPMENTS = 3
# A move must gain more than this (expected units sold): float noise never moves a lot.
MIN_GAIN = 1e-6


@dataclass
class _Context:
    """What the search reads and never changes."""

    cells: CellValues
    avail: np.ndarray  # (N, K) what each cell may give in all
    is_cd: np.ndarray
    keep_cd: float
    cost: np.ndarray  # (N, N) a trip's cost
    paid_trips: bool  # some trip costs: routes must pay (without, items are independent)
    priorizar_cd: bool
    qmin: int
    qmax: int
    bar: float
    c_node: np.ndarray  # each item's candidate origins (``_context``), sorted by item
    c_item: np.ndarray
    c_count: np.ndarray  # (K,) candidates per item
    c_start: np.ndarray
    a_node: np.ndarray  # destination candidates the plan leaves out, with a minimum lot's gain
    a_item: np.ndarray
    a_gain: np.ndarray


@dataclass
class _State:
    """The plan as it stands at a round, and what each move is valued on."""

    plan: Plan
    gain: np.ndarray  # (T,) what each shipment adds at its destination
    sent: np.ndarray  # (N, K) units each cell gives
    saved: np.ndarray  # (T,) what its origin would keep back without the shipment
    routes: np.ndarray  # the plan's routes, origin x N + destination, sorted
    route_of: np.ndarray  # (T,) each shipment's route
    n_ship: np.ndarray  # per route: its shipments,
    units: np.ndarray  # its units,
    slack: np.ndarray  # and what they add beyond its trip and the bar on each unit
    c_loss: np.ndarray  # (candidates, qmax + 1) what giving j more units loses at each
    cd_free: np.ndarray  # (K,) the most units a CD may still give of each item
    plan_keys: np.ndarray  # the plan's (origin x N + destination) x K + item, sorted


def polish(
    p: Plan,
    dest: Destinations,
    cells: CellValues,
    avail: np.ndarray,
    is_cd: np.ndarray,
    keep_cd: float,
    cost: np.ndarray,
    rules: tuple[bool, int, int, float],
) -> Plan:
    """The plan after up to ``POLISH_ROUNDS`` rounds of swaps and trades, each raising the batch's
    expected sales less its origins' losses and trips at the same units. ``avail`` is what each
    cell may give in all, ``dest`` the destination candidates; ``rules`` is (priorizarCd,
    qtdMinima, qtdMaxima, the bar)."""
    if p.origin.shape[0] == 0:
        return p
    p = Plan(*(a.astype(np.int64) for a in (p.origin, p.dest, p.item, p.quantity)))
    gain = _lot_gains(cells, p.dest, p.item, p.quantity)
    ctx = _context(p, dest, cells, avail, is_cd, keep_cd, cost, rules)
    n_items = cells.held.shape[1]
    state = _state(ctx, p, gain)
    for last in range(POLISH_ROUNDS - 1, -1, -1):
        moved = _swaps(ctx, state)
        if moved is not None:
            state = _moved(ctx, state, gain, *moved)
            p = state.plan
        closed = _closures(ctx, state)
        if closed is not None:
            state = _moved(ctx, state, gain, *closed)
            p = state.plan
        # trades pair lots of different items: only where trips tie them together (free trips
        # keep each item's plan its own, as partitioned generation needs)
        traded = _trades(ctx, state) if ctx.paid_trips else None
        if traded is not None:
            p, gain, saved, touched = traded
            if last:
                state = _state(ctx, p, gain, _stale(p, saved, touched, n_items))
        if moved is None and closed is None and traded is None:
            break
    return p


def _moved(ctx: _Context, state: _State, gain: np.ndarray, t: np.ndarray, new: np.ndarray) -> _State:
    """The state with shipments ``t`` sent from the origins ``new`` (their gains unchanged)."""
    p = state.plan
    n_items = ctx.cells.held.shape[1]
    touched = np.r_[p.origin[t], new] * n_items + np.r_[p.item[t], p.item[t]]
    p.origin[t] = new
    return _state(ctx, p, gain, _stale(p, state.saved, touched, n_items))


def _stale(p: Plan, saved: np.ndarray, touched: np.ndarray, n_items: int) -> np.ndarray:
    """``saved`` with the shipments from the ``touched`` origin cells (node x K + item) to value again."""
    return np.where(np.isin(p.origin * n_items + p.item, touched), np.nan, saved)


def _tails(held: np.ndarray, mu: np.ndarray, phi: np.ndarray | None, q: np.ndarray) -> np.ndarray:
    """E[min(D, held + q)] - E[min(D, held)] = the sum of P(D >= held + j) for j = 1..q, by the
    recursion of ``engine_cells.unit_gains``: two special-function calls per cell."""
    h = held.astype(np.float64)
    out = np.zeros(h.shape[0])
    tail = prob_at_least(h + 1.0, mu, phi)
    pmf = prob_exactly(h + 1.0, mu, phi)
    for j in range(1, int(q.max(initial=0)) + 1):
        out += np.where(j <= q, tail, 0.0)
        tail = np.maximum(tail - pmf, 0.0)
        pmf = pmf * pmf_step(h + j, mu, phi) / (h + j + 1.0)
    return out


def _kept_back(ctx: _Context, o: np.ndarray, k: np.ndarray, left: np.ndarray, q: np.ndarray) -> np.ndarray:
    """What origin cells left with ``left`` units would sell more with ``q`` more (a CD: the value
    of keeping them)."""
    out = ctx.keep_cd * q.astype(np.float64)
    st = np.nonzero(~ctx.is_cd[o])[0]
    if st.shape[0]:
        cells, so, sk = ctx.cells, o[st], k[st]
        phi = None if cells.dispersion is None else cells.dispersion[so, sk]
        out[st] = cells.alive[so, sk] * _tails(left[st], cells.mu[so, sk], phi, q[st])
    return out


def _lot_gains(cells: CellValues, d: np.ndarray, k: np.ndarray, q: np.ndarray) -> np.ndarray:
    """What ``q`` units add at each destination cell (the run they complete included)."""
    held = cells.held[d, k]
    phi = None if cells.dispersion is None else cells.dispersion[d, k]
    gain = cells.alive[d, k] * _tails(held, cells.mu[d, k], phi, q)
    return gain + np.where(held <= 0, cells.uplift[d, k], 0.0)


def _context(
    p: Plan,
    dest: Destinations,
    cells: CellValues,
    avail: np.ndarray,
    is_cd: np.ndarray,
    keep_cd: float,
    cost: np.ndarray,
    rules: tuple[bool, int, int, float],
) -> _Context:
    """The candidate origins of each item (the cells free to give a lot, the ``POLISH_ORIGINS``
    losing least on their next unit), and the destination candidates the plan leaves out whose
    minimum lot clears the bar, with what that lot adds."""
    priorizar_cd, qmin, qmax, bar = rules
    n_nodes, n_items = cells.held.shape
    sent = _sent(p, n_nodes, n_items)
    receives = np.zeros((n_nodes, n_items), dtype=bool)
    receives[p.dest, p.item] = True
    # only the items shipped or with a destination candidate left out
    wanted = np.zeros(n_items, dtype=bool)
    wanted[p.item] = True
    wanted[dest.item[~receives[dest.node, dest.item]]] = True
    free = avail[:, wanted] - sent[:, wanted]
    c_node, c_col = np.nonzero(free >= qmin)
    c_item = np.nonzero(wanted)[0][c_col]
    left = cells.held[c_node, c_item] - sent[c_node, c_item]
    mu = cells.mu[c_node, c_item]
    var = mu if cells.dispersion is None else mu * (1.0 + cells.dispersion[c_node, c_item] * mu)
    # ranked by the normal approximation of the next unit's loss, alive x P(D >= left): the
    # candidates' losses are then valued exactly (``_state``)
    z = (left - 0.5 - mu) / np.sqrt(np.maximum(var, 1e-12))
    first = np.where(is_cd[c_node], keep_cd, cells.alive[c_node, c_item] * ndtr(-z))
    order = np.lexsort((c_node, first, c_item))
    c_node, c_item = c_node[order], c_item[order]
    _, start = group_starts(c_item, n_items)
    keep = np.arange(c_item.shape[0]) - start[c_item] < POLISH_ORIGINS
    c_node, c_item = c_node[keep], c_item[keep]
    c_count, c_start = group_starts(c_item, n_items)
    pick = ~receives[dest.node, dest.item] & (dest.urgency >= bar) & (c_count[dest.item] > 0)
    a_node, a_item = dest.node[pick].astype(np.int64), dest.item[pick].astype(np.int64)
    a_gain = dest.urgency[pick] * qmin  # a minimum lot's gain, as the greedy valued it
    return _Context(
        cells, avail, is_cd, keep_cd, cost, bool((cost > 0).any()), priorizar_cd, qmin, qmax, bar,
        c_node, c_item, c_count, c_start, a_node, a_item, a_gain,
    )  # fmt: skip


def _state(ctx: _Context, p: Plan, gain: np.ndarray, saved: np.ndarray | None = None) -> _State:
    """Each shipment's value to the plan, each route's, and each candidate origin's losses;
    ``saved``, what each origin keeps back without its shipment, where known (nan: to value)."""
    cells = ctx.cells
    n_nodes, n_items = cells.held.shape
    o, k, q = p.origin, p.item, p.quantity
    sent = _sent(p, n_nodes, n_items)
    saved = np.full(o.shape[0], np.nan) if saved is None else saved.copy()
    todo = np.nonzero(np.isnan(saved))[0]
    ot, kt = o[todo], k[todo]
    saved[todo] = _kept_back(ctx, ot, kt, cells.held[ot, kt] - sent[ot, kt], q[todo])
    routes, route_of = np.unique(o * n_nodes + p.dest, return_inverse=True)
    n_ship = np.bincount(route_of, minlength=routes.shape[0])
    units = np.bincount(route_of, weights=q, minlength=routes.shape[0])
    worth = np.bincount(route_of, weights=gain - saved, minlength=routes.shape[0])
    slack = worth - ctx.cost.ravel()[routes] - ctx.bar * units
    c_node, c_item = ctx.c_node, ctx.c_item
    left = cells.held[c_node, c_item] - sent[c_node, c_item]
    phi = None if cells.dispersion is None else cells.dispersion[c_node, c_item]
    mu = cells.mu[c_node, c_item]
    unit = unit_losses(left, mu, phi, cells.alive[c_node, c_item], ctx.qmax)
    # a cell expected to sell nothing loses nothing (the recursion divides by its mean)
    unit = np.where(ctx.is_cd[c_node][:, None], ctx.keep_cd, np.where(mu[:, None] > 0, unit, 0.0))
    unit = np.nan_to_num(unit, nan=np.inf)
    c_loss = np.c_[np.zeros(c_node.shape[0]), np.cumsum(unit, axis=1)]
    cd_free = (ctx.avail[ctx.is_cd] - sent[ctx.is_cd]).max(axis=0, initial=0)
    plan_keys = np.sort(routes[route_of] * n_items + k)
    return _State(p, gain, sent, saved, routes, route_of, n_ship, units, slack, c_loss, cd_free, plan_keys)


def _sent(p: Plan, n_nodes: int, n_items: int) -> np.ndarray:
    """(N, K) the units each cell gives in the plan."""
    flat = np.bincount(p.origin * n_items + p.item, weights=p.quantity, minlength=n_nodes * n_items)
    return flat.astype(np.int64).reshape(n_nodes, n_items)


def _route_index(state: _State, route: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(whether each route is in the plan, its index in ``state.routes`` when it is)."""
    if state.routes.shape[0] == 0:
        return np.zeros(route.shape[0], dtype=bool), np.zeros(route.shape[0], dtype=np.int64)
    at = np.minimum(np.searchsorted(state.routes, route), state.routes.shape[0] - 1)
    return state.routes[at] == route, at


def _leaves_ok(ctx: _Context, state: _State, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For shipments ``t`` leaving their route: (the route closes, the route may lose them: it
    closes, or still pays its trip and bar, or paid less already and pays no less)."""
    r = state.route_of[t]
    closes = state.n_ship[r] == 1
    if not ctx.paid_trips:
        return closes, np.ones(t.shape[0], dtype=bool)
    left = state.slack[r] - (state.gain[t] - state.saved[t]) + ctx.bar * state.plan.quantity[t]
    return closes, closes | (left >= np.minimum(state.slack[r], 0.0))


def _origin_ok(ctx: _Context, state: _State, new: np.ndarray, k: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Whether ``new`` may give ``q`` units of ``k``: free stock and, under priorizarCd, no CD
    that could give them instead of a store."""
    ok = ctx.avail[new, k] - state.sent[new, k] >= q
    if ctx.priorizar_cd:
        ok &= ctx.is_cd[new] | (state.cd_free[k] < q)
    return ok


def _independent(keys: list[np.ndarray], n_keys: int) -> np.ndarray:
    """The moves (in rank order) to make together: repeatedly, those first among the moves left
    to claim each of their keys (origin cells, routes); the others sharing a key wait."""
    n = keys[0].shape[0]
    alive = np.ones(n, dtype=bool)
    taken = np.zeros(n_keys, dtype=bool)
    chosen = np.zeros(n, dtype=bool)
    for _ in range(POLISH_PICKS):
        idx = np.nonzero(alive)[0]
        if idx.shape[0] == 0:
            break
        first = np.full(n_keys, n, dtype=np.int64)
        for key in keys:
            np.minimum.at(first, key[idx], idx)
        win = np.ones(idx.shape[0], dtype=bool)
        for key in keys:
            win &= first[key[idx]] == idx
        chosen[idx[win]] = True
        for key in keys:
            taken[key[idx[win]]] = True
        clash = np.zeros(n, dtype=bool)
        for key in keys:
            clash |= taken[key]
        alive &= ~clash & ~chosen
    return np.nonzero(chosen)[0]


def _swaps(ctx: _Context, state: _State) -> tuple[np.ndarray, np.ndarray] | None:
    """The shipments to move whole to another origin, and their new origins; None when no swap
    gains. A swap gains what its old origin keeps back less what the new one loses, plus a trip
    it closes, less one it opens."""
    n_nodes, n_items = ctx.cells.held.shape
    o, d, k, q = state.plan.origin, state.plan.dest, state.plan.item, state.plan.quantity
    closes, leaves = _leaves_ok(ctx, state, np.arange(o.shape[0]))
    freed = state.saved + np.where(closes, ctx.cost[o, d], 0.0)
    # a shipment whose origin loses nothing and whose trip stays gains nothing by moving
    movable = np.nonzero(leaves & (freed > MIN_GAIN))[0]
    if ctx.priorizar_cd:
        movable = movable[~ctx.is_cd[o[movable]]]  # a CD's lot never moves to a store
    t, pos = expand_groups(ctx.c_count[k[movable]])
    t = movable[t]
    c = ctx.c_start[k[t]] + pos - 1
    new, tk, tq, td = ctx.c_node[c], k[t], q[t], d[t]
    ok = (new != o[t]) & (new != td) & _origin_ok(ctx, state, new, tk, tq)
    t, c, new, tk, tq, td = t[ok], c[ok], new[ok], tk[ok], tq[ok], td[ok]
    added = state.c_loss[c, tq]
    there, _ = _route_index(state, new * n_nodes + td)
    new_cost = np.where(there, 0.0, ctx.cost[new, td])
    delta = freed[t] - added - new_cost
    ok = (delta > MIN_GAIN) & (state.gain[t] - added >= ctx.bar * tq + new_cost)
    t, new, tk, td, delta = t[ok], new[ok], tk[ok], td[ok], delta[ok]
    keys = (new * n_nodes + td) * n_items + tk
    at = np.minimum(np.searchsorted(state.plan_keys, keys), state.plan_keys.shape[0] - 1)
    ok = state.plan_keys[at] != keys  # one recommendation per origin, destination and item
    if not ok.any():
        return None
    t, new, tk, td, delta = t[ok], new[ok], tk[ok], td[ok], delta[ok]
    order = np.lexsort((new, t, -delta))
    t, new, tk, td = t[order], new[order], tk[order], td[order]
    cells_n, routes_n = n_nodes * n_items, n_nodes * n_nodes
    keys = [
        o[t] * n_items + tk,
        new * n_items + tk,
        cells_n + o[t] * n_nodes + td,
        cells_n + new * n_nodes + td,
    ]
    if not ctx.paid_trips:
        keys = keys[:2]  # free trips tie no items together (as the pruning of routes)
    pick = _independent(keys, cells_n + routes_n)  # one per shipment: it claims its old origin cell
    return t[pick], new[pick]


def _closures(ctx: _Context, state: _State) -> tuple[np.ndarray, np.ndarray] | None:
    """Routes to close, as (their shipments, each one's new origin): every shipment of the route
    moves whole to an origin whose trip to the same destination the plan already pays, losing
    less there than the trip saved. None when no route closes with a gain."""
    if not ctx.paid_trips or state.routes.shape[0] < 2:
        return None
    n_nodes, n_items = ctx.cells.held.shape
    p = state.plan
    o, d, k, q = p.origin, p.dest, p.item, p.quantity
    r_origin, r_dest = state.routes // n_nodes, state.routes % n_nodes
    # each shipment of a route small enough to close against every route into its destination
    small = np.nonzero(state.n_ship[state.route_of] <= CLOSE_MAX_SHIPMENTS)[0]
    by_dest = np.argsort(r_dest, kind="stable")
    counts, starts = group_starts(r_dest[by_dest], n_nodes)
    t, pos = expand_groups(counts[d[small]])
    t = small[t]
    r2 = by_dest[starts[d[t]] + pos - 1]
    new, tk, tq = r_origin[r2], k[t], q[t]
    receives = np.zeros(ctx.cells.held.shape, dtype=bool)
    receives[d, k] = True
    ok = (new != o[t]) & ~receives[new, tk] & _origin_ok(ctx, state, new, tk, tq)
    if ctx.priorizar_cd:
        ok &= ~ctx.is_cd[o[t]] | ctx.is_cd[new]  # a CD's lot never moves to a store
    keys = (new * n_nodes + d[t]) * n_items + tk
    at = np.minimum(np.searchsorted(state.plan_keys, keys), state.plan_keys.shape[0] - 1)
    ok &= state.plan_keys[at] != keys  # one recommendation per origin, destination and item
    t, r2, new, tk, tq = t[ok], r2[ok], new[ok], tk[ok], tq[ok]
    left = ctx.cells.held[new, tk] - state.sent[new, tk]
    added = _kept_back(ctx, new, tk, left - tq, tq)
    ok = state.gain[t] - added >= ctx.bar * tq
    t, r2, new, delta = t[ok], r2[ok], new[ok], (state.saved[t] - added)[ok]
    order = np.lexsort((new, -delta, t))
    best = order[np.unique(t[order], return_index=True)[1]]  # each shipment's best new origin
    t, r2, new, delta = t[best], r2[best], new[best], delta[best]
    route = state.route_of[t]
    n_routes = state.routes.shape[0]
    whole = np.bincount(route, minlength=n_routes) == state.n_ship
    value = ctx.cost.ravel()[state.routes] + np.bincount(route, weights=delta, minlength=n_routes)
    closing = np.nonzero(whole & (value > MIN_GAIN))[0]
    if closing.shape[0] == 0:
        return None
    closing = closing[np.argsort(-value[closing], kind="stable")]
    by_route = np.argsort(route, kind="stable")
    counts, starts = group_starts(route[by_route], n_routes)
    # one at a time, best first: a route closed never receives, a route receiving never closes,
    # and no origin cell is touched twice (each gain stays exact)
    closed_or_receiving = np.zeros(n_routes, dtype=np.int8)  # 1 closed, 2 receiving
    claimed: set[int] = set()
    moves = []
    for r in closing.tolist():
        idx = by_route[starts[r] : starts[r] + counts[r]]
        cells = set((o[t[idx]] * n_items + k[t[idx]]).tolist()) | set(
            (new[idx] * n_items + k[t[idx]]).tolist()
        )
        if closed_or_receiving[r] or (closed_or_receiving[r2[idx]] == 1).any() or cells & claimed:
            continue
        closed_or_receiving[r] = 1
        closed_or_receiving[r2[idx]] = 2
        claimed |= cells
        moves.append(idx)
    if not moves:
        return None
    idx = np.concatenate(moves)
    return t[idx], new[idx]


def _trades(ctx: _Context, state: _State) -> tuple[Plan, np.ndarray, np.ndarray, np.ndarray] | None:
    """The plan's weakest minimum lots traded for the best ones it leaves out, pair by pair while
    the new lot adds more (net of its origin's loss and of a trip it opens) than the old (net of
    a trip it alone paid). Returns the plan, its shipments' gains and known ``saved``
    (``_state``) and the origin cells touched; None when no trade gains."""
    n_nodes, n_items = ctx.cells.held.shape
    p = state.plan
    r = np.nonzero(p.quantity == ctx.qmin)[0]
    closes, leaves = _leaves_ok(ctx, state, r)
    lost = state.gain[r] - state.saved[r] - np.where(closes, ctx.cost[p.origin[r], p.dest[r]], 0.0)
    r, closes, lost = r[leaves], closes[leaves], lost[leaves]
    order = np.argsort(lost, kind="stable")
    r, closes, lost = r[order], closes[order], lost[order]
    adds = _additions(ctx, state, lost)
    if adds is None:
        return None
    ad, ak, ao, value, opens = adds
    # a route a new lot rides is not closed
    ridden = np.isin(p.origin[r] * n_nodes + p.dest[r], ao[~opens] * n_nodes + ad[~opens])
    r, lost = r[~(closes & ridden)], lost[~(closes & ridden)]
    m = min(ad.shape[0], r.shape[0])
    if m == 0 or value[0] <= lost[0] + MIN_GAIN:
        return None
    ad, ak, ao, value, opens, r, lost = ad[:m], ak[:m], ao[:m], value[:m], opens[:m], r[:m], lost[:m]
    # adds and removals interleaved by rank, each claiming its origin cell, and a route an add
    # opens or a removal leaves (a key of its own otherwise)
    cells_n, routes_n = n_nodes * n_items, n_nodes * n_nodes
    cell, route = np.empty(2 * m, dtype=np.int64), np.empty(2 * m, dtype=np.int64)
    cell[0::2], cell[1::2] = ao * n_items + ak, p.origin[r] * n_items + p.item[r]
    own = cells_n + routes_n + np.arange(0, 2 * m, 2)
    route[0::2] = np.where(opens, cells_n + ao * n_nodes + ad, own)
    route[1::2] = cells_n + routes_n + 2 * m + p.origin[r] * n_nodes + p.dest[r]
    keys = [cell, route] if ctx.paid_trips else [cell]  # free trips tie no items together
    pick = _independent(keys, cells_n + 2 * routes_n + 2 * m)
    a, dropped = pick[pick % 2 == 0] // 2, pick[pick % 2 == 1] // 2
    m = min(a.shape[0], dropped.shape[0])
    a, dropped = a[:m], dropped[:m]
    m = int(np.argmin(np.r_[value[a] > lost[dropped] + MIN_GAIN, False]))
    if m == 0:
        return None
    a, dropped = a[:m], r[dropped[:m]]
    keep = np.ones(p.origin.shape[0], dtype=bool)
    keep[dropped] = False
    new = Plan(ao[a], ad[a], ak[a], np.full(m, ctx.qmin, dtype=np.int64))
    a_gain = _lot_gains(ctx.cells, ad[a], ak[a], new.quantity)
    touched = np.r_[p.origin[dropped] * n_items + p.item[dropped], ao[a] * n_items + ak[a]]
    saved = np.r_[state.saved[keep], np.full(m, np.nan)]
    return Plan.joined([p.take(keep), new]), np.r_[state.gain[keep], a_gain], saved, touched


def _additions(
    ctx: _Context, state: _State, lost: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The best new minimum lot of each destination candidate the plan leaves out, best first:
    (destination, item, origin, what it adds net of its origin's loss and of a trip it opens,
    whether it opens one). Only lots netting the bar (and a trip they open) count, and only the
    candidates whose lot may outweigh the ``lost`` (ascending) of the lot it would replace."""
    n_nodes = ctx.cells.held.shape[0]
    receives = np.zeros(ctx.cells.held.shape, dtype=bool)
    receives[state.plan.dest, state.plan.item] = True
    cand = np.nonzero(~receives[ctx.a_node, ctx.a_item])[0]
    cand = cand[np.argsort(-ctx.a_gain[cand], kind="stable")]
    n = min(cand.shape[0], lost.shape[0])
    # the i-th best new lot adds at most the i-th best gain: past the first pair that cannot
    # pay, none can
    paying = int(np.argmin(np.r_[ctx.a_gain[cand[:n]] > lost[:n], False]))
    cand = cand[: 2 * paying + 16] if paying else cand[:0]
    dn, dk = ctx.a_node[cand], ctx.a_item[cand]
    a, pos = expand_groups(ctx.c_count[dk])
    c = ctx.c_start[dk[a]] + pos - 1
    ad, ak, ao = dn[a], dk[a], ctx.c_node[c]
    ok = (ao != ad) & _origin_ok(ctx, state, ao, ak, np.full(a.shape[0], ctx.qmin))
    a, ad, ak, ao, c = a[ok], ad[ok], ak[ok], ao[ok], c[ok]
    there, _ = _route_index(state, ao * n_nodes + ad)
    trip = np.where(there, 0.0, ctx.cost[ao, ad])
    ship = ctx.a_gain[cand[a]] - state.c_loss[c, ctx.qmin]
    ok = ship - trip >= ctx.bar * ctx.qmin
    a, ad, ak, ao, value, opens = a[ok], ad[ok], ak[ok], ao[ok], (ship - trip)[ok], ~there[ok]
    if a.shape[0] == 0:
        return None
    order = np.lexsort((ao, a, -value))
    _, first = np.unique(a[order], return_index=True)
    best = order[np.sort(first)]  # each destination cell's best, best value first
    return ad[best], ak[best], ao[best], value[best], opens[best]
