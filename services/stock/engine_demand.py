"""Demand estimation of the recommendation engine: what each store will sell of each size.

Pure numpy on the ``EngineInput`` arrays (``docs/engine.md`` §1). Every store x
item cell gets three figures:

- ``rate``: units per day it sells while its customers buy the size, pooled
  from its own sales and the network's (Poisson-Gamma empirical Bayes), with
  the days it was out of stock left out (censored demand);
- ``alive``: the probability that its customers buy the size at all. A cell
  that sold nothing over days it had stock is evidence of a size nobody buys
  there, and so is one the store was never given while it got the rest of the
  run; a cell that ran out is no evidence either way;
- ``dispersion``: how uncertain the rate is (1 / the shape of its Gamma posterior).

Over a horizon of H days the demand of a cell is zero with probability
``1 - alive`` and otherwise negative binomial with mean rate x H (Poisson on a
rate known only up to that Gamma).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import numpy as np
from scipy import sparse
from scipy.special import betainc, gammaln, pdtr, pdtrc

from services.stock.engine_alive import alive_on_shelf, never_given_alive
from services.stock.engine_contract import EngineInput, Outcomes
from services.stock.engine_runs import item_effects, run_effects
from services.stock.engine_sizes import FIT_ROUNDS, gamma_shape, size_curve

# Days of the "recent" window carried by ``sales_recent``.
RECENT_DAYS = 7
# Pseudo-units that pull a trend ratio toward 1 (no trend), at least: the prior is fitted on
# the snapshot and is stronger when the last week departs from the rates no more than chance.
TREND_PRIOR_UNITS = 10.0
TREND_BOUNDS = (0.5, 2.0)
CAMPAIGN_LIFT_BOUNDS = (1.0, 2.5)
# What moved units sold against what was expected of them (ASI / ESI, docs/engine.md §9):
# expected units of prior evidence that the predictions are right, and the factor's bounds.
OUTCOME_PRIOR = 20.0
OUTCOME_MIN, OUTCOME_MAX = 0.5, 1.5
# Sizes of a product's run whose absence lowers the sales of the rest (the best-selling ones).
KEY_SIZES = 2
EARTH_RADIUS_KM = 6371.0088


# --------------------------------------------------------------------------
# Poisson helpers (vectorised)


def prob_at_least(x: np.ndarray, mu: np.ndarray, dispersion: np.ndarray | None = None) -> np.ndarray:
    """P(D >= x), elementwise; 1 when x <= 0, 0 when mu = 0 < x.

    D is Poisson(mu) where ``dispersion`` (phi) is 0 or not given, otherwise negative binomial
    with mean mu and variance mu + phi mu^2: Poisson on a rate known only up to a Gamma of
    shape 1 / phi (the estimate's posterior, §1).
    """
    x, mu = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(mu, dtype=np.float64))
    # the incomplete gamma (beta) function is the costly part: only where the answer is not trivial
    live = (x > 0) & (mu > 0)
    if dispersion is None or not np.any(dispersion):
        if live.all():  # the usual case: no copies in and out of the live cells
            return np.asarray(pdtrc(x - 1.0, mu))  # an array even for scalar arguments, as below
        out = (x <= 0).astype(np.float64)
        out[live] = pdtrc(x[live] - 1.0, mu[live])
        return out
    phi = np.broadcast_to(np.asarray(dispersion, dtype=np.float64), x.shape)
    out = (x <= 0).astype(np.float64)
    nb = live & (phi > 0)
    po = live & ~nb
    out[po] = pdtrc(x[po] - 1.0, mu[po])
    # P(D >= x) = I_q(x, r) with r = 1 / phi and q = mu phi / (1 + mu phi)
    m_phi = mu[nb] * phi[nb]
    out[nb] = betainc(x[nb], 1.0 / phi[nb], m_phi / (1.0 + m_phi))
    return out


def prob_exactly(x: np.ndarray, mu: np.ndarray, dispersion: np.ndarray | None = None) -> np.ndarray:
    """P(D = x), elementwise (x >= 0); D as in ``prob_at_least``."""
    x = np.asarray(x, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = x * np.log(mu) - mu - gammaln(x + 1.0)
        if dispersion is not None and np.any(dispersion):
            phi = np.asarray(dispersion, dtype=np.float64)
            r = 1.0 / phi
            log_nb = (
                gammaln(x + r)
                - gammaln(r)
                - gammaln(x + 1.0)
                - r * np.log1p(mu * phi)
                + x * (np.log(mu * phi) - np.log1p(mu * phi))
            )
            log_p = np.where(phi > 0, log_nb, log_p)
    return np.where(mu > 0, np.exp(log_p), (x == 0).astype(np.float64))


def pmf_step(x: np.ndarray, mu: np.ndarray, dispersion: np.ndarray | None = None) -> np.ndarray:
    """P(D = x + 1) / P(D = x) times (x + 1): mu for a Poisson, mu (1 + x phi) / (1 + mu phi) for
    a negative binomial. The planning walks the tails with it, one unit at a time."""
    if dispersion is None:
        return np.asarray(mu, dtype=np.float64)
    return mu * (1.0 + x * dispersion) / (1.0 + mu * dispersion)


def expected_sales(stock: np.ndarray, mu: np.ndarray, dispersion: np.ndarray | None = None) -> np.ndarray:
    """E[min(D, s)] for s units on hand, elementwise; D as in ``prob_at_least``.

    Uses sum_{d<s} d p(d) = mu P(D' <= s-2), so E = mu P(D' <= s-2) + s P(D >= s), where D' is D
    for a Poisson and, for a negative binomial of shape r, the one of shape r + 1 and the same
    odds (mean mu (1 + phi), dispersion phi / (1 + phi)).
    """
    s = np.maximum(np.asarray(stock, dtype=np.float64), 0.0)
    mu = np.asarray(mu, dtype=np.float64)
    if dispersion is None or not np.any(dispersion):
        below = np.where(s >= 2, pdtr(np.maximum(s - 2.0, 0.0), mu), 0.0)
        return mu * below + s * prob_at_least(s, mu)
    phi = np.asarray(dispersion, dtype=np.float64)
    below = np.where(s >= 2, 1.0 - prob_at_least(s - 1.0, mu * (1.0 + phi), phi / (1.0 + phi)), 0.0)
    return mu * below + s * prob_at_least(s, mu, phi)


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
# Estimation


def product_matrix(inputs: EngineInput) -> sparse.csr_matrix:
    """(K, P) indicator of each item's product."""
    k = inputs.item_product.shape[0]
    p = inputs.product_blocked.shape[0]
    return sparse.csr_matrix(
        (np.ones(k), (np.arange(k), np.asarray(inputs.item_product, dtype=np.int64))), shape=(k, p)
    )


def by_product(a_mat: sparse.csr_matrix, cells: np.ndarray) -> np.ndarray:
    """(N, K) -> (N, P) sums over each product's sizes."""
    return np.asarray((a_mat.T @ cells.T).T)


def _ratio(
    recent: np.ndarray, expected: np.ndarray, bounds: tuple[float, float], prior: float = TREND_PRIOR_UNITS
) -> np.ndarray:
    """Shrunk ratio of the units sold in the last week to those the window's rates expect."""
    ratio = (recent + prior) / (expected + prior)
    return np.clip(ratio, *bounds)


def _trend(recent: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Trend of each store (or product): its Gamma prior fitted like the rates' (never weaker
    than TREND_PRIOR_UNITS), so that chance alone, a handful of units either way over a week,
    moves no rate."""
    prior = max(gamma_shape(recent, expected), TREND_PRIOR_UNITS)
    return _ratio(recent, expected, TREND_BOUNDS, prior)


def exposure(inputs: EngineInput) -> np.ndarray:
    """(N, K) share of the window each cell had stock on the shelf.

    Only today's stock and the daily sales are known, not yesterday's stock: a
    cell with no stock now is taken as out of stock since the day after its
    last sale in the window (the whole window when it sold nothing), a cell
    with stock now as in stock all along, except the days before a transfer it
    received in the window when the receipt ledger shows it empty
    (``receipt_out_days``). A cell replenished otherwise (a stock import) is
    not seen: it counts as exposed the whole window, which understates its rate.
    """
    days = max(int(inputs.history_days), 1)
    n, k = np.asarray(inputs.stock).shape
    out_days = np.zeros((n, k))
    if inputs.last_sale_age is not None:
        age = np.clip(_out_since(inputs), 0.0, days)
        out_days = np.where(np.asarray(inputs.stock) <= 0, age, 0.0)
    if inputs.receipt_out_days is not None:
        out_days = np.minimum(out_days + inputs.receipt_out_days, days)
    return (days - out_days) / days


def recent_exposure(inputs: EngineInput) -> np.ndarray:
    """(N, K) share of the last RECENT_DAYS days each cell had stock on the shelf (as ``exposure``)."""
    n, k = np.asarray(inputs.stock).shape
    out_days = np.zeros((n, k))
    if inputs.last_sale_age is not None:
        days = max(int(inputs.history_days), 1)
        age = np.clip(_out_since(inputs), 0.0, days)
        out_days = np.where(np.asarray(inputs.stock) <= 0, np.minimum(age, RECENT_DAYS), 0.0)
    if inputs.receipt_out_recent is not None:
        out_days = np.minimum(out_days + inputs.receipt_out_recent, RECENT_DAYS)
    return (RECENT_DAYS - out_days) / RECENT_DAYS


def _out_since(inputs: EngineInput) -> np.ndarray:
    """(N, K) days since an empty cell lost its last unit: to a sale, or to a transfer out."""
    age = np.asarray(inputs.last_sale_age, dtype=np.float64)
    if inputs.last_sent_age is None:
        return age
    return np.minimum(age, np.asarray(inputs.last_sent_age, dtype=np.float64))


def key_sizes(inputs: EngineInput, sales: np.ndarray | None = None) -> np.ndarray:
    """(K,) the KEY_SIZES best-selling sizes of each product over the network (grids of 3+ sizes)."""
    item_product = np.asarray(inputs.item_product, dtype=np.int64)
    n_items = item_product.shape[0]
    if n_items == 0:
        return np.zeros(0, dtype=bool)
    x = np.asarray(inputs.sales if sales is None else sales, dtype=np.float64)
    x = x * ~np.asarray(inputs.node_is_cd, dtype=bool)[:, None]
    total = x.sum(axis=0)
    order = np.lexsort((np.arange(n_items), -total, item_product))
    counts = np.bincount(item_product, minlength=int(item_product.max()) + 1)
    starts = np.cumsum(counts) - counts
    rank = np.empty(n_items, dtype=np.int64)
    rank[order] = np.arange(n_items) - starts[item_product[order]]
    return (rank < KEY_SIZES) & (counts[item_product] >= 3) & (total > 0)


@dataclass
class Demand:
    """Each cell's daily rate while its customers buy the size, and the probability they do."""

    rate: np.ndarray  # (N, K) units/day with the whole run on the shelf, 0 at CDs
    alive: np.ndarray  # (N, K) in [0, 1]
    # (N, K) 1 / shape of the rate's Gamma posterior: the horizon's demand is negative binomial
    # with variance mu + dispersion mu^2; None (or 0) where the rate is known (Poisson)
    dispersion: np.ndarray | None = None
    # (K,) share of its run's demand a store loses with all the item's key sizes out (the
    # category's, fitted: engine_runs); None: KEY_RUN_EFFECT
    run_effect: np.ndarray | None = None

    @property
    def mean(self) -> np.ndarray:
        return self.rate * self.alive


def _given(inputs: EngineInput, x: np.ndarray, carried: np.ndarray) -> np.ndarray:
    """(N, K) what each cell was given by the allocation: its stock plus its sales less what
    transfers brought it (``engine_alive.never_given_alive`` reads it)."""
    stock = np.maximum(np.asarray(inputs.stock, dtype=np.float64), 0.0)
    # Transfers are not the allocation's word that the store's customers buy the size: they
    # were decided on this same evidence (an earlier batch's). Units in transit are not counted,
    # nor those received (a size given only by transfers that did not sell is still never given).
    received = 0.0 if inputs.received is None else np.asarray(inputs.received, dtype=np.float64)
    # Units a store sent away as an origin were given to it: its stock no longer shows them.
    sent = 0.0 if inputs.sent is None else np.asarray(inputs.sent, dtype=np.float64)
    return np.maximum(stock + x - received + sent, 0.0) * carried


def estimate_demand(inputs: EngineInput) -> Demand:
    """(rate, alive) of every cell; see the module's docstring and docs/engine.md §1."""
    # Key sizes are the window's, as the valuation's and the grade page's.
    key = key_sizes(inputs)
    effect = item_run_effects(inputs, key)
    inputs, opening = _estimate_window(inputs)
    n_nodes, n_items = np.asarray(inputs.stock).shape
    days = max(int(inputs.history_days), 1)
    is_store = ~np.asarray(inputs.node_is_cd, dtype=bool)
    sold = np.asarray(inputs.sales, dtype=np.float64) * is_store[:, None]
    # The rates leave out the sale that opened a span: counting from a sale on, the days before
    # it are dropped, and with them its waiting time (a slow seller read from its first sale runs
    # high). That sale still tells that the store sells the product and its customers the size.
    x = np.maximum(sold - opening, 0.0)
    if n_nodes == 0 or n_items == 0 or sold.sum() <= 0:
        zeros = np.zeros((n_nodes, n_items))
        return Demand(zeros, zeros.copy(), zeros.copy(), effect)
    item_product = np.asarray(inputs.item_product, dtype=np.int64)
    a_mat = product_matrix(inputs)
    f_shelf = exposure(inputs) * is_store[:, None]
    f = _less_while_runs_broken(f_shelf, key, a_mat, item_product, effect)

    # Network size curve of each product (exposure-weighted), shrunk toward the curve of
    # the network's grids by distance from the middle size; then again with each day on the
    # shelf weighted by what its store sells of the product (``_shelf_by_store_level``).
    sizes_per_product = np.bincount(item_product, minlength=a_mat.shape[1])
    n_stores = max(int(is_store.sum()), 1)
    curve_of = partial(
        size_curve, x.sum(axis=0), item_product=item_product,
        item_size_pos=np.asarray(inputs.item_size_pos), sizes_per_product=sizes_per_product,
    )  # fmt: skip
    share = curve_of(f.sum(axis=0) / n_stores)

    # Cells, shrunk toward the store x product total times the size share.
    t_np = by_product(a_mat, x)
    levels = _store_product_rates(t_np, by_product(a_mat, f * share[None, :]))
    share = curve_of(_shelf_by_store_level(f, levels, item_product) / n_stores)
    m = _store_product_rates(t_np, by_product(a_mat, f * share[None, :]))[:, item_product] * share[None, :]
    mf = m * f
    shape_cell = gamma_shape(x, mf)
    rate, dispersion = _cell_rates(x, m, mf, shape_cell, days)

    # Sizes nobody buys: zero sales over days on the shelf, beyond what the pooled rate explains.
    p_zero = (shape_cell / (shape_cell + mf)) ** shape_cell
    pos = np.asarray(inputs.item_size_pos, dtype=np.float64)
    centre = (sizes_per_product[item_product] - 1) / 2.0
    ring = np.minimum(np.abs(pos - centre).astype(np.int64), 3)
    carried = (by_product(a_mat, sold) > 0)[:, item_product] & is_store[:, None]
    alive = alive_on_shelf(sold, p_zero, ring, carried & (f_shelf > 0.5))
    given = _given(inputs, sold, carried)
    alive = never_given_alive(
        given, sold, by_product(a_mat, given), item_product, ring, carried, alive, p_zero
    )

    if days > RECENT_DAYS:
        trend = _trend_factor(inputs, a_mat, item_product, (key, effect), is_store, rate, alive)
        rate = rate * trend[:, item_product]
    if inputs.outcomes is not None:
        # What the store's moved units sold against what these rates expect of them (§9).
        category = np.asarray(inputs.product_category)[item_product]
        rate = rate * outcome_factors(inputs.outcomes, rate, alive, dispersion, category)[:, category]
    return Demand(rate * is_store[:, None], alive * is_store[:, None], dispersion * is_store[:, None], effect)


def demand_factors(esi: np.ndarray, asi: np.ndarray) -> np.ndarray:
    """Each group's ASI / ESI shrunk toward 1 by a prior whose strength is fitted over every group
    (by moments, as the rates' are), never weaker than ``OUTCOME_PRIOR``, clipped to
    [OUTCOME_MIN, OUTCOME_MAX]. Where moved units sold what was expected up to chance, the prior
    is strong and every factor stays near 1: a store is not rated down for one unlucky fortnight."""
    esi, asi = np.asarray(esi, dtype=np.float64), np.asarray(asi, dtype=np.float64)
    prior = max(gamma_shape(asi, esi), OUTCOME_PRIOR)
    return np.clip((asi + prior) / (esi + prior), OUTCOME_MIN, OUTCOME_MAX)


def outcome_factors(
    outcomes: Outcomes, rate: np.ndarray, alive: np.ndarray, dispersion: np.ndarray, category: np.ndarray
) -> np.ndarray:
    """(N, C) each destination store x category's rate factor: what its transfers' units sold in
    their window against what ``rate`` expects of them there, ``E[min(D, before + units)] −
    E[min(D, before)]`` (``demand_factors``); 1 where none was measured.

    Set against the expectation of the day they were sent, the units' sales would count twice:
    the rates have read them already (the cell's days on the shelf after the receipt). Against
    today's, what is left is what the rates still miss, as the store x product prior pulls a
    store's rates toward the network's."""
    d, k = np.asarray(outcomes.dest, dtype=np.int64), np.asarray(outcomes.item, dtype=np.int64)
    mu = rate[d, k] * outcomes.days
    before = np.asarray(outcomes.before, dtype=np.float64)
    expected = alive[d, k] * (
        expected_sales(before + outcomes.units, mu, dispersion[d, k])
        - expected_sales(before, mu, dispersion[d, k])
    )
    shape = (rate.shape[0], int(category.max(initial=-1)) + 1)
    esi, asi, measured = np.zeros(shape), np.zeros(shape), np.zeros(shape, dtype=bool)
    np.add.at(esi, (d, category[k]), expected)
    np.add.at(asi, (d, category[k]), np.asarray(outcomes.sold, dtype=np.float64))
    measured[d, category[k]] = True
    factor = np.ones(shape)
    factor[measured] = demand_factors(esi[measured], asi[measured])
    return factor


def item_run_effects(inputs: EngineInput, key: np.ndarray | None = None) -> np.ndarray | None:
    """(K,) each item's broken-run effect, its category's as the window's sales tell it
    (``engine_runs``); None without key sizes or a last week apart from the rest."""
    key = key_sizes(inputs) if key is None else key
    days = max(int(inputs.history_days), 1)
    item_product = np.asarray(inputs.item_product, dtype=np.int64)
    if not key.any() or days <= RECENT_DAYS:
        return None
    is_store = ~np.asarray(inputs.node_is_cd, dtype=bool)
    a_mat = product_matrix(inputs)
    n_key = np.bincount(item_product, weights=key.astype(np.float64), minlength=a_mat.shape[1])
    f, f_recent = exposure(inputs), recent_exposure(inputs)
    key_out = (
        _key_out_share(f, key, a_mat, item_product),
        _key_out_share(f_recent, key, a_mat, item_product),
    )
    category = np.asarray(inputs.product_category, dtype=np.int64)[item_product]
    campaign = np.asarray(inputs.campaign, dtype=bool)[:, item_product]
    # only cells with stock now: a cell that sold out stopped at a sale, which would bias the
    # share of its sales in the week it ran out upward
    on_shelf = np.asarray(inputs.stock) > 0
    informative = is_store[:, None] & (n_key > 0)[item_product][None, :] & ~campaign & on_shelf
    effects = run_effects(
        np.asarray(inputs.sales, dtype=np.float64), np.asarray(inputs.sales_recent, dtype=np.float64),
        f, f_recent, days, RECENT_DAYS, key_out, informative, category,
        int(category.max(initial=-1)) + 1,
    )  # fmt: skip
    return effects[category]


def _estimate_window(inputs: EngineInput) -> tuple[EngineInput, np.ndarray | float]:
    """The inputs as the estimate reads them: over the longer history when there is one (its
    sales, last sales and receipts; the last week and the stock are the same), and the units
    whose sales opened a span (``opening_sales``)."""
    history = inputs.estimate_history
    if history is None or history.days <= inputs.history_days:
        return inputs, 0.0
    # the days before a cell's span count as days off the shelf
    unseen = history.days - np.asarray(history.span, dtype=np.int64)
    if history.receipt_out_days is not None:
        unseen = unseen + history.receipt_out_days
    return replace(
        inputs,
        sales=history.sales,
        history_days=history.days,
        last_sale_age=history.last_sale_age,
        receipt_out_days=unseen.astype(np.int16),
        received=history.received,
        sent=history.sent,
        estimate_history=None,
    ), (0.0 if history.opening is None else np.asarray(history.opening, dtype=np.float64))


def history_spans(first_sale_age: np.ndarray, item_product: np.ndarray, window: int, days: int) -> np.ndarray:
    """(N, K) days of a ``days``-day history each cell counts: back to its store's first sale of
    the product in it (``first_sale_age``, days before the batch date, 0: none), at least the
    ``window`` and at most ``days``."""
    return np.clip(_store_first_sale(first_sale_age, item_product), window, days).astype(np.int16)


def opening_sales(first_sale_age: np.ndarray, item_product: np.ndarray, window: int, days: int) -> np.ndarray:
    """(N, K) float32: 1 at the cell whose sale opened its span where its store's first sale of the
    product cut the span short (``history_spans``: before the window, after the history's first
    day), the first of the sizes sold that day; 0 elsewhere.

    Counted from a sale on, a Poisson rate's unbiased estimate leaves that sale out: the days
    spent waiting for it are not in the span."""
    age = np.asarray(first_sale_age, dtype=np.int64)
    item_product = np.asarray(item_product, dtype=np.int64)
    n_items = item_product.shape[0]
    first = _store_first_sale(age, item_product)
    opened = (age == first) & (first > window) & (first < days)
    index = np.where(opened, np.arange(n_items)[None, :], n_items)
    lowest = np.full((age.shape[0], int(item_product.max(initial=-1)) + 1), n_items)
    np.minimum.at(lowest.T, item_product, index.T)
    return (opened & (np.arange(n_items)[None, :] == lowest[:, item_product])).astype(np.float32)


def _store_first_sale(first_sale_age: np.ndarray, item_product: np.ndarray) -> np.ndarray:
    """(N, K) days since each cell's store first sold the cell's product (0: never)."""
    item_product = np.asarray(item_product, dtype=np.int64)
    first = np.zeros(
        (np.asarray(first_sale_age).shape[0], int(item_product.max(initial=-1)) + 1), dtype=np.int64
    )
    np.maximum.at(first.T, item_product, np.asarray(first_sale_age, dtype=np.int64).T)
    return first[:, item_product]


def _key_out_share(
    f: np.ndarray, key: np.ndarray, a_mat: sparse.csr_matrix, item_product: np.ndarray
) -> np.ndarray:
    """(N, K) the share of each cell's run's key sizes off the shelf, ``f`` each cell's share on it."""
    n_key = np.bincount(item_product, weights=key.astype(np.float64), minlength=a_mat.shape[1])
    return (by_product(a_mat, (1.0 - f) * key[None, :]) / np.maximum(n_key, 1.0)[None, :])[:, item_product]


def _less_while_runs_broken(
    f: np.ndarray,
    key: np.ndarray,
    a_mat: sparse.csr_matrix,
    item_product: np.ndarray,
    effect: np.ndarray | None,
) -> np.ndarray:
    """The days on the shelf ``f``, counting less while a key size of the run was out: the rest
    of the run sold less then (as many key-size days out, on average, as the exposure says)."""
    if not key.any():
        return f
    out_share = _key_out_share(f, key, a_mat, item_product)
    return f * (1.0 - item_effects(effect, item_product.shape[0])[None, :] * out_share)


def _shelf_by_store_level(f: np.ndarray, levels: np.ndarray, item_product: np.ndarray) -> np.ndarray:
    """(K,) each size's days on the shelf over the network, each store's weighted by what it sells
    of the product (``levels``, its store x product total), the product's total kept.

    A size on the shelf only at the product's best store (the rest of the network out of it, a
    transfer just in) sells there as that store sells, not as the product's best size: counted
    as an average store's days, a few units over a few days made it most of the product's
    demand at every store. Likewise days at a store that does not sell the product (stray
    stock) say little of what a size sells."""
    n_products = levels.shape[1]
    weighted = (f * levels[:, item_product]).sum(axis=0)
    plain = np.bincount(item_product, weights=f.sum(axis=0), minlength=n_products)
    total = np.bincount(item_product, weights=weighted, minlength=n_products)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(total > 0, plain / total, 0.0)
    return weighted * scale[item_product]


def _store_product_rates(t_np: np.ndarray, f_np: np.ndarray) -> np.ndarray:
    """(N, P) window totals with the whole run on the shelf: store x product totals ``t_np``
    against store level x product level, each cell's share of the run weighted by the days it
    was on the shelf (``f_np``), fitted by alternating sums (Poisson) and shrunk toward the fit."""
    store = t_np.sum(axis=1) + 1e-9
    prod = np.ones(t_np.shape[1])
    for _ in range(FIT_ROUNDS):
        store = t_np.sum(axis=1) / np.maximum(f_np @ prod, 1e-9)
        prod = t_np.sum(axis=0) / np.maximum(store @ f_np, 1e-9)
    full = np.outer(store, prod)
    e_np = full * f_np
    shape_np = gamma_shape(t_np, e_np)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(full > 0, full * (t_np + shape_np) / (e_np + shape_np), 0.0)


def _cell_rates(
    x: np.ndarray, m: np.ndarray, mf: np.ndarray, shape_cell: float, days: int
) -> tuple[np.ndarray, np.ndarray]:
    """(daily rate, dispersion) of each cell: its sales ``x`` shrunk toward its pooled window
    total ``m`` (``mf`` over its days on the shelf).

    The prior's strength is the one fitted on the snapshot (``shape_cell``, the same that tells
    how often a size sells nothing, ``_alive``), with no cap: a cell is picked as a destination
    where its estimate runs high and as an origin where it runs low, and a rate that follows
    its own few units more than the fit says they deserve carries that noise into every choice
    (docs/engine.md §1).
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        lam = np.where(m > 0, m * (x + shape_cell) / (mf + shape_cell), 0.0)
    # The rate's posterior is Gamma with shape x + b: over the horizon, demand is negative
    # binomial, its tails far from the mean fatter than a Poisson at the point estimate.
    return lam / days, np.where(m > 0, 1.0 / (x + shape_cell), 0.0)


def _trend_factor(
    inputs: EngineInput,
    a_mat: sparse.csr_matrix,
    item_product: np.ndarray,
    runs: tuple[np.ndarray, np.ndarray | None],
    is_store: np.ndarray,
    rate: np.ndarray,
    alive: np.ndarray,
) -> np.ndarray:
    """(N, P) what the last week says of each store x product rate.

    Trends compare what the last week sold with what the window's rates say it would have
    sold over the days each cell was on the shelf in that week (with its run as it was): a
    cell that ran out sells less lately because it has nothing, not because demand fell, and
    keeping only the cells still in stock would keep those that happened to sell little.
    """
    f_recent = _less_while_runs_broken(
        recent_exposure(inputs) * is_store[:, None], *runs[:1], a_mat, item_product, runs[1]
    )
    recent = np.asarray(inputs.sales_recent, dtype=np.float64) * is_store[:, None]
    r_np = by_product(a_mat, recent)
    e_np = by_product(a_mat, rate * alive * f_recent * RECENT_DAYS)
    product_trend = _trend(r_np.sum(axis=0), e_np.sum(axis=0))
    store_trend = _trend(r_np.sum(axis=1), e_np.sum(axis=1))
    factor = store_trend[:, None] * product_trend[None, :]
    campaign = np.asarray(inputs.campaign, dtype=bool)
    if campaign.any():
        # A campaign at a store may only raise what the trends say.
        lift = _ratio(r_np, e_np * factor, CAMPAIGN_LIFT_BOUNDS)
        factor = np.where(campaign, factor * lift, factor)
    return factor


def estimate_daily_demand(inputs: EngineInput) -> np.ndarray:
    """(N, K) expected units sold per day at each cell (0 at CDs): rate x alive."""
    return estimate_demand(inputs).mean
