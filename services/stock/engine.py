"""The transfer recommendation engine.

``recommend(inputs, rules)`` turns a stock snapshot, the sales history, the
node coordinates, the campaigns and the rules into one batch of transfers.
It works on dense numpy arrays only (no database, no ids) and is
deterministic: the same inputs give the same batch, in the same order.

The model, in four steps (``docs/engine.md`` has the full write-up):

1. **Demand.** Each store x item cell gets a daily rate that shrinks its own
   observed rate toward a pooled estimate (store level x product level x the
   network's size curve), with Poisson-Gamma empirical-Bayes weights fitted
   on the whole snapshot. A shrunk product- and store-level trend from the
   last 7 days scales the rates; a campaign at a store may only raise them.
2. **Unit economics.** Over the horizon H the demand of a cell is Poisson
   with mean mu = rate x H. The (s+1)-th unit at a destination holding s
   sells with probability P(D >= s+1); the j-th unit taken from an origin
   holding s loses P(D >= s-j+1). Per item, the best destination units are
   matched with the cheapest origin units (both sorted in bulk for all items
   at once) while the net gain of a unit is at least ``MIN_UNIT_GAIN``. That
   is the exact optimum of the per-item transportation problem without route
   costs, because gains are decreasing and losses increasing. The first
   ``qtd_minima`` units of a destination are valued at their average and
   ship when that average reaches ``MIN_LOT_GAIN``: the minimum lot is the
   planners' own rule, so a badly needed first unit may carry its lot.
3. **Routing.** Each destination of an item receives its quantity from one
   origin, chosen in rounds vectorised over items (the most urgent
   destination of every item first): an origin that can send everything
   beats one that cannot, a CD beats a store when ``priorizar_cd`` is set,
   then the nearest wins.
4. **Scoring.** A 0-100 score from the weighted distance, turnover and stock
   components, multiplied by the learning factors; a priority from the days
   to stock-out; a Portuguese justification quoting the figures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import gammaln, pdtr, pdtrc

from services.stock.engine_contract import EngineInput, EngineOutput, EngineRules

# A unit is moved only when it adds at least this many expected units sold
# over the horizon, net of what the origin loses.
MIN_UNIT_GAIN = 0.25
# A minimum lot (qtd_minima units to one destination) ships when its units
# add, on average, at least this much.
MIN_LOT_GAIN = 0.15
# An origin keeps its expected horizon demand plus this many standard
# deviations (Poisson: sqrt of the mean), whichever of the estimated and the
# observed rate is higher.
SAFETY_STD = 1.0
# Origins considered per item when routing (CDs first, then by free stock).
MAX_ORIGINS_PER_ITEM = 32
# Days of the "recent" window carried by ``sales_recent``.
RECENT_DAYS = 7
# Pseudo-units that pull a trend ratio toward 1 (no trend).
TREND_PRIOR_UNITS = 10.0
TREND_BOUNDS = (0.5, 2.0)
CAMPAIGN_LIFT_BOUNDS = (1.0, 2.5)
# Shape bounds of the empirical-Bayes Gamma priors.
SHAPE_BOUNDS = (0.5, 1000.0)
# Distance at which the distance component of the score is one half.
DISTANCE_HALF_KM = 100.0
# Priorities from the destination's days to stock-out.
ALTA_MAX_DAYS = 7
DAYS_CAP = 999
EARTH_RADIUS_KM = 6371.0088

PRIORITIES = np.array(["alta", "media", "baixa"])


# --------------------------------------------------------------------------
# Poisson helpers (vectorised)


def prob_at_least(x: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """P(D >= x) for D ~ Poisson(mu), elementwise; 1 when x <= 0, 0 when mu = 0 < x."""
    x, mu = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(mu, dtype=np.float64))
    out = (x <= 0).astype(np.float64)
    # the incomplete gamma function is the costly part: only where the answer is not trivial
    live = (x > 0) & (mu > 0)
    out[live] = pdtrc(x[live] - 1.0, mu[live])
    return out


def poisson_pmf(x: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """P(D = x) for D ~ Poisson(mu), elementwise (x >= 0)."""
    x = np.asarray(x, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = x * np.log(mu) - mu - gammaln(x + 1.0)
    return np.where(mu > 0, np.exp(log_p), (x == 0).astype(np.float64))


def expected_sales(stock: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """E[min(D, s)] for D ~ Poisson(mu) and s units on hand, elementwise.

    Uses sum_{d<s} d p(d) = mu P(D <= s-2), so E = mu P(D <= s-2) + s P(D >= s).
    """
    s = np.maximum(np.asarray(stock, dtype=np.float64), 0.0)
    mu = np.asarray(mu, dtype=np.float64)
    below = np.where(s >= 2, pdtr(np.maximum(s - 2.0, 0.0), mu), 0.0)
    return mu * below + s * prob_at_least(s, mu)


def haversine_km(lat1, lng1, lat2, lng2) -> np.ndarray:
    """Great-circle distance in km; nan where a coordinate is unknown."""
    p1, p2 = np.radians(lat1), np.radians(lat2)
    dp = p2 - p1
    dl = np.radians(lng2) - np.radians(lng1)
    a = np.sin(dp / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(np.clip(a, 0.0, 1.0)))


def distance_matrix(inputs: EngineInput) -> np.ndarray:
    """(N, N) haversine distances between nodes, nan when unknown."""
    lat = np.asarray(inputs.node_lat, dtype=np.float64)
    lng = np.asarray(inputs.node_lng, dtype=np.float64)
    return haversine_km(lat[:, None], lng[:, None], lat[None, :], lng[None, :])


# --------------------------------------------------------------------------
# Demand estimation


def _product_matrix(inputs: EngineInput) -> sparse.csr_matrix:
    """(K, P) indicator of each item's product."""
    k = inputs.item_product.shape[0]
    p = inputs.product_blocked.shape[0]
    return sparse.csr_matrix(
        (np.ones(k), (np.arange(k), np.asarray(inputs.item_product, dtype=np.int64))), shape=(k, p)
    )


def _gamma_shape(observed: np.ndarray, expected: np.ndarray) -> float:
    """Method-of-moments shape of a Gamma(a, a) multiplier on Poisson means.

    For T ~ Poisson(E * g) with E[g] = 1, Var[g] = 1/a:
    E[(T - E)^2 - T] = E^2 / a.
    """
    mask = expected > 0
    den = float(np.sum(expected[mask] ** 2))
    if den <= 0:
        return SHAPE_BOUNDS[1]
    num = float(np.sum((observed[mask] - expected[mask]) ** 2 - observed[mask]))
    if num <= 0:
        return SHAPE_BOUNDS[1]
    return float(np.clip(den / num, *SHAPE_BOUNDS))


def _trend(recent: np.ndarray, total: np.ndarray, days: int, bounds: tuple[float, float]) -> np.ndarray:
    """Shrunk ratio of the recent daily rate to the window's daily rate."""
    expected_recent = total * (RECENT_DAYS / days)
    ratio = (recent + TREND_PRIOR_UNITS) / (expected_recent + TREND_PRIOR_UNITS)
    return np.clip(ratio, *bounds)


def estimate_daily_demand(inputs: EngineInput) -> np.ndarray:
    """(N, K) expected units sold per day at each cell (0 at CDs).

    Two Poisson-Gamma shrinkage levels: the store x product total toward
    store level x product level, then the cell toward that total times the
    product's network size share; both prior shapes are fitted by the method
    of moments on the snapshot itself.
    """
    n_nodes, n_items = inputs.stock.shape
    days = max(int(inputs.history_days), 1)
    is_store = ~np.asarray(inputs.node_is_cd, dtype=bool)
    x = np.asarray(inputs.sales, dtype=np.float64) * is_store[:, None]
    if n_nodes == 0 or n_items == 0 or x.sum() <= 0:
        return np.zeros((n_nodes, n_items))
    item_product = np.asarray(inputs.item_product, dtype=np.int64)
    a_mat = _product_matrix(inputs)

    # Store x product totals, shrunk toward the independence model.
    t_np = np.asarray((a_mat.T @ x.T).T)
    store_tot = t_np.sum(axis=1)
    prod_tot = t_np.sum(axis=0)
    grand = store_tot.sum()
    e_np = np.outer(store_tot, prod_tot) / grand
    shape_np = _gamma_shape(t_np, e_np)
    with np.errstate(invalid="ignore", divide="ignore"):
        lam_np = np.where(e_np > 0, (t_np + shape_np) * e_np / (e_np + shape_np), 0.0)

    # Network size curve of each product, lightly smoothed.
    sizes_per_product = np.bincount(item_product, minlength=prod_tot.shape[0])
    item_tot = x.sum(axis=0)
    share = (item_tot + 0.5) / (prod_tot[item_product] + 0.5 * sizes_per_product[item_product])

    # Cells, shrunk toward store x product total times size share.
    m = lam_np[:, item_product] * share[None, :]
    shape_cell = _gamma_shape(x, m)
    with np.errstate(invalid="ignore", divide="ignore"):
        lam = np.where(m > 0, (x + shape_cell) * m / (m + shape_cell), 0.0)
    rate = lam / days

    recent = np.asarray(inputs.sales_recent, dtype=np.float64) * is_store[:, None]
    if days > RECENT_DAYS:
        r_np = np.asarray((a_mat.T @ recent.T).T)
        product_trend = _trend(r_np.sum(axis=0), prod_tot, days, TREND_BOUNDS)
        store_trend = _trend(r_np.sum(axis=1), store_tot, days, TREND_BOUNDS)
        factor = store_trend[:, None] * product_trend[None, :]
        campaign = np.asarray(inputs.campaign, dtype=bool)
        if campaign.any():
            # A campaign at a store may only raise what the trends say.
            lift = _trend(r_np, t_np * factor, days, CAMPAIGN_LIFT_BOUNDS)
            factor = np.where(campaign, factor * lift, factor)
        rate = rate * factor[:, item_product]
    return rate * is_store[:, None]


# --------------------------------------------------------------------------
# Planning


def _group_starts(sorted_keys: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    counts = np.bincount(sorted_keys, minlength=size)
    starts = np.cumsum(counts) - counts
    return counts, starts


def _expand(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For groups of the given sizes: the group index and 1-based position of each unit."""
    counts = np.asarray(counts, dtype=np.int64)
    owner = np.repeat(np.arange(counts.shape[0]), counts)
    starts = np.cumsum(counts) - counts
    pos = np.arange(owner.shape[0]) - starts[owner] + 1
    return owner, pos


@dataclass
class _Plan:
    """Routes chosen by the planner, in the order they were assigned."""

    origin: np.ndarray
    dest: np.ndarray
    item: np.ndarray
    quantity: np.ndarray

    @classmethod
    def empty(cls) -> _Plan:
        none = np.zeros(0, dtype=np.int64)
        return cls(none, none.copy(), none.copy(), none.copy())


def _observed_product_sales(inputs: EngineInput) -> np.ndarray:
    x = np.asarray(inputs.sales, dtype=np.float64)
    return np.asarray((_product_matrix(inputs).T @ x.T).T)


def origin_need(mu: np.ndarray, observed_mu: np.ndarray, is_cd: np.ndarray) -> np.ndarray:
    """Units an origin keeps for itself: ceil(m + SAFETY_STD * sqrt(m)), m = max(estimated, observed)."""
    m = np.maximum(mu, observed_mu)
    need = np.ceil(m + SAFETY_STD * np.sqrt(m) - 1e-9)
    need[np.asarray(is_cd, dtype=bool)] = 0
    return need.astype(np.int64)


def eligibility(inputs: EngineInput, rules: EngineRules, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dest_ok, avail): which cells may receive, and how many units each cell may give."""
    days = max(int(inputs.history_days), 1)
    horizon = rules.horizon_days
    item_product = np.asarray(inputs.item_product, dtype=np.int64)
    is_cd = np.asarray(inputs.node_is_cd, dtype=bool)
    node_ok = ~np.asarray(inputs.node_blocked, dtype=bool)
    item_ok = ~np.asarray(inputs.product_blocked, dtype=bool)[item_product]
    sold = _observed_product_sales(inputs) > 0
    dest_ok = (node_ok & ~is_cd)[:, None] & item_ok[None, :] & sold[:, item_product]

    stock = np.asarray(inputs.stock, dtype=np.int64)
    observed_mu = np.asarray(inputs.sales, dtype=np.float64) / days * horizon
    avail = np.maximum(stock - origin_need(mu, observed_mu, is_cd), 0)
    avail[~node_ok, :] = 0
    avail[:, ~item_ok] = 0
    if rules.bloqueio_campanha:
        avail[np.asarray(inputs.campaign, dtype=bool)[:, item_product]] = 0
    return dest_ok, avail


@dataclass
class _Destinations:
    """Cells that may receive their item, and their units in matching order."""

    item: np.ndarray  # (D,) item of each candidate cell, ordered by item, then node
    node: np.ndarray  # (D,) its node
    urgency: np.ndarray  # (D,) mean gain of its first qmin units
    unit_cell: np.ndarray  # (U,) candidate cell of each unit: by item, then value descending
    unit_value: np.ndarray  # (U,) expected units sold that the unit adds (plus the lot bonus)


def _plan(
    inputs: EngineInput,
    rules: EngineRules,
    rate: np.ndarray,
    min_gain: float,
    lot_gain: float,
    unit_budget: int | None,
    dist: np.ndarray,
) -> _Plan:
    n_nodes, n_items = inputs.stock.shape
    qmin = max(int(rules.qtd_minima), 1)
    qmax = int(rules.qtd_maxima)
    if qmax < qmin or n_nodes == 0 or n_items == 0:
        return _Plan.empty()
    stock = np.asarray(inputs.stock, dtype=np.int64)
    mu = np.asarray(rate, dtype=np.float64) * rules.horizon_days
    is_cd = np.asarray(inputs.node_is_cd, dtype=bool)
    dest_ok, avail = eligibility(inputs, rules, mu)
    dest = _destination_units(stock, mu, dest_ok, qmin, qmax, min_gain, lot_gain)
    if dest is None:
        return _Plan.empty()
    avail[dest.node, dest.item] = 0  # a node never gives an item it receives: no circles
    ok_, on = np.nonzero((avail >= qmin).T)  # origin cells, ordered by item, then node
    q_cell = _quantities(dest, stock, mu, avail, ok_, on, qmin, n_items, min_gain, unit_budget)
    return _route(dest, q_cell, avail, ok_, on, is_cd, dist, rules.priorizar_cd, qmin, n_items)


def _destination_units(
    stock: np.ndarray,
    mu: np.ndarray,
    dest_ok: np.ndarray,
    qmin: int,
    qmax: int,
    min_gain: float,
    lot_gain: float,
) -> _Destinations | None:
    """Each candidate destination's units worth receiving, valued; the first qmin at their mean."""
    first_gain = np.zeros(mu.shape)
    first_gain[dest_ok] = prob_at_least(stock[dest_ok] + 1, mu[dest_ok])
    dest_cand = dest_ok & (first_gain >= min(min_gain, lot_gain)) & (first_gain > 0)
    dk, dn = (a.astype(np.int32) for a in np.nonzero(dest_cand.T))  # ordered by item, then node
    del dest_cand
    if dk.shape[0] == 0:
        return None
    ds = stock[dn, dk].astype(np.float64)
    dmu = mu[dn, dk]
    # P(D >= s + j) for j = 1, 2, ... by the recursion P(D >= x + 1) = P(D >= x) - p(x),
    # p(x + 1) = p(x) mu / (x + 1): one special-function call per cell, not per unit.
    tail = first_gain[dn, dk]
    pmf = poisson_pmf(ds + 1, dmu)
    block = np.zeros(dk.shape[0])
    for j in range(1, qmin + 1):
        block += tail
        tail = np.maximum(tail - pmf, 0.0)
        pmf = pmf * dmu / (ds + j + 1)
    block /= qmin
    # A minimum lot passes when its average reaches lot_gain: its units get a
    # bonus that brings that bar to min_gain, the bar of the units beyond it.
    bonus = max(min_gain - lot_gain, 0.0)
    unit_cell = [np.repeat(np.arange(dk.shape[0], dtype=np.int32), qmin)]
    unit_value = [np.repeat(block + bonus, qmin)]
    active = np.arange(dk.shape[0], dtype=np.int32)
    for j in range(qmin + 1, qmax + 1):
        keep = tail >= min_gain  # tail is P(D >= s + j) here
        active, tail, pmf = active[keep], tail[keep], pmf[keep]
        if active.shape[0] == 0:
            break
        unit_cell.append(active)
        unit_value.append(tail)
        tail = np.maximum(tail - pmf, 0.0)
        pmf = pmf * dmu[active] / (ds[active] + j + 1)
    u_cell = np.concatenate(unit_cell)
    u_value = np.concatenate(unit_value)
    del unit_cell, unit_value
    # order: item, then value descending; ties keep the (deterministic) construction order.
    # Values lie in [0, 2), so one float key item * 4 + (2 - value) sorts both at once.
    order = np.argsort(dk[u_cell] * 4.0 + (2.0 - u_value), kind="stable")
    return _Destinations(item=dk, node=dn, urgency=block, unit_cell=u_cell[order], unit_value=u_value[order])


def _origin_losses(
    stock: np.ndarray,
    mu: np.ndarray,
    avail: np.ndarray,
    ok_: np.ndarray,
    on: np.ndarray,
    d_count: np.ndarray,
    n_items: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Origin units per item, at most as many per origin as the item's destination units.

    Units that lose nothing (CDs, stores with no expected demand) are only counted
    (``z_count``): they come first in every item's list, and expanding them unit by
    unit would dominate memory. The others are ``l_loss``, sorted by item then loss,
    ``o_count``/``o_start`` per item.
    """
    o_units = np.minimum(avail[on, ok_], d_count[ok_])
    o_mu = mu[on, ok_]
    free = o_mu <= 0
    z_count = np.bincount(ok_[free], weights=o_units[free], minlength=n_items).astype(np.int64)
    lossy = np.nonzero(~free)[0]
    owner, pos = _expand(o_units[lossy])
    l_item = ok_[lossy][owner]
    l_loss = prob_at_least(stock[on[lossy], ok_[lossy]][owner] - pos + 1, o_mu[lossy][owner])
    l_order = np.argsort(l_item * 2.0 + l_loss, kind="stable")
    l_item, l_loss = l_item[l_order], l_loss[l_order]
    o_count, o_start = _group_starts(l_item, n_items)
    return z_count, l_loss, o_count, o_start


def _quantities(
    dest: _Destinations,
    stock: np.ndarray,
    mu: np.ndarray,
    avail: np.ndarray,
    ok_: np.ndarray,
    on: np.ndarray,
    qmin: int,
    n_items: int,
    min_gain: float,
    unit_budget: int | None,
) -> np.ndarray:
    """Units for each candidate destination: the i-th best destination unit of an item is
    matched with its i-th cheapest origin unit while the pair nets at least ``min_gain``."""
    u_cell, u_value = dest.unit_cell, dest.unit_value
    u_item = dest.item[u_cell]
    d_count, d_start = _group_starts(u_item, n_items)
    rank = (np.arange(u_item.shape[0]) - d_start[u_item]).astype(np.int32)
    z_count, l_loss, o_count, o_start = _origin_losses(stock, mu, avail, ok_, on, d_count, n_items)

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
    _, os_start = _group_starts(o_item, n_items)
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


def _route(
    dest: _Destinations,
    q_cell: np.ndarray,
    avail: np.ndarray,
    ok_: np.ndarray,
    on: np.ndarray,
    is_cd: np.ndarray,
    dist: np.ndarray,
    priorizar_cd: bool,
    qmin: int,
    n_items: int,
) -> _Plan:
    """One origin per destination, in rounds over each item's destinations, most urgent first."""
    d_sel = np.nonzero(q_cell > 0)[0]
    if d_sel.shape[0] == 0 or ok_.shape[0] == 0:
        return _Plan.empty()
    d_item, d_node, d_q, d_urg = dest.item[d_sel], dest.node[d_sel], q_cell[d_sel], dest.urgency[d_sel]
    d_order = np.lexsort((d_node, -d_urg, d_item))
    d_item, d_node, d_q, d_urg = d_item[d_order], d_node[d_order], d_q[d_order], d_urg[d_order]
    _, ds_start = _group_starts(d_item, n_items)
    d_rank = np.arange(d_item.shape[0]) - ds_start[d_item]
    row_of_item, cand_node, cand_rem = _origin_table(avail, ok_, on, is_cd, n_items)

    # ranking key of an origin: can it send everything, CD preference, distance
    dist_key = np.where(np.isnan(dist), 5.0e4, dist)
    store_penalty = np.where(is_cd, 0.0, 1.0e6 if priorizar_cd else 0.0)

    by_round = np.argsort(d_rank, kind="stable")
    bounds = np.searchsorted(d_rank[by_round], np.arange(int(d_rank.max()) + 2))
    out_o, out_d, out_k, out_q = [], [], [], []
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
        safe_nodes = np.maximum(nodes, 0)
        valid = (nodes >= 0) & (rem >= qmin) & (nodes != dnode[:, None])
        key = (
            np.where(rem >= q[:, None], 0.0, 1.0e9)
            + store_penalty[safe_nodes]
            + dist_key[safe_nodes, dnode[:, None]]
        )
        key = np.where(valid, key, np.inf)
        best = np.argmin(key, axis=1)
        lines = np.arange(sel.shape[0])
        ok = np.isfinite(key[lines, best])
        if not ok.any():
            continue
        sel, rows, best, lines = sel[ok], rows[ok], best[ok], lines[ok]
        send = np.minimum(q[ok], rem[lines, best])
        cand_rem[rows, best] -= send
        out_o.append(nodes[lines, best])
        out_d.append(d_node[sel])
        out_k.append(d_item[sel])
        out_q.append(send)
    if not out_o:
        return _Plan.empty()
    return _Plan(
        np.concatenate(out_o),
        np.concatenate(out_d),
        np.concatenate(out_k),
        np.concatenate(out_q),
    )


# --------------------------------------------------------------------------
# Output


def _num(values: np.ndarray, decimals: int = 2) -> list[str]:
    """Brazilian number format (decimal comma, half up) of each value.

    Rounded values repeat a lot across a batch, so each distinct one is
    formatted once.
    """
    scale = 10**decimals
    ticks = np.floor(np.asarray(values, dtype=np.float64) * scale + 0.5).astype(np.int64)
    distinct, inverse = np.unique(ticks, return_inverse=True)
    text = np.array([f"{t / scale:.{decimals}f}".replace(".", ",") for t in distinct.tolist()], dtype=object)
    return text[inverse].tolist()


# The justification's last sentence, by (campaign at the destination, at the origin).
_CAMPAIGN_TEXT = {
    (True, True): " Produto em campanha na origem e no destino.",
    (True, False): " Produto em campanha no destino.",
    (False, True): " Produto em campanha na origem.",
    (False, False): "",
}


def _justifications(
    *,
    q: np.ndarray,
    dest_stock: np.ndarray,
    dest_obs: np.ndarray,
    dest_est: np.ndarray,
    days: np.ndarray,
    origin_is_cd: np.ndarray,
    origin_stock: np.ndarray,
    origin_obs: np.ndarray,
    origin_left: np.ndarray,
    origin_need: np.ndarray,
    gain: np.ndarray,
    loss: np.ndarray,
    distance: np.ndarray,
    campaign_dest: np.ndarray,
    campaign_origin: np.ndarray,
    history_days: int,
    horizon: int,
) -> list[str]:
    """Portuguese justification of each recommendation, quoting checkable figures.

    Each numeric column is formatted once, then one f-string per line: a
    batch may hold hundreds of thousands of recommendations.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        cover = np.floor(origin_stock / np.where(origin_obs > 0, origin_obs, 1.0))
    lines = []
    for qi, ds, dob, des, dy, cd, os_, oob, sold, cov, left, need, g, lo, dist, cdst, corg in zip(
        q.tolist(),
        dest_stock.tolist(),
        _num(dest_obs),
        _num(dest_est),
        days.tolist(),
        origin_is_cd.tolist(),
        origin_stock.tolist(),
        _num(origin_obs),
        (origin_obs > 0).tolist(),
        cover.tolist(),
        origin_left.tolist(),
        origin_need.tolist(),
        _num(gain, 1),
        loss.tolist(),
        distance.tolist(),
        campaign_dest.tolist(),
        campaign_origin.tolist(),
        strict=True,
    ):
        if ds == 0:
            ruptura = "já em ruptura"
        elif dy >= DAYS_CAP:
            ruptura = "sem ruptura prevista"
        else:
            ruptura = f"ruptura em {dy} dias"
        if cd:
            origin = f"Origem CD com {os_} un.; fica com {left} un. após os envios deste lote."
        else:
            cover_text = f"{cov:.0f} dias de cobertura" if sold else "sem vendas no período"
            origin = (
                f"Origem loja com {os_} un. e venda média de {oob}/dia ({cover_text}); "
                f"fica com {left} un. após os envios deste lote, o que cobre sua necessidade de "
                f"{horizon} dias com margem de segurança ({need} un.)."
            )
        loss_text = (
            f" A origem deixa de vender cerca de {lo:.1f} un.".replace(".", ",", 1) if lo >= 0.05 else ""
        )
        dist_text = f"Distância {dist:.0f} km." if dist == dist else "Distância desconhecida."
        lines.append(
            f"Destino com {ds} un. e venda média de {dob}/dia nos últimos {history_days} dias "
            f"(demanda estimada {des}/dia; {ruptura}). {origin} Enviar {qi} un. deve vender cerca de "
            f"{g} un. a mais no destino em {horizon} dias.{loss_text} {dist_text}"
            f"{_CAMPAIGN_TEXT[(cdst, corg)]}"
        )
    return lines


def _empty_output() -> EngineOutput:
    i32 = np.zeros(0, dtype=np.int32)
    f64 = np.zeros(0, dtype=np.float64)
    return EngineOutput(
        origin=i32,
        dest=i32.copy(),
        item=i32.copy(),
        quantity=i32.copy(),
        score=i32.copy(),
        priority=np.zeros(0, dtype="<U5"),
        days_to_stockout=i32.copy(),
        origin_stock=i32.copy(),
        dest_stock=i32.copy(),
        origin_daily_sales=f64,
        dest_daily_sales=f64.copy(),
        distance_km=f64.copy(),
        in_campaign=np.zeros(0, dtype=bool),
        justification=[],
    )


def _factor(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Learning factor per code, 1.0 for a code the array does not cover."""
    values = np.asarray(values, dtype=np.float64)
    codes = np.asarray(codes, dtype=np.int64)
    inside = (codes >= 0) & (codes < values.shape[0])
    out = np.ones(codes.shape[0])
    out[inside] = values[codes[inside]]
    return np.clip(np.nan_to_num(out, nan=1.0), 0.0, 1.0)


def score_components(
    distance: np.ndarray, gain_per_unit: np.ndarray, days_to_stockout: np.ndarray, horizon: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distance, turnover and stock components of the score, each in [0, 1]."""
    s_dist = np.where(np.isfinite(distance), 1.0 / (1.0 + np.nan_to_num(distance) / DISTANCE_HALF_KM), 0.5)
    s_giro = np.clip(gain_per_unit, 0.0, 1.0)
    s_stock = np.clip(1.0 - days_to_stockout / (2.0 * horizon), 0.0, 1.0)
    return s_dist, s_giro, s_stock


@dataclass
class _Figures:
    """Each planned transfer's figures, in plan order: what the output carries and quotes."""

    origin_stock: np.ndarray
    dest_stock: np.ndarray
    origin_obs: np.ndarray  # observed daily sales at the origin (0 at a CD)
    dest_obs: np.ndarray  # observed daily sales at the destination
    dest_est: np.ndarray  # estimated daily demand at the destination
    gain: np.ndarray  # expected units sold more at the destination over the horizon
    loss: np.ndarray  # expected units the origin no longer sells
    days: np.ndarray  # the destination's days to stock-out, capped
    prio_rank: np.ndarray  # 0 alta, 1 media, 2 baixa
    distance: np.ndarray
    score: np.ndarray
    campaign_origin: np.ndarray
    campaign_dest: np.ndarray
    origin_need: np.ndarray


def _sent_before(o: np.ndarray, k: np.ndarray, q: np.ndarray, n_items: int) -> np.ndarray:
    """Units the same origin sent of the same item earlier in the plan, for each transfer."""
    seq = np.lexsort((np.arange(o.shape[0]), k, o))  # by origin, item, then assignment order
    group = o[seq] * n_items + k[seq]
    first = np.r_[True, group[1:] != group[:-1]]
    before = np.cumsum(q[seq]) - q[seq]  # units sent before, over the whole sequence
    sent_before = np.empty_like(q)
    sent_before[seq] = before - before[first][np.cumsum(first) - 1]
    return sent_before


def _score(
    inputs: EngineInput, rules: EngineRules, plan: _Plan, components: tuple[np.ndarray, ...]
) -> np.ndarray:
    """0-100: the components blended by the rules' weights, times the learning factors."""
    weights = np.array([rules.peso_distancia, rules.peso_giro, rules.peso_estoque], dtype=np.float64)
    weights = np.clip(weights, 0.0, None)
    weights = weights / weights.sum() if weights.sum() > 0 else np.full(3, 1.0 / 3.0)
    s_dist, s_giro, s_stock = components
    blend = weights[0] * s_dist + weights[1] * s_giro + weights[2] * s_stock
    o, d = plan.origin, plan.dest
    product = np.asarray(inputs.item_product, dtype=np.int64)[plan.item]
    factor = (
        np.clip(np.nan_to_num(np.asarray(inputs.route_factor, dtype=np.float64)[o, d], nan=1.0), 0.0, 1.0)
        * _factor(inputs.brand_factor, np.asarray(inputs.product_brand)[product])
        * _factor(inputs.category_factor, np.asarray(inputs.product_category)[product])
    )
    return np.clip(np.floor(100.0 * blend * factor + 0.5), 0, 100).astype(np.int64)


def _figures(
    inputs: EngineInput, rules: EngineRules, plan: _Plan, rate: np.ndarray, dist: np.ndarray
) -> _Figures:
    o, d, k, q = plan.origin, plan.dest, plan.item, plan.quantity
    n_items = np.asarray(inputs.stock).shape[1]
    horizon = int(rules.horizon_days)
    history = max(int(inputs.history_days), 1)
    stock = np.asarray(inputs.stock, dtype=np.int64)
    sales = np.asarray(inputs.sales, dtype=np.float64)
    is_cd = np.asarray(inputs.node_is_cd, dtype=bool)
    mu = rate * horizon
    o_stock, d_stock = stock[o, k], stock[d, k]
    d_est = rate[d, k]

    # expected units gained at the destination and lost at the origin; an
    # origin serving several destinations of one item loses cumulatively
    gain = expected_sales(d_stock + q, mu[d, k]) - expected_sales(d_stock, mu[d, k])
    sent_before = _sent_before(o, k, q, n_items)
    o_mu = mu[o, k]
    loss = expected_sales(o_stock - sent_before, o_mu) - expected_sales(o_stock - sent_before - q, o_mu)

    with np.errstate(divide="ignore", invalid="ignore"):
        days_f = np.where(d_est > 0, np.floor(d_stock / d_est), DAYS_CAP)
    days = np.minimum(days_f, DAYS_CAP).astype(np.int64)
    distance = dist[o, d]
    product = np.asarray(inputs.item_product, dtype=np.int64)[k]
    campaign = np.asarray(inputs.campaign, dtype=bool)
    return _Figures(
        origin_stock=o_stock,
        dest_stock=d_stock,
        origin_obs=np.where(is_cd[o], 0.0, sales[o, k] / history),
        dest_obs=sales[d, k] / history,
        dest_est=d_est,
        gain=gain,
        loss=loss,
        days=days,
        prio_rank=np.where(days <= ALTA_MAX_DAYS, 0, np.where(days <= horizon, 1, 2)),
        distance=distance,
        score=_score(inputs, rules, plan, score_components(distance, (gain - loss) / q, days, horizon)),
        campaign_origin=campaign[o, product],
        campaign_dest=campaign[d, product],
        origin_need=origin_need(mu[o, k], sales[o, k] / history * horizon, is_cd[o]),
    )


def recommend(
    inputs: EngineInput,
    rules: EngineRules,
    *,
    daily_rate: np.ndarray | None = None,
    unit_budget: int | None = None,
    min_unit_gain: float = MIN_UNIT_GAIN,
    min_lot_gain: float = MIN_LOT_GAIN,
) -> EngineOutput:
    """One batch of transfer recommendations for the snapshot in ``inputs``.

    ``daily_rate`` replaces the demand estimate (the simulator's oracle passes
    the true rates), ``unit_budget`` caps the units moved (the best units of
    the whole network are kept), ``min_unit_gain`` is the net expected gain a
    moved unit must bring and ``min_lot_gain`` the average one of a minimum lot.
    """
    n_nodes, n_items = np.asarray(inputs.stock).shape
    if n_nodes == 0 or n_items == 0:
        return _empty_output()
    rate = estimate_daily_demand(inputs) if daily_rate is None else np.asarray(daily_rate, dtype=np.float64)
    dist = distance_matrix(inputs)
    plan = _plan(inputs, rules, rate, float(min_unit_gain), float(min_lot_gain), unit_budget, dist)
    if plan.origin.shape[0] == 0:
        return _empty_output()
    f = _figures(inputs, rules, plan, rate, dist)

    order = np.lexsort((plan.origin, plan.item, plan.dest, -f.score, f.prio_rank))
    o, d, k, q = plan.origin[order], plan.dest[order], plan.item[order], plan.quantity[order]
    pair = o * n_items + k
    uniq, inverse = np.unique(pair, return_inverse=True)
    sent_total = np.bincount(inverse, weights=q, minlength=uniq.shape[0]).astype(np.int64)[inverse]
    justification = _justifications(
        q=q,
        dest_stock=f.dest_stock[order],
        dest_obs=f.dest_obs[order],
        dest_est=f.dest_est[order],
        days=f.days[order],
        origin_is_cd=np.asarray(inputs.node_is_cd, dtype=bool)[o],
        origin_stock=f.origin_stock[order],
        origin_obs=f.origin_obs[order],
        origin_left=f.origin_stock[order] - sent_total,
        origin_need=f.origin_need[order],
        gain=f.gain[order],
        loss=f.loss[order],
        distance=f.distance[order],
        campaign_dest=f.campaign_dest[order],
        campaign_origin=f.campaign_origin[order],
        history_days=max(int(inputs.history_days), 1),
        horizon=int(rules.horizon_days),
    )
    return EngineOutput(
        origin=o.astype(np.int32),
        dest=d.astype(np.int32),
        item=k.astype(np.int32),
        quantity=q.astype(np.int32),
        score=f.score[order].astype(np.int32),
        priority=PRIORITIES[f.prio_rank[order]],
        days_to_stockout=f.days[order].astype(np.int32),
        origin_stock=f.origin_stock[order].astype(np.int32),
        dest_stock=f.dest_stock[order].astype(np.int32),
        origin_daily_sales=f.origin_obs[order].astype(np.float64),
        dest_daily_sales=f.dest_obs[order].astype(np.float64),
        distance_km=np.nan_to_num(f.distance[order], nan=0.0).astype(np.float64),
        in_campaign=(f.campaign_origin | f.campaign_dest)[order],
        justification=justification,
    )
