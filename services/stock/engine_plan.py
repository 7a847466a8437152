"""Which units move, in which lots, from which origins: the planning half of the engine.

Pure numpy (``docs/engine.md`` §2-4), on what every cell holds and may sell
(``engine_cells``). Per item (product x size), destination units are valued by the expected sales they add (a size nobody buys at a store
adds nothing; a key size completing a broken run adds to the rest of the run),
origin units by the expected sales they take away (a CD unit by the value of
keeping it for later weeks), and the best are matched in bulk for all items at
once. Minimum lots are valued as a whole; each destination is served by one or
several origins chosen by what the shipment costs (``engine_routing``); routes
whose shipments do not pay for the trip plus the per-unit bar are dropped, and each
route kept carries one more lot of the items its origin can still give while each unit
nets the bar (``engine_topup``); a local search follows (``engine_polish``) and, on a small
network, one program choosing routes and lots together (``engine_reflow``).
"""

from __future__ import annotations

import numpy as np

from services.stock.engine_cells import CellValues, cell_values
from services.stock.engine_contract import EngineInput, EngineRules
from services.stock.engine_demand import Demand, expected_sales, pmf_step, prob_at_least, prob_exactly
from services.stock.engine_polish import polish
from services.stock.engine_reflow import plan_value, reflow
from services.stock.engine_routing import (
    ROUTING_PASSES,
    Destinations,
    Plan,
    expand_groups,
    group_starts,
    route_lots,
)
from services.stock.engine_topup import top_up

# Distance charged for a route with an unknown coordinate.
UNKNOWN_KM = 500.0
# A unit kept at a CD may serve a better need in a later week: its value, in expected units sold.
CD_KEEP_VALUE = 0.05


def shipment_cost(km: np.ndarray, rules: EngineRules) -> np.ndarray:
    """Cost of one shipment over each route, in expected units sold (unknown distance: UNKNOWN_KM)."""
    km = np.where(np.isfinite(km), km, UNKNOWN_KM)
    return rules.custo_envio + rules.custo_km * km


def cd_keep_value(rules: EngineRules) -> float:
    """What a CD unit kept for later weeks is worth, in expected units sold (nothing under priorizarCd)."""
    return 0.0 if rules.priorizar_cd else CD_KEEP_VALUE


def eligibility(inputs: EngineInput, rules: EngineRules, cells: CellValues) -> tuple[np.ndarray, np.ndarray]:
    """(dest_ok, avail): which cells may receive (stores that sold the product in the window), and
    how many units each cell may give (its stock beyond what it keeps, ``cells.keep``)."""
    item_product = np.asarray(inputs.item_product, dtype=np.int64)
    is_cd = np.asarray(inputs.node_is_cd, dtype=bool)
    node_ok = ~np.asarray(inputs.node_blocked, dtype=bool)
    item_ok = ~np.asarray(inputs.product_blocked, dtype=bool)[item_product]
    dest_ok = (node_ok & ~is_cd)[:, None] & item_ok[None, :] & cells.sold

    stock = np.asarray(inputs.stock, dtype=np.int64)
    held = cells.held
    keep = cells.keep
    # units in transit to an origin count toward what it keeps, but only stock on hand leaves
    avail = np.minimum(stock, np.maximum(held - keep, 0))
    avail[~node_ok, :] = 0
    avail[:, ~item_ok] = 0
    if rules.bloqueio_campanha:
        avail[np.asarray(inputs.campaign, dtype=bool)[:, item_product]] = 0
    return dest_ok, avail


def plan(
    inputs: EngineInput,
    rules: EngineRules,
    demand: Demand,
    dist: np.ndarray,
    *,
    unit_budget: int | None = None,
    cells: CellValues | None = None,
) -> Plan:
    """The batch's shipments (origin, destination, item, quantity).

    ``cells`` is ``cell_values(inputs, rules, demand)`` when the caller already has it. Each unit
    moved adds at least ``rules.ganho_minimo`` (the bar), and so does a minimum lot on average."""
    n_nodes, n_items = np.asarray(inputs.stock).shape
    qmin = max(int(rules.qtd_minima), 1)
    qmax = int(rules.qtd_maxima)
    if qmax < qmin or n_nodes == 0 or n_items == 0:
        return Plan.empty()
    cells = cells if cells is not None else cell_values(inputs, rules, demand)
    min_gain = float(rules.ganho_minimo)
    held, mu, alive, uplift, phi = cells.held, cells.mu, cells.alive, cells.uplift, cells.dispersion
    is_cd = np.asarray(inputs.node_is_cd, dtype=bool)
    dest_ok, avail = eligibility(inputs, rules, cells)
    # qtdMaxima bounds each shipment, not a destination's need: a cell short of more
    # than one lot is served by several origins, one lot each
    dest = _destination_units(held, mu, phi, alive, uplift, dest_ok, qmin, qmax * ROUTING_PASSES, min_gain)
    if dest is None:
        return Plan.empty()
    avail[dest.node, dest.item] = 0  # a node never gives an item it receives: no circles
    ok_, on = np.nonzero((avail >= qmin).T)  # origin cells, ordered by item, then node
    keep_cd = cd_keep_value(rules)
    q_cell = _quantities(
        dest, held, mu, phi, alive, avail, ok_, on, is_cd, keep_cd, qmin, n_items, min_gain, unit_budget
    )
    cost = shipment_cost(dist, rules)
    # among equally priced shipments, the nearest origin
    key = cost + 1e-6 * np.where(np.isfinite(dist), dist, UNKNOWN_KM)
    routed = route_lots(
        dest, q_cell, avail, ok_, on, is_cd, key, cost, rules.priorizar_cd, qmin, qmax, n_items
    )
    kept = _prune_routes(routed, inputs, rules, cells, cost, min_gain)
    if unit_budget is None:
        kept = top_up(kept, dest, cells, avail, is_cd, keep_cd, qmin, qmax, min_gain)
    settings = (rules.priorizar_cd, qmin, qmax, min_gain)
    kept = polish(kept, dest, cells, avail, is_cd, keep_cd, cost, settings)
    if unit_budget is not None or not (cost > 0).any():
        return kept  # free trips keep each item's plan its own, as partitioned generation needs
    flowed = reflow(kept, dest, cells, avail, is_cd, keep_cd, cost, settings)
    if flowed is kept:
        return kept
    flowed = _prune_routes(flowed, inputs, rules, cells, cost, min_gain)
    # at no more units, the plan adding more wins
    before = plan_value(kept, cells, is_cd, keep_cd, cost)
    return flowed if plan_value(flowed, cells, is_cd, keep_cd, cost) > before + 1e-9 else kept


def _destination_units(
    held: np.ndarray,
    mu: np.ndarray,
    phi: np.ndarray | None,
    alive: np.ndarray,
    uplift: np.ndarray,
    dest_ok: np.ndarray,
    qmin: int,
    q_cap: int,
    min_gain: float,
) -> Destinations | None:
    """Each candidate destination's units worth receiving (at most ``q_cap``), valued; the first
    qmin at their mean."""
    # P(D >= s + 1) of each eligible cell: its first unit's value, then the candidates' tails
    next_unit = np.zeros(mu.shape)
    d_phi = None if phi is None else phi[dest_ok]
    next_unit[dest_ok] = prob_at_least(held[dest_ok] + 1, mu[dest_ok], d_phi)
    del d_phi
    first_gain = np.zeros(mu.shape)
    first_gain[dest_ok] = alive[dest_ok] * next_unit[dest_ok] + uplift[dest_ok]
    dest_cand = dest_ok & (first_gain >= min_gain) & (first_gain > 0)
    dk, dn = (a.astype(np.int32) for a in np.nonzero(dest_cand.T))  # ordered by item, then node
    del dest_cand
    if dk.shape[0] == 0:
        return None
    ds = held[dn, dk].astype(np.float64)
    dmu = mu[dn, dk]
    dal = alive[dn, dk]
    dphi = None if phi is None else phi[dn, dk]
    # P(D >= s + j) for j = 1, 2, ... by the recursion P(D >= x + 1) = P(D >= x) - p(x),
    # p(x + 1) = p(x) step(x) / (x + 1): one special-function call per cell, not per unit.
    tail = next_unit[dn, dk]
    del next_unit, first_gain
    pmf = prob_exactly(ds + 1, dmu, dphi)
    block = uplift[dn, dk].copy()
    for j in range(1, qmin + 1):
        block += dal * tail
        tail = np.maximum(tail - pmf, 0.0)
        pmf = pmf * pmf_step(ds + j, dmu, dphi) / (ds + j + 1)
    block /= qmin
    # The qmin units of a lot share one value: each lot is one entry until the sort (below).
    unit_cell = [np.arange(dk.shape[0], dtype=np.int32)]
    unit_value = [block]
    active = np.arange(dk.shape[0], dtype=np.int32)
    for j in range(qmin + 1, q_cap + 1):
        value = dal[active] * tail  # tail is P(D >= s + j) here
        keep = value >= min_gain
        active, tail, pmf, value = active[keep], tail[keep], pmf[keep], value[keep]
        if active.shape[0] == 0:
            break
        unit_cell.append(active)
        unit_value.append(value)
        tail = np.maximum(tail - pmf, 0.0)
        a_phi = None if dphi is None else dphi[active]
        pmf = pmf * pmf_step(ds[active] + j, dmu[active], a_phi) / (ds[active] + j + 1)
    u_cell = np.concatenate(unit_cell)
    u_value = np.concatenate(unit_value)
    del unit_cell, unit_value
    # order: item, then value descending; ties keep the (deterministic) construction order.
    # Values lie in [0, 2) once clipped, so one float key item * 4 + (2 - value) sorts both at once.
    order = np.argsort(dk[u_cell] * 4.0 + (2.0 - np.minimum(u_value, 1.999)), kind="stable")
    # A lot's units were consecutive and equal: the stable sort keeps them together, so each
    # lot entry now stands for its qmin units.
    units = np.where(order < dk.shape[0], qmin, 1)
    return Destinations(
        item=dk,
        node=dn,
        urgency=block,
        unit_cell=np.repeat(u_cell[order], units),
        unit_value=np.repeat(u_value[order], units),
    )


def _origin_losses(
    held: np.ndarray,
    mu: np.ndarray,
    phi: np.ndarray | None,
    alive: np.ndarray,
    avail: np.ndarray,
    ok_: np.ndarray,
    on: np.ndarray,
    is_cd: np.ndarray,
    keep_cd: float,
    d_count: np.ndarray,
    top_loss: np.ndarray,
    n_items: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Origin units per item, at most as many per origin as the item's destination units.

    Units that lose nothing (CDs when their stock is free, stores with no expected demand)
    are only counted (``z_count``): they come first in every item's list, and expanding
    them unit by unit would dominate memory. The others are ``l_loss``, sorted by item then
    loss, ``o_count``/``o_start`` per item. A store unit losing ``top_loss`` of its item or
    more pairs with no destination unit, and neither do the ones it would give after it
    (each loses more): they are left out.
    """
    o_units = np.minimum(avail[on, ok_], d_count[ok_])
    o_mu = mu[on, ok_]
    o_cd = is_cd[on]
    free = np.where(o_cd, keep_cd <= 0, o_mu <= 0)
    z_count = np.bincount(ok_[free], weights=o_units[free], minlength=n_items).astype(np.int64)
    # CD units all lose the value kept for later weeks
    cds = np.nonzero(~free & o_cd)[0]
    owner, _ = expand_groups(o_units[cds])
    items, losses = [ok_[cds][owner]], [np.full(owner.shape[0], keep_cd)]
    # a store's j-th unit given loses alive x P(D >= held - j + 1): one special-function call
    # per cell, then P(D >= x - 1) = P(D >= x) + p(x - 1) and p(x - 1) = p(x) x / mu
    stores = np.nonzero(~free & ~o_cd & (o_units > 0))[0]
    s_item, s_node, s_mu, s_cap = ok_[stores], on[stores], o_mu[stores], o_units[stores]
    s_held = held[s_node, s_item].astype(np.float64)
    s_alive = alive[s_node, s_item]
    s_phi = None if phi is None else phi[s_node, s_item]
    s_top = top_loss[s_item]
    tail = prob_at_least(s_held, s_mu, s_phi)
    pmf = prob_exactly(np.maximum(s_held - 1.0, 0.0), s_mu, s_phi) * (s_held >= 1)
    active = np.arange(stores.shape[0])
    j = 1
    while active.shape[0]:
        loss = s_alive[active] * np.minimum(tail, 1.0)
        keep = (loss < s_top[active]) & (j <= s_cap[active])
        active, tail, pmf, loss = active[keep], tail[keep], pmf[keep], loss[keep]
        items.append(s_item[active])
        losses.append(loss)
        x = s_held[active] - j  # the next unit loses P(D >= x)
        tail = tail + pmf
        # p(x - 1) = p(x) x / step(x - 1)
        a_phi = None if s_phi is None else s_phi[active]
        with np.errstate(divide="ignore", invalid="ignore"):
            pmf = np.where(x >= 1, pmf * x / pmf_step(x - 1.0, s_mu[active], a_phi), 0.0)
        j += 1
    l_item = np.concatenate(items)
    l_loss = np.concatenate(losses)
    l_order = np.argsort(l_item * 2.0 + np.minimum(l_loss, 1.0), kind="stable")
    l_item, l_loss = l_item[l_order], l_loss[l_order]
    o_count, o_start = group_starts(l_item, n_items)
    return z_count, l_loss, o_count, o_start


def _quantities(
    dest: Destinations,
    held: np.ndarray,
    mu: np.ndarray,
    phi: np.ndarray | None,
    alive: np.ndarray,
    avail: np.ndarray,
    ok_: np.ndarray,
    on: np.ndarray,
    is_cd: np.ndarray,
    keep_cd: float,
    qmin: int,
    n_items: int,
    min_gain: float,
    unit_budget: int | None,
) -> np.ndarray:
    """Units for each candidate destination: the i-th best destination unit of an item is
    matched with its i-th cheapest origin unit while the pair nets at least ``min_gain``."""
    u_cell, u_value = dest.unit_cell, dest.unit_value
    u_item = dest.item[u_cell]
    d_count, d_start = group_starts(u_item, n_items)
    rank = (np.arange(u_item.shape[0]) - d_start[u_item]).astype(np.int32)
    # the best destination unit of each item bounds the loss of an origin unit worth pairing
    top_loss = np.full(n_items, -np.inf)
    has = d_count > 0
    top_loss[has] = u_value[d_start[has]] - min_gain
    z_count, l_loss, o_count, o_start = _origin_losses(
        held, mu, phi, alive, avail, ok_, on, is_cd, keep_cd, d_count, top_loss, n_items
    )

    paired = rank < z_count[u_item] + o_count[u_item]
    loss = np.where(paired, 0.0, np.inf)
    lossy_rank = paired & (rank >= z_count[u_item])
    loss[lossy_rank] = l_loss[o_start[u_item[lossy_rank]] + rank[lossy_rank] - z_count[u_item[lossy_rank]]]
    net = u_value - loss
    del loss, lossy_rank, rank
    chosen = paired & (net >= min_gain)
    if unit_budget is not None:
        idx = np.nonzero(chosen)[0]
        if idx.shape[0] > unit_budget:
            best = idx[np.argsort(-net[idx], kind="stable")[: max(int(unit_budget), 0)]]
            chosen = np.zeros_like(chosen)
            chosen[best] = True
    q_cell = np.bincount(u_cell[chosen], minlength=dest.item.shape[0])
    # a partly chosen minimum lot is completed: its average was worth it
    return np.where((q_cell > 0) & (q_cell < qmin), qmin, q_cell)


def shipment_values(
    inputs: EngineInput, rules: EngineRules, cells: CellValues, p: Plan
) -> tuple[np.ndarray, np.ndarray]:
    """(gain at the destination, loss at the origin) of each shipment, in expected units sold.

    An origin serving several destinations of one item loses cumulatively, in plan order;
    a CD loses the value of the units it keeps for later weeks.
    """
    o, d, k, q = p.origin, p.dest, p.item, p.quantity
    held, mu, alive, phi = cells.held, cells.mu, cells.alive, cells.dispersion
    d_held = held[d, k]
    d_phi = None if phi is None else phi[d, k]
    gain = alive[d, k] * (
        expected_sales(d_held + q, mu[d, k], d_phi) - expected_sales(d_held, mu[d, k], d_phi)
    )
    if (d_held <= 0).any():
        gain = gain + np.where(d_held <= 0, cells.uplift[d, k], 0.0)
    n_items = held.shape[1]
    before = sent_before(o, k, q, n_items)
    o_held, o_mu = held[o, k] - before, mu[o, k]
    o_phi = None if phi is None else phi[o, k]
    loss = alive[o, k] * (expected_sales(o_held, o_mu, o_phi) - expected_sales(o_held - q, o_mu, o_phi))
    loss = np.where(np.asarray(inputs.node_is_cd, dtype=bool)[o], cd_keep_value(rules) * q, loss)
    return gain, loss


def sent_before(o: np.ndarray, k: np.ndarray, q: np.ndarray, n_items: int) -> np.ndarray:
    """Units the same origin sent of the same item earlier in the plan, for each transfer."""
    seq = np.lexsort((np.arange(o.shape[0]), k, o))  # by origin, item, then assignment order
    group = o[seq] * n_items + k[seq]
    first = np.r_[True, group[1:] != group[:-1]]
    before = np.cumsum(q[seq]) - q[seq]  # units sent before, over the whole sequence
    out = np.empty_like(q)
    out[seq] = before - before[first][np.cumsum(first) - 1]
    return out


def _prune_routes(
    p: Plan, inputs: EngineInput, rules: EngineRules, cells: CellValues, cost: np.ndarray, min_gain: float
) -> Plan:
    """Drop the routes whose shipments, together, add less than the trip costs plus ``min_gain``
    per unit: the bar a unit clears holds net of its share of the trip.

    One pass: an origin's remaining shipments then lose a little less than valued here,
    so a kept route only gets better.
    """
    if p.origin.shape[0] == 0 or (rules.custo_envio <= 0 and rules.custo_km <= 0):
        return p
    n_nodes = cost.shape[0]
    gain, loss = shipment_values(inputs, rules, cells, p)
    route = p.origin * n_nodes + p.dest
    uniq, inverse = np.unique(route, return_inverse=True)
    value = np.bincount(inverse, weights=gain - loss, minlength=uniq.shape[0])
    units = np.bincount(inverse, weights=p.quantity, minlength=uniq.shape[0])
    pays = value >= cost.ravel()[uniq] + min_gain * units
    return p if pays.all() else p.take(pays[inverse])
