"""Quality and speed simulator of the transfer recommendation engine, against an independent oracle.

Builds synthetic networks whose true demand is known, plays 30 days of sales
day by day (stock-outs stop sales, a missing key size lowers the sales of the
rest of the run, some cells are replenished mid-window), then hands the engine
only what a retailer's database would hold: stock now, sales per cell over the
window and in its last week, the days since each cell's last sale, campaigns,
coordinates. A second week plays 7 more days while week 1's transfers are in
transit and asks for a second batch.

Each batch is measured exactly (Poisson formulas on the true rates, with the
run effect of the stock after the moves) against an oracle that knows the true
rates, obeys the same rules (lot bounds per shipment, blocked stores and
brands, campaign lock, no circles, shipping costs per route and per km, CDs
never destinations) and optimises on its own: a mixed-integer program solved
by HiGHS (``scipy.optimize.milp``), once with no limit on units (every
worthwhile move: **capture**) and once with at most the batch's units
(**vs.orac**, equal units moved). Every rule is checked on every
recommendation and each batch is computed twice (determinism). Week 2 counts
the units re-sent to cells their in-transit units already cover and the units
overdrawn from an origin's post-transit stock (**resent**, **overdr**), and the
same for the batch the engine makes when in transit is ignored.

Usage::

    .venv/bin/python benchmarks/simulate_engine.py [--seeds 5] [--shape 10x20] [--scale] [--no-oracle]
        [--true-rates | --informed-rates {demand,sales}] [--first-seed 1000] [--ganho-minimo 150]
        [--oracle-seconds 10]

``--ganho-minimo`` sets the engine's rule of that name (what each moved unit must add, in
thousandths of an expected unit sold) in both rule sets; the oracle and the measures know
no such bar: every unit that nets more than nothing counts.
``--true-rates`` hands the engine the true daily rates instead of its own estimate: what
is left of the gap to the oracle is the planning's, the rest the estimate's.
``--informed-rates`` hands it the exact posterior of each rate under the simulator's own
prior, from the window's demand uncapped by stock (``demand``) or from its sales
(``sales``): what 30 days of data can tell at best (``simulate_informed.py``).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import sys
import time
import tracemalloc
from dataclasses import dataclass, replace

import highspy
import numpy as np
from scipy import sparse

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.simulate_informed import informed_demand
from services.stock.engine import (
    ALTA_MAX_DAYS,
    DAYS_CAP,
    cd_keep_value,
    expected_sales,
    haversine_km,
    prob_at_least,
    recommend,
    shipment_cost,
)
from services.stock.engine_cells import cell_values, observed_product_sales, origin_keeps
from services.stock.engine_contract import (
    ESTIMATE_HISTORY_DAYS,
    MIN_GAIN_PER_UNIT,
    NO_SEND,
    EngineInput,
    EngineOutput,
    EngineRules,
    SalesHistory,
)
from services.stock.engine_demand import estimate_demand, history_spans, opening_sales

HISTORY_DAYS = 30
RECENT_DAYS = 7
HORIZON = 14
# The simulator's truth: a store missing k of its n key sizes of a product sells
# (1 - BROKEN_RUN * k / n) of its usual demand of the sizes it has.
BROKEN_RUN = 0.3
KEY_SIZES = 2
# Probability that a store's customers never buy a size, by distance from the grid's middle.
DEAD_SIZE = {0: 0.03, 1: 0.10, 2: 0.30, 3: 0.40}
# Spread (log scale) of a store x product's demand around its store's and product's levels.
INTERACTION_SIGMA = 0.35
# Seconds per oracle solve (relaxation, restricted and whole program together; a solve stops
# earlier once within ORACLE_REL_GAP), and the share of them the restricted program (the
# shipments the relaxation uses) may take to find a first plan.
ORACLE_TIME_LIMIT = 10.0
ORACLE_RESTRICTED_SHARE = 0.5
# HiGHS stops once its plan is this close to the bound it proved.
ORACLE_REL_GAP = 0.002
# A solve left farther than this from its bound runs once more from its plan, with this many
# times its seconds (HiGHS cannot resume a search: the longer run starts over, from the plan).
ORACLE_GAP_TARGET = 0.01
ORACLE_RETRY_FACTOR = 3
# A destination whose first unit adds less than this (true expected units sold) is not offered.
ORACLE_MIN_FIRST_GAIN = 0.02


@dataclass
class Shape:
    name: str
    stores: int
    cds: int
    products: int
    sizes: tuple[int, ...]  # possible grid lengths


SHAPES = [
    Shape("10x20", 10, 1, 20, (4, 5, 6)),
    Shape("16x30", 16, 1, 30, (4, 5, 6)),
]
SCALE = Shape("300x1000", 300, 2, 1000, (6,))


@dataclass
class Truth:
    """What only the simulator knows, and the state it carries from one day to the next."""

    rate: np.ndarray  # (N, K) daily rate with a complete run (campaign lift included from day 23)
    base_rate: np.ndarray  # (N, K) daily rate before the campaign lift
    lift: np.ndarray  # (N, K) campaign multiplier
    key_live: np.ndarray  # (N, K) key size the store's customers buy: its absence breaks the run
    stock: np.ndarray  # (N, K) stock at the end of the simulated days
    daily_sales: list[np.ndarray]  # one (N, K) int16 array per simulated day
    rng: np.random.Generator
    # For ``--informed-rates`` only (``simulate_informed.py``): each cell's rate before the store x
    # product interaction, every size live; each item's chance that a store's customers never buy
    # it; and, day by day, the demand (not capped by the stock), the stock before the day's sales
    # and the demand's multiplier on the rate before the campaign (the lift from day 23, the
    # broken-run effect)
    prior_rate: np.ndarray | None = None
    dead_p: np.ndarray | None = None
    daily_demand: list[np.ndarray] | None = None
    daily_stock: list[np.ndarray] | None = None
    daily_exposure: list[np.ndarray] | None = None


@dataclass
class World:
    inputs: EngineInput
    rules: EngineRules
    truth: Truth
    week: int
    in_transit: np.ndarray  # (N, K) units arriving within the horizon
    # (N, K) units that left each origin for week 1's batch (week 2 only); the snapshot's
    # stock is already net of them, as ``services/stock/snapshot.py`` hands it
    shipped: np.ndarray | None = None


def _run_factor(stock: np.ndarray, key_live: np.ndarray, item_product: np.ndarray, n_products: int):
    """(N, K) demand multiplier of each cell given the stock: the broken-run effect."""
    starts = np.r_[0, np.nonzero(np.diff(item_product))[0] + 1]
    missing = np.add.reduceat((key_live & (stock <= 0)).astype(np.float64), starts, axis=1)
    n_key = np.add.reduceat(key_live.astype(np.float64), starts, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = np.where(n_key > 0, 1.0 - BROKEN_RUN * missing / n_key, 1.0)
    return factor[:, item_product]


def _play_days(truth: Truth, inputs: EngineInput, days: int, first_day: int, restock_day: int | None) -> None:
    """Sales day by day: demand Poisson, capped by the stock; the run effect of that day's stock."""
    rng = truth.rng
    ip = inputs.item_product
    n_products = inputs.product_blocked.shape[0]
    for day in range(first_day, first_day + days):
        rate = truth.rate if day >= HISTORY_DAYS - RECENT_DAYS else truth.base_rate
        factor = _run_factor(truth.stock, truth.key_live, ip, n_products)
        demand = rng.poisson(rate * factor)
        if truth.daily_demand is not None:
            lift = truth.lift if day >= HISTORY_DAYS - RECENT_DAYS else 1.0
            truth.daily_demand.append(demand.astype(np.int32))
            truth.daily_stock.append(truth.stock.astype(np.int32))
            truth.daily_exposure.append((lift * factor).astype(np.float32))
        sold = np.minimum(demand, truth.stock)
        truth.stock -= sold
        truth.daily_sales.append(sold.astype(np.int16))
        if restock_day is not None and day == restock_day:
            # replenishment of a few store x product pairs mid-window: stock-outs the last
            # sale alone cannot see
            pick = (rng.random((truth.stock.shape[0], n_products)) < 0.15)[:, ip] & ~inputs.node_is_cd[
                :, None
            ]
            truth.stock += np.where(pick, rng.poisson(truth.base_rate * 12), 0)


def _last_days(daily_sales: list[np.ndarray], days: int) -> tuple[np.ndarray, np.ndarray]:
    """(N, K) units sold over the last ``days`` days and the days after each cell's last sale."""
    window = np.stack(daily_sales[-days:])  # (days, N, K)
    sold_any = window > 0
    last = days - 1 - np.argmax(sold_any[::-1], axis=0)
    age = np.where(sold_any.any(axis=0), days - 1 - last, days).astype(np.int16)
    return window.sum(axis=0).astype(np.float32), age


def _snapshot(
    truth: Truth,
    inputs: EngineInput,
    in_transit: np.ndarray | None,
    history_days: int = ESTIMATE_HISTORY_DAYS,
) -> EngineInput:
    """What the database holds: the window's sales, and the estimate's longer history once the
    days played pass the window (as ``snapshot.read_inputs`` reads them)."""
    sales, age = _last_days(truth.daily_sales, HISTORY_DAYS)
    days = min(len(truth.daily_sales), history_days)
    history = None
    if days > HISTORY_DAYS:
        sold_any = np.stack(truth.daily_sales[-days:]) > 0
        first_age = np.where(sold_any.any(axis=0), days - np.argmax(sold_any, axis=0), 0)
        span = history_spans(first_age, inputs.item_product, HISTORY_DAYS, days)
        opening = opening_sales(first_age, inputs.item_product, HISTORY_DAYS, days)
        history = SalesHistory(days, *_last_days(truth.daily_sales, days), span=span, opening=opening)
    return replace(
        inputs,
        stock=truth.stock.astype(np.int32),
        sales=sales,
        sales_recent=np.stack(truth.daily_sales[-RECENT_DAYS:]).sum(axis=0).astype(np.float32),
        last_sale_age=age,
        in_transit=None if in_transit is None else in_transit.astype(np.int32),
        estimate_history=history,
    )


def build_world(shape: Shape, seed: int, *, variant: int = 0, record_demand: bool = False) -> World:
    """Week 1 of a network with known demand. ``variant`` changes the rules and blocks;
    ``record_demand`` keeps what ``--informed-rates`` reads (``Truth``)."""
    rng = np.random.default_rng(seed)
    n_nodes = shape.stores + shape.cds
    is_cd = np.zeros(n_nodes, dtype=bool)
    is_cd[shape.stores :] = True

    # stores spread over regional clusters across the country, CDs near cluster centres
    n_clusters = max(2, shape.stores // 10)
    centres = np.column_stack([rng.uniform(-30, -3, n_clusters), rng.uniform(-55, -35, n_clusters)])
    cluster = rng.integers(0, n_clusters, n_nodes)
    lat = centres[cluster, 0] + rng.normal(0, 0.5, n_nodes)
    lng = centres[cluster, 1] + rng.normal(0, 0.5, n_nodes)
    lat[is_cd] = centres[np.arange(shape.cds) % n_clusters, 0]
    lng[is_cd] = centres[np.arange(shape.cds) % n_clusters, 1]

    n_brands, n_categories = 8, 6
    product_brand = rng.integers(0, n_brands, shape.products).astype(np.int32)
    product_category = rng.integers(0, n_categories, shape.products).astype(np.int32)
    n_sizes = rng.choice(shape.sizes, shape.products)
    item_product = np.repeat(np.arange(shape.products), n_sizes).astype(np.int32)
    starts = np.cumsum(n_sizes) - n_sizes
    item_size_pos = (np.arange(item_product.shape[0]) - starts[item_product]).astype(np.int16)
    n_items = item_product.shape[0]

    # size curves: a bell around the middle of the grid, perturbed per product and per store
    pos = item_size_pos.astype(np.float64)
    centre = (n_sizes[item_product] - 1) / 2.0
    mid = centre + rng.normal(0, 0.4, shape.products)[item_product]
    width = rng.uniform(0.9, 1.6, shape.products)[item_product]
    curve = np.exp(-0.5 * ((pos - mid) / width) ** 2) * rng.gamma(30, 1 / 30, n_items)
    skew = rng.normal(0, 0.08, n_nodes)
    share = curve[None, :] * np.exp(skew[:, None] * (pos - mid)[None, :])
    # sizes a store's customers never buy, more often at the ends of the grid
    ring = np.minimum(np.abs(pos - centre).astype(np.int64), 3)
    dead_p = np.array([DEAD_SIZE[i] for i in range(4)])[ring]
    dead = rng.random((n_nodes, n_items)) < dead_p[None, :]
    share = share * ~dead
    prod_sum = np.zeros((n_nodes, shape.products))
    np.add.at(prod_sum.T, item_product, share.T)
    share = np.where(prod_sum[:, item_product] > 0, share / np.maximum(prod_sum[:, item_product], 1e-12), 0.0)
    # key sizes: the product's two best-selling sizes on its network curve
    order = np.lexsort((-curve, item_product))
    rank = np.empty(n_items, dtype=np.int64)
    rank[order] = np.arange(n_items) - starts[item_product[order]]
    key = rank < KEY_SIZES

    store_level = rng.lognormal(0.0, 0.45, n_nodes)
    product_level = rng.lognormal(-0.2, 0.7, shape.products)
    interaction = rng.lognormal(-0.5 * INTERACTION_SIGMA**2, INTERACTION_SIGMA, (n_nodes, shape.products))
    carried = rng.random((n_nodes, shape.products)) < 0.8
    base = 0.7  # units/day of an average product at an average store, all sizes
    rate_np = base * store_level[:, None] * product_level[None, :] * interaction * carried
    rate_np[is_cd] = 0.0
    base_rate = rate_np[:, item_product] * share

    campaign = np.zeros((n_nodes, shape.products), dtype=bool)
    camp_products = rng.choice(shape.products, max(1, shape.products // 20), replace=False)
    campaign[np.ix_(~is_cd, camp_products)] = rng.random((shape.stores, camp_products.shape[0])) < 0.5
    lift = np.where(campaign, rng.uniform(1.3, 1.6, campaign.shape), 1.0)[:, item_product]

    # stock 30 days ago: allocation errors per store x product and per size, so that
    # some cells run out during the window; dead stock of products a store does not carry
    alloc = rng.lognormal(0.0, 0.75, (n_nodes, shape.products))[:, item_product]
    alloc = alloc * rng.lognormal(0.0, 0.5, (n_nodes, n_items))
    stock = rng.poisson(base_rate * (HISTORY_DAYS + HORIZON) * 1.3 * alloc)
    stray = (~carried[:, item_product] | dead) & (rng.random((n_nodes, n_items)) < 0.08)
    stock = np.where(stray, rng.poisson(3, (n_nodes, n_items)), stock)
    stock[:, rng.random(n_items) < 0.08] = 0  # sizes missing everywhere
    network_need = (base_rate * lift).sum(axis=0) * HORIZON
    with_cd = rng.random(shape.products) < 0.6
    for c in np.nonzero(is_cd)[0]:
        stock[c] = rng.poisson(network_need * 0.35 / shape.cds) * with_cd[item_product]

    node_blocked = np.zeros(n_nodes, dtype=bool)
    product_blocked = np.zeros(shape.products, dtype=bool)
    rules = EngineRules(
        qtd_minima=3,
        qtd_maxima=15,
        priorizar_cd=True,
        peso_distancia=40,
        peso_giro=35,
        peso_estoque=25,
        bloqueio_campanha=True,
        custo_envio=0.3,
        custo_km=0.001,
    )
    route_factor = np.ones((n_nodes, n_nodes), dtype=np.float32)
    if variant % 2 == 1:
        node_blocked[rng.choice(shape.stores, max(1, shape.stores // 20), replace=False)] = True
        product_blocked = product_brand == rng.integers(0, n_brands)
        rules = replace(
            rules,
            qtd_minima=2,
            qtd_maxima=10,
            priorizar_cd=False,
            bloqueio_campanha=False,
            custo_envio=1.0,
            custo_km=0.002,
        )
        route_factor[rng.random((n_nodes, n_nodes)) < 0.05] = 0.7

    inputs = EngineInput(
        node_is_cd=is_cd,
        node_lat=lat,
        node_lng=lng,
        node_blocked=node_blocked,
        product_blocked=product_blocked,
        product_brand=product_brand,
        product_category=product_category,
        item_product=item_product,
        item_size_pos=item_size_pos,
        stock=stock.astype(np.int32),
        sales=np.zeros(stock.shape, dtype=np.float32),
        sales_recent=np.zeros(stock.shape, dtype=np.float32),
        history_days=HISTORY_DAYS,
        campaign=campaign,
        route_factor=route_factor,
        brand_factor=np.where(np.arange(n_brands) == 0, 0.8, 1.0).astype(np.float32),
        category_factor=np.ones(n_categories, dtype=np.float32),
    )
    truth = Truth(
        rate=base_rate * lift,
        base_rate=base_rate,
        lift=lift,
        key_live=key[None, :] & (base_rate > 0),
        stock=stock.astype(np.int64),
        daily_sales=[],
        rng=rng,
    )
    if record_demand:
        # every size live, the interaction at its mean (1): what the informed estimate starts from
        live_share = curve[None, :] * np.exp(skew[:, None] * (pos - mid)[None, :])
        live_sum = np.zeros((n_nodes, shape.products))
        np.add.at(live_sum.T, item_product, live_share.T)
        live_share = live_share / np.maximum(live_sum[:, item_product], 1e-12)
        level = base * store_level[:, None] * product_level[None, :] * carried
        level[is_cd] = 0.0
        truth.prior_rate = level[:, item_product] * live_share
        truth.dead_p = dead_p
        truth.daily_demand, truth.daily_stock, truth.daily_exposure = [], [], []
    _play_days(truth, inputs, HISTORY_DAYS, 0, restock_day=HISTORY_DAYS // 2)
    none = np.zeros(stock.shape, dtype=np.int64)
    return World(_snapshot(truth, inputs, None), rules, truth, 1, none)


def second_week(world: World, out: EngineOutput) -> World:
    """Week 2: week 1's batch left its origins and is in transit; 7 more days of sales."""
    truth = world.truth
    truth.stock = truth.stock.copy()
    np.add.at(truth.stock, (out.origin, out.item), -out.quantity.astype(np.int64))
    truth.rate = truth.base_rate * truth.lift
    _play_days(truth, world.inputs, 7, HISTORY_DAYS, restock_day=None)
    transit = np.zeros(truth.stock.shape, dtype=np.int64)
    np.add.at(transit, (out.dest, out.item), out.quantity.astype(np.int64))
    shipped = np.zeros(truth.stock.shape, dtype=np.int64)
    np.add.at(shipped, (out.origin, out.item), out.quantity.astype(np.int64))
    # what the transfers took, as the database has it: sent before the week's first day's sales
    sent = shipped.astype(np.int32)
    inputs = replace(
        _snapshot(truth, world.inputs, transit),
        sent=sent,
        last_sent_age=np.where(sent > 0, 6, NO_SEND).astype(np.int16),
    )
    if inputs.estimate_history is not None:
        inputs = replace(inputs, estimate_history=replace(inputs.estimate_history, sent=sent))
    return World(inputs, world.rules, truth, 2, transit, shipped)


def covered_cells(world: World) -> np.ndarray:
    """(N, K) cells with units in transit that, once these arrive, the engine's own valuation
    would send nothing more: the next unit's value (its chance to sell, plus the run it completes)
    is below the engine's bar. A unit sent there re-sends what is already on its way."""
    cells = cell_values(world.inputs, world.rules, estimate_demand(world.inputs))
    first = cells.alive * prob_at_least(cells.held + 1, cells.mu, cells.dispersion) + cells.uplift
    return (world.in_transit > 0) & (first < world.rules.ganho_minimo)


def transit_figures(world: World, out: EngineOutput) -> tuple[int, int]:
    """Week 2: (units sent to cells their in-transit units already cover, units taken from an
    origin beyond its stock after week 1's transfers left)."""
    n, k = world.inputs.stock.shape
    sent = np.zeros((n, k), dtype=np.int64)
    np.add.at(sent, (out.dest, out.item), out.quantity.astype(np.int64))
    taken = np.zeros((n, k), dtype=np.int64)
    np.add.at(taken, (out.origin, out.item), out.quantity.astype(np.int64))
    resent = int(sent[covered_cells(world)].sum())
    overdrawn = int(np.maximum(taken - np.asarray(world.inputs.stock, dtype=np.int64), 0).sum())
    return resent, overdrawn


def transit_ignored(world: World) -> EngineInput:
    """Week 2's inputs as they were before in-transit accounting: origins still show the
    shipped units until a stock load, and destinations know of nothing on its way."""
    return replace(world.inputs, stock=(world.inputs.stock + world.shipped).astype(np.int32), in_transit=None)


# --------------------------------------------------------------------------
# Measures


def apply_moves(stock: np.ndarray, out: EngineOutput) -> np.ndarray:
    after = stock.astype(np.int64).copy()
    np.add.at(after, (out.origin, out.item), -out.quantity.astype(np.int64))
    np.add.at(after, (out.dest, out.item), out.quantity.astype(np.int64))
    return after


def true_sales(world: World, stock: np.ndarray) -> float:
    """Expected units sold over the horizon with this stock (in-transit units arrived), run effect included."""
    held = stock + world.in_transit
    factor = _run_factor(
        held, world.truth.key_live, world.inputs.item_product, world.inputs.product_blocked.size
    )
    return float(expected_sales(held, world.truth.rate * factor * world.rules.horizon_days).sum())


def routes_cost(world: World, origin: np.ndarray, dest: np.ndarray) -> float:
    """Shipping cost of a batch: each distinct route once."""
    if origin.shape[0] == 0:
        return 0.0
    pairs = np.unique(np.column_stack([origin, dest]), axis=0)
    inputs = world.inputs
    km = haversine_km(
        inputs.node_lat[pairs[:, 0]],
        inputs.node_lng[pairs[:, 0]],
        inputs.node_lat[pairs[:, 1]],
        inputs.node_lng[pairs[:, 1]],
    )
    return float(shipment_cost(km, world.rules).sum())


@dataclass
class Plan:
    origin: np.ndarray
    dest: np.ndarray
    item: np.ndarray
    quantity: np.ndarray


def evaluate(world: World, plan) -> tuple[float, float, int]:
    """(expected extra units sold, shipping cost, units moved) of a plan, with the true rates."""
    before = true_sales(world, world.inputs.stock)
    after = true_sales(world, apply_moves(world.inputs.stock, plan))
    return after - before, routes_cost(world, plan.origin, plan.dest), int(np.sum(plan.quantity))


def oracle(
    world: World, unit_cap: int | None, time_limit: float = ORACLE_TIME_LIMIT
) -> tuple[Plan, float, float]:
    """The rule-respecting optimum on the true rates: a mixed-integer program (HiGHS).

    Maximises expected extra sales minus shipping costs (and the value of CD stock
    kept, as the engine counts it) over shipments x[o, d, k] in {0} u [qtdMinima,
    qtdMaxima], every origin for every destination, one binary per route paying its
    cost once for all items, no node both sending and receiving an item, and a
    binary per key size kept in stock (the run effect, linearised at the current
    stock). Concave gains and convex losses are piecewise-linear unit segments. An origin
    gives only what it does not keep (``origin_keeps``, the engine's rule, on the true
    rates). The bar ``ganhoMinimo`` is not imposed: the oracle values a unit with the
    simulator's run effect, the engine with its own, and a bar on values that differ cut
    units the engine sends on the same true rates. Without it the oracle is the looser.
    ``time_limit`` bounds the whole program's seconds; a solve that ends beyond
    ``ORACLE_GAP_TARGET`` runs once more from its plan, longer. Returns the plan, its distance to the
    bound HiGHS proved on the whole integer program, ``(bound - net) / bound`` in the program's
    own objective net of moving nothing, and the seconds taken.
    """
    program = _oracle_program(world, unit_cap)
    none = np.zeros(0, dtype=np.int64)
    if program is None:
        return Plan(none, none, none, none), 0.0, 0.0
    t0 = time.perf_counter()
    x_idx = program.x_cols
    # A first plan to start from: the program on the shipments its LP relaxation uses (small,
    # HiGHS finds good plans in it fast); the whole program then starts from that plan and
    # proves its bound (at least as tight as the relaxation's).
    relaxed = _highs(program, time_limit, integer=False)
    if relaxed.x is None:
        return Plan(none, none, none, none), float("inf"), time.perf_counter() - t0
    hi = program.hi.copy()
    unused = x_idx[relaxed.x[x_idx] < 0.01]
    hi[unused] = 0
    hi[unused + 1] = 0
    first = _highs(
        program,
        time_limit * ORACLE_RESTRICTED_SHARE,
        hi=hi,
        start=_rounded(program, relaxed.x, world, unit_cap),
    )
    ints = np.nonzero(program.integer)[0]
    start = None if first.x is None else (ints, np.rint(first.x[ints]))
    left = max(time_limit - (time.perf_counter() - t0), 1.0)
    full = _highs(program, left, start=start)
    full.bound = min(full.bound, relaxed.bound)
    if first.x is not None and (full.x is None or first.value > full.value):
        full.x, full.value = first.x, first.value
    if full.x is None:
        return Plan(none, none, none, none), float("inf"), time.perf_counter() - t0
    if full.bound - full.value > ORACLE_GAP_TARGET * full.bound:
        again = _highs(program, ORACLE_RETRY_FACTOR * time_limit, start=(ints, np.rint(full.x[ints])))
        if again.x is not None and again.value > full.value:
            full.x, full.value = again.x, again.value
        full.bound = min(full.bound, again.bound)
    q = np.rint(full.x[x_idx]).astype(np.int64)
    keep = q > 0
    meta = program.meta
    plan = Plan(meta[keep, 0], meta[keep, 1], meta[keep, 2], q[keep])
    # the distance to HiGHS's proven bound, both net of moving nothing (the program's 0)
    gap = (full.bound - full.value) / full.bound if full.bound > 1e-9 else 0.0
    return plan, float(max(gap, 0.0)), time.perf_counter() - t0


def _rounded(
    program: _Program, x: np.ndarray, world: World, unit_cap: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """A plan from the LP relaxation ``x``, as a partial start: each shipment rounded down, lots
    under qtdMinima dropped, then the smallest lots while over the unit limit."""
    x_idx = program.x_cols
    q = np.floor(x[x_idx] + 1e-6)
    q = np.where(q >= world.rules.qtd_minima, q, 0.0)
    if unit_cap is not None and q.sum() > unit_cap:
        order = np.argsort(q, kind="stable")
        left = q.sum() - np.cumsum(q[order])  # the units left once the smallest lots up to each go
        q[order[: int(np.argmax(left <= unit_cap)) + 1]] = 0.0
    routes = np.unique(program.route_cols)
    opened = np.zeros(program.c.shape[0])
    np.maximum.at(opened, program.route_cols, (q > 0).astype(np.float64))
    return np.r_[x_idx, x_idx + 1, routes], np.r_[q, (q > 0).astype(np.float64), opened[routes]]


@dataclass
class _Program:
    """The oracle's integer program, minimising c x: the negated net value, 0 for moving nothing."""

    c: np.ndarray
    a: sparse.csc_matrix
    row_lo: np.ndarray
    row_hi: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    integer: np.ndarray
    x_cols: np.ndarray  # the shipments' columns; each one's lot binary is the next column
    meta: np.ndarray  # (origin, destination, item) of each shipment
    route_cols: np.ndarray  # the column of each shipment's route binary


@dataclass
class _Solve:
    x: np.ndarray | None
    value: float  # net value of x (-inf without a solution)
    bound: float  # the proven upper bound of the value (the relaxation's, or HiGHS's dual bound)


def _highs(
    program: _Program,
    seconds: float,
    *,
    integer: bool = True,
    hi: np.ndarray | None = None,
    start: np.ndarray | None = None,
) -> _Solve:
    """One HiGHS run of the program (its LP relaxation without ``integer``), single-threaded
    with a fixed random seed, within ``seconds``; ``start`` is a feasible solution to begin from."""
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = program.c.shape[0], program.row_lo.shape[0]
    lp.col_cost_ = program.c
    lp.col_lower_ = program.lo
    lp.col_upper_ = np.minimum(program.hi if hi is None else hi, highspy.kHighsInf)
    lp.row_lower_ = np.maximum(program.row_lo, -highspy.kHighsInf)
    lp.row_upper_ = np.minimum(program.row_hi, highspy.kHighsInf)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = program.a.indptr
    lp.a_matrix_.index_ = program.a.indices
    lp.a_matrix_.value_ = program.a.data
    if integer:
        lp.integrality_ = [
            highspy.HighsVarType.kInteger if i else highspy.HighsVarType.kContinuous for i in program.integer
        ]
    h = highspy.Highs()
    for name, value in (
        ("output_flag", False),
        ("threads", 1),
        ("random_seed", 0),
        ("time_limit", float(seconds)),
        ("mip_rel_gap", ORACLE_REL_GAP),
    ):
        h.setOptionValue(name, value)
    h.passModel(lp)
    if start is not None:
        # a partial start (columns, values): HiGHS completes it with the other columns
        cols, values = start
        h.setSolution(int(cols.shape[0]), cols.astype(np.int32), np.asarray(values, dtype=np.float64))
    h.run()
    info = h.getInfo()
    status = h.getModelStatus()
    has_x = info.primal_solution_status == 2  # kSolutionStatusFeasible
    x = np.asarray(h.getSolution().col_value) if has_x else None
    value = -float(info.objective_function_value) if has_x else -np.inf
    if not integer:
        bound = value if status == highspy.HighsModelStatus.kOptimal else np.inf
    else:
        bound = -float(info.mip_dual_bound) if np.isfinite(info.mip_dual_bound) else np.inf
    return _Solve(x, value, bound)


def _oracle_program(world: World, unit_cap: int | None) -> _Program | None:
    """The oracle's program on the world's true rates (``oracle``); None when nothing can move."""
    inputs, rules = world.inputs, world.rules
    truth = world.truth
    h = rules.horizon_days
    stock = inputs.stock.astype(np.int64)
    held = stock + world.in_transit
    ip = inputs.item_product
    factor = _run_factor(held, truth.key_live, ip, inputs.product_blocked.size)
    mu = truth.rate * factor * h
    full_mu = truth.rate * h
    n_items = stock.shape[1]
    is_cd = inputs.node_is_cd
    node_ok = ~inputs.node_blocked
    item_ok = ~inputs.product_blocked[ip]
    qmin, qmax = rules.qtd_minima, rules.qtd_maxima
    locked = inputs.campaign[:, ip] if rules.bloqueio_campanha else np.zeros(stock.shape, dtype=bool)
    keep_cd = cd_keep_value(rules)
    # What each origin may give under the rule the engine obeys: its stock beyond what it keeps
    # (its horizon demand, here the true one, and one unit of a key size of a product it sells),
    # units on their way to it counting toward what it keeps.
    sold = (observed_product_sales(inputs) > 0)[:, ip]
    gives = np.minimum(stock, np.maximum(held - origin_keeps(inputs, rules, mu, sold), 0))
    dist = haversine_km(
        inputs.node_lat[:, None], inputs.node_lng[:, None], inputs.node_lat[None, :], inputs.node_lng[None, :]
    )
    route_cost = shipment_cost(dist, rules)
    # value of each key size being in stock: the share of the run's other sizes' sales it carries
    starts = np.r_[0, np.nonzero(np.diff(ip))[0] + 1]
    es_full = expected_sales(held, full_mu)
    prod_es = np.add.reduceat(es_full, starts, axis=1)[:, ip]
    n_key = np.add.reduceat(truth.key_live.astype(np.float64), starts, axis=1)[:, ip]
    key_value = np.where(truth.key_live, BROKEN_RUN / np.maximum(n_key, 1) * (prod_es - es_full), 0.0)

    cols_obj: list[float] = []
    lower: list[float] = []
    upper: list[float] = []
    integ: list[int] = []

    def var(obj: float, lo: float, hi: float, integer: int) -> int:
        cols_obj.append(obj)
        lower.append(lo)
        upper.append(hi)
        integ.append(integer)
        return len(cols_obj) - 1

    rows_i: list[int] = []
    rows_j: list[int] = []
    rows_v: list[float] = []
    row_lo: list[float] = []
    row_hi: list[float] = []

    def row(cols: list[int], vals: list[float], lo: float, hi: float) -> None:
        r = len(row_lo)
        rows_i.extend([r] * len(cols))
        rows_j.extend(cols)
        rows_v.extend(vals)
        row_lo.append(lo)
        row_hi.append(hi)

    x_meta: list[tuple[int, int, int]] = []
    x_cols: list[int] = []
    x_route: list[int] = []
    route_var: dict[tuple[int, int], int] = {}
    for k in range(n_items):
        if not item_ok[k]:
            continue
        first_gain = prob_at_least(held[:, k] + 1, mu[:, k]) + np.where(held[:, k] <= 0, key_value[:, k], 0.0)
        dests = np.nonzero(node_ok & ~is_cd & (first_gain >= ORACLE_MIN_FIRST_GAIN))[0]
        origins = np.nonzero(node_ok & (gives[:, k] > 0) & ~locked[:, k])[0]
        if dests.shape[0] == 0 or origins.shape[0] == 0:
            continue
        in_cols: dict[int, list[int]] = {}
        out_cols: dict[int, list[int]] = {}
        steps = np.arange(1, qmax + 1)
        # what each origin loses by its first q units given, at best (alone, no run broken)
        given = np.where(
            is_cd[origins, None],
            keep_cd - (1e-3 if rules.priorizar_cd else 0.0),
            prob_at_least(stock[origins, k, None] - steps[None, :] + 1, mu[origins, k, None]),
        ).cumsum(axis=1)
        for d in dests:
            unit_gain = prob_at_least(held[d, k] + steps, mu[d, k])
            useful = int(np.sum(unit_gain >= 1e-3))
            # what the destination gains by its first q units, at best (from no other origin)
            received = np.where(unit_gain >= 1e-3, unit_gain, 0.0).cumsum()
            received += key_value[d, k] if held[d, k] <= 0 else 0.0
            for i, o in enumerate(origins):
                # the tightest big-M: what the origin holds, what the destination can use
                top = min(qmax, int(gives[o, k]), max(useful, qmin))
                # a shipment that nets nothing even alone and on a paid route is in no optimum
                if o == d or top < qmin or (received - given[i])[qmin - 1 : top].max() <= 0:
                    continue
                x = var(0.0, 0, top, 1)
                y = var(0.0, 0, 1, 1)
                row([x, y], [1.0, -qmin], 0, np.inf)
                row([x, y], [1.0, -top], -np.inf, 0)
                key = (int(o), int(d))
                if key not in route_var:
                    route_var[key] = var(float(route_cost[o, d]), 0, 1, 1)
                row([y, route_var[key]], [1.0, -1.0], -np.inf, 0)
                x_meta.append((int(o), int(d), k))
                x_cols.append(x)
                x_route.append(route_var[key])
                in_cols.setdefault(int(d), []).append(x)
                out_cols.setdefault(int(o), []).append(x)
        # destination segments: the j-th unit received sells with P(D >= s + j)
        for d, xs in in_cols.items():
            j = np.arange(1, min(qmax * len(xs), 40) + 1)
            gains = prob_at_least(held[d, k] + j, mu[d, k])
            gains = gains[gains >= 1e-3]
            segs = [var(-float(g), 0, 1, 0) for g in gains]
            # units beyond the listed segments sell (almost) nothing
            segs.append(var(0.0, 0, np.inf, 0))
            row(segs + xs, [1.0] * len(segs) + [-1.0] * len(xs), 0, 0)
            # the first qmin units arrive only with a whole lot: a valid cut that keeps the
            # relaxation from buying the best units with a fraction of a lot
            for seg in segs[: min(qmin, len(segs) - 1)]:
                row([seg] + [x + 1 for x in xs], [1.0] + [-1.0] * len(xs), -np.inf, 0)
        # origin segments: the j-th unit given loses P(D >= s - j + 1) (a CD: the value kept)
        for o, xs in out_cols.items():
            cap = int(min(gives[o, k], qmax * len(xs)))
            j = np.arange(1, cap + 1)
            if is_cd[o]:
                losses = np.full(cap, keep_cd) - (1e-3 if rules.priorizar_cd else 0.0)
            else:
                losses = prob_at_least(stock[o, k] - j + 1, mu[o, k])
            segs = [var(float(v), 0, 1, 0) for v in losses]
            row(segs + xs, [1.0] * len(segs) + [-1.0] * len(xs), 0, 0)
        # key sizes: the run keeps its effect only while the size is in stock. The objective is
        # net of moving nothing: a size in stock pays its value when it runs out (binary w,
        # w >= 1 - held - in + out), one out of stock earns it when it arrives (binary z,
        # z <= in)
        for n in set(in_cols) | set(out_cols):
            if not truth.key_live[n, k] or key_value[n, k] <= 0.05:
                continue
            ins, outs = in_cols.get(n, []), out_cols.get(n, [])
            if held[n, k] >= 1:
                w = var(float(key_value[n, k]), 0, 1, 1)
                row([w, *ins, *outs], [1.0] + [1.0] * len(ins) + [-1.0] * len(outs), 1.0 - held[n, k], np.inf)
            else:
                z = var(-float(key_value[n, k]), 0, 1, 1)
                row([z, *ins, *outs], [1.0] + [-1.0] * len(ins) + [1.0] * len(outs), -np.inf, 0.0)
    if not x_cols:
        return None
    if unit_cap is not None:
        row(x_cols, [1.0] * len(x_cols), 0, float(unit_cap))
    a = sparse.csc_matrix((rows_v, (rows_i, rows_j)), shape=(len(row_lo), len(cols_obj)))
    return _Program(
        c=np.array(cols_obj),
        a=a,
        row_lo=np.array(row_lo, dtype=np.float64),
        row_hi=np.array(row_hi, dtype=np.float64),
        lo=np.array(lower, dtype=np.float64),
        hi=np.array(upper, dtype=np.float64),
        integer=np.array(integ, dtype=bool),
        x_cols=np.array(x_cols, dtype=np.int64),
        meta=np.array(x_meta, dtype=np.int64),
        route_cols=np.array(x_route, dtype=np.int64),
    )


def _net(world: World, plan: Plan) -> float:
    gain, cost, _ = evaluate(world, plan)
    return gain - cost


ORIGIN_KEEPS_TEXT = re.compile(
    r"fica com (?P<left>\d+) un\. após os envios deste lote(?: e tem (?P<coming>\d+) un\. a caminho)?, "
    r"o que cobre sua necessidade de \d+ dias \((?P<need>\d+) un\.\)"
)


def check_rules(world: World, out: EngineOutput) -> list[str]:
    """Every planner rule on every recommendation, and the figures it quotes; the violations found."""
    inputs, rules = world.inputs, world.rules
    v: list[str] = []
    m = len(out)
    if m == 0:
        return v
    o, d, k, q = (a.astype(np.int64) for a in (out.origin, out.dest, out.item, out.quantity))
    p = inputs.item_product[k]
    stock = inputs.stock.astype(np.int64)
    horizon = rules.horizon_days
    days_hist = inputs.history_days
    v += [f"qty {x}" for x in q[(q < rules.qtd_minima) | (q > rules.qtd_maxima)]]
    v += ["blocked node"] * int((inputs.node_blocked[o] | inputs.node_blocked[d]).sum())
    v += ["blocked brand"] * int(inputs.product_blocked[p].sum())
    v += ["CD destination"] * int(inputs.node_is_cd[d].sum())
    v += ["origin == destination"] * int((o == d).sum())
    if rules.bloqueio_campanha:
        v += ["campaign stock taken out"] * int(inputs.campaign[o, p].sum())
    sent = np.zeros_like(stock)
    np.add.at(sent, (o, k), q)
    received = np.zeros_like(stock)
    np.add.at(received, (d, k), q)
    v += ["circle"] * int(((sent > 0) & (received > 0)).sum())
    v += ["origin short"] * int((stock - sent < 0).sum())
    pairs = o * 10**12 + d * 10**6 + k
    v += ["duplicate route"] * int(pairs.shape[0] - np.unique(pairs).shape[0])
    # figures
    v += ["score range"] * int(((out.score < 0) | (out.score > 100)).sum())
    v += ["origin stock figure"] * int((out.origin_stock != stock[o, k]).sum())
    v += ["dest stock figure"] * int((out.dest_stock != stock[d, k]).sum())
    v += ["dest sales figure"] * int(
        (~np.isclose(out.dest_daily_sales, inputs.sales[d, k] / days_hist)).sum()
    )
    dist = haversine_km(inputs.node_lat[o], inputs.node_lng[o], inputs.node_lat[d], inputs.node_lng[d])
    v += ["distance figure"] * int((~np.isclose(out.distance_km, dist)).sum())
    days = out.days_to_stockout
    expected_prio = np.where(days <= ALTA_MAX_DAYS, "alta", np.where(days <= horizon, "media", "baixa"))
    v += ["priority"] * int((out.priority != expected_prio).sum())
    v += ["days range"] * int(((days < 0) | (days > DAYS_CAP)).sum())
    v += ["campaign flag"] * int((out.in_campaign != (inputs.campaign[o, p] | inputs.campaign[d, p])).sum())
    rank = np.array([{"alta": 0, "media": 1, "baixa": 2}[x] for x in out.priority.tolist()])
    sort_key = rank * 1000 - out.score
    v += ["order"] * int((np.diff(sort_key) < 0).sum())
    v += ["justification"] * sum(
        1 for i, text in enumerate(out.justification) if f"Enviar {q[i]} un." not in text
    )
    # a store origin quotes what it is left with, what is on its way to it and what it keeps:
    # the first two are the network's, and together they cover the third
    coming = np.zeros_like(stock) if inputs.in_transit is None else np.maximum(inputs.in_transit, 0)
    for i in np.nonzero(~inputs.node_is_cd[o])[0]:
        said = ORIGIN_KEEPS_TEXT.search(out.justification[i])
        if said is None:
            v.append("origin figures")
            continue
        left, on_way, need = int(said["left"]), int(said["coming"] or 0), int(said["need"])
        if (
            left != stock[o[i], k[i]] - sent[o[i], k[i]]
            or on_way != coming[o[i], k[i]]
            or left + on_way < need
        ):
            v.append("origin keeps")
    return v


def same_output(a: EngineOutput, b: EngineOutput) -> bool:
    fields = ("origin", "dest", "item", "quantity", "score", "priority", "days_to_stockout")
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in fields) and (
        a.justification == b.justification
    )


def zero_cells(world: World, out: EngineOutput) -> tuple[float, float]:
    """Share of recommendations to a cell with no sales in the window, and of those, to a true zero."""
    if len(out) == 0:
        return 0.0, 0.0
    no_sales = world.inputs.sales[out.dest, out.item] <= 0
    true_zero = world.truth.rate[out.dest, out.item] <= 0
    share = float(no_sales.mean())
    return share, float(true_zero[no_sales].mean()) if no_sales.any() else 0.0


def estimate_ratio(world: World) -> float:
    """Median over the store cells whose customers buy the size of the engine's estimated
    daily demand (rate x alive) to the true rate: the estimate's bias (a diagnostic)."""
    demand = estimate_demand(world.inputs)
    truth = world.truth.rate
    live = ~world.inputs.node_is_cd[:, None] & (truth > 0)
    return float(np.median(demand.mean[live] / truth[live])) if live.any() else float("nan")


def measure(
    world: World,
    out: EngineOutput,
    seconds: float,
    again: EngineOutput,
    with_oracle: bool,
    oracle_seconds: float = ORACLE_TIME_LIMIT,
) -> dict:
    gain, cost, units = evaluate(world, out)
    row = {
        "recs": len(out),
        "units": units,
        "gain": gain,
        "cost": cost,
        "net": gain - cost,
        "violations": check_rules(world, out),
        "deterministic": same_output(out, again),
        "seconds": seconds,
        "zero_share": zero_cells(world, out),
        "estimate_ratio": estimate_ratio(world),
    }
    if with_oracle:
        free, free_gap, free_s = oracle(world, None, oracle_seconds)
        eq, eq_gap, eq_s = oracle(world, units, oracle_seconds)
        f_gain, f_cost, f_units = evaluate(world, free)
        e_gain, e_cost, e_units = evaluate(world, eq)
        if e_gain - e_cost > f_gain - f_cost:
            # the solver stopped on a worse incumbent without the unit limit: the limited plan
            # is a plan it could have made
            f_gain, f_cost, f_units = e_gain, e_cost, e_units
        row.update(
            worth=f_gain - f_cost,
            worth_units=f_units,
            oracle=e_gain - e_cost,
            oracle_gain=e_gain,
            oracle_units=e_units,
            oracle_gap=max(free_gap, eq_gap),
            oracle_seconds=free_s + eq_s,
        )
        row["capture"] = row["net"] / row["worth"] if row["worth"] > 0 else float("nan")
        row["vs_oracle"] = row["net"] / row["oracle"] if row["oracle"] > 0 else float("nan")
        row["vs_oracle_sales"] = gain / e_gain if e_gain > 0 else float("nan")
    return row


def run_case(
    shape: Shape,
    seed: int,
    variant: int,
    *,
    with_oracle: bool = True,
    true_rates: bool = False,
    informed_rates: str | None = None,
    ganho_minimo: float | None = None,
    oracle_seconds: float = ORACLE_TIME_LIMIT,
) -> list[dict]:
    """Both weeks of one network: a row per batch. ``true_rates`` hands the engine the true
    daily rates instead of its estimate: what is left of the gap is the planning's;
    ``informed_rates`` (``demand`` or ``sales``) hands it the best estimate 30 days of either allow
    (``simulate_informed``).
    ``ganho_minimo`` replaces the engine's bar (the rule's default) in both rule sets; the
    oracle and the measures know no bar."""
    world = build_world(shape, seed, variant=variant, record_demand=informed_rates is not None)
    if ganho_minimo is not None:
        world.rules = replace(world.rules, ganho_minimo=ganho_minimo)
    rows = []
    for week in (1, 2):
        rate = {"daily_rate": world.truth.rate} if true_rates else {}
        if informed_rates:
            rate = {"demand": informed(world, informed_rates)}
        t0 = time.perf_counter()
        out = recommend(world.inputs, world.rules, **rate)
        seconds = time.perf_counter() - t0
        again = recommend(world.inputs, world.rules, **rate)
        row = measure(world, out, seconds, again, with_oracle, oracle_seconds)
        row.update(shape=shape.name, seed=seed, rules="B" if variant % 2 else "A", week=week)
        if week == 2:
            row["resent"], row["overdrawn"] = transit_figures(world, out)
            row["resent_ignored"], row["overdrawn_ignored"] = transit_figures(
                world, recommend(transit_ignored(world), world.rules)
            )
        rows.append(row)
        if week == 1:
            world = second_week(world, out)
    return rows


def informed(world: World, source: str, days: int = HISTORY_DAYS):
    """``simulate_informed.informed_demand`` from the last ``days`` days' demand, or from their
    sales: a day that ended with stock saw its whole demand, a day that sold out saw at least the
    stock it began with, a day begun with none saw nothing."""
    truth = world.truth
    demand = np.stack(truth.daily_demand[-days:])
    exposure = np.stack(truth.daily_exposure[-days:])
    censored = None
    if source == "sales":
        began = np.stack(truth.daily_stock[-days:])
        whole = demand < began
        sold_out = (began > 0) & ~whole
        _days, nodes, items = np.nonzero(sold_out)
        censored = (nodes, items, began[sold_out], exposure[sold_out])
        demand, exposure = demand * whole, exposure * whole
    return informed_demand(
        demand.sum(axis=0),
        exposure.sum(axis=0),
        truth.prior_rate,
        truth.dead_p,
        truth.lift,
        world.inputs.item_product,
        INTERACTION_SIGMA,
        censored=censored,
    )


def print_table(rows: list[dict]) -> None:
    head = (
        f"{'shape':>8} {'seed':>4} {'r':>1} {'wk':>2} {'recs':>5} {'units':>5} {'gain':>7} {'cost':>6} {'net':>7} "
        f"{'worth':>7} {'w.units':>7} {'oracle':>7} {'o.units':>7} {'capture':>7} {'vs.orac':>7} {'sales':>6} "
        f"{'zero%':>5} {'est/tr':>6} {'gap':>5} {'viol':>4} {'det':>3} {'sec':>5} {'resent':>6} {'overdr':>6}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['shape']:>8} {r['seed']:>4} {r['rules']:>1} {r['week']:>2} {r['recs']:>5} {r['units']:>5} "
            f"{r['gain']:>7.1f} {r['cost']:>6.1f} {r['net']:>7.1f} {r.get('worth', float('nan')):>7.1f} "
            f"{r.get('worth_units', 0):>7} {r.get('oracle', float('nan')):>7.1f} {r.get('oracle_units', 0):>7} "
            f"{r.get('capture', float('nan')):>7.1%} {r.get('vs_oracle', float('nan')):>7.1%} "
            f"{r.get('vs_oracle_sales', float('nan')):>6.1%} {r['zero_share'][0]:>5.1%} {r['estimate_ratio']:>6.2f} "
            f"{r.get('oracle_gap', float('nan')):>5.1%} {len(r['violations']):>4} "
            f"{'yes' if r['deterministic'] else 'NO':>3} {r['seconds']:>5.2f} "
            f"{r.get('resent', ''):>6} {r.get('overdrawn', ''):>6}"
        )
        if r["violations"]:
            print("          violations:", ", ".join(sorted(set(r["violations"]))))


def run_scale(seed: int) -> None:
    world = build_world(SCALE, seed)
    inputs, rules = world.inputs, world.rules
    n, k = inputs.stock.shape
    print(f"\nScale: N={n} nodes, K={k} items ({n * k:,} cells), {inputs.history_days} days of sales")
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    recommend(inputs, rules)  # warm-up (imports, caches)
    walls, cpus = [], []
    for _ in range(3):
        t1, c1 = time.perf_counter(), time.process_time()
        out = recommend(inputs, rules)
        list(out.justification)  # the texts are built on demand: time them too
        walls.append(time.perf_counter() - t1)
        cpus.append(time.process_time() - c1)
    tracemalloc.start()
    list(recommend(inputs, rules).justification)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    violations = check_rules(world, out)
    gain, cost, units = evaluate(world, out)
    walls.sort()
    cpus.sort()
    print(
        f"recommend, 3 runs: wall min/median/max {walls[0]:.2f}/{walls[1]:.2f}/{walls[2]:.2f} s, CPU "
        f"{cpus[0]:.2f}/{cpus[1]:.2f}/{cpus[2]:.2f} s (load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} CPUs); peak traced memory {peak:.0f} MB, process max RSS {rss:.0f} MB "
        f"(with the network built: {rss_before:.0f} MB)"
    )
    print(
        f"{len(out):,} recommendations, {units:,} units, expected extra sales {gain:,.0f}, shipping "
        f"{cost:,.0f}, rule violations: {len(violations)}"
    )


def summary(rows: list[dict]) -> bool:
    def stats(key: str) -> str:
        a = np.array([r[key] for r in rows if key in r], dtype=np.float64)
        return f"min {np.nanmin(a):.1%}, median {np.nanmedian(a):.1%}, max {np.nanmax(a):.1%}"

    total_viol = sum(len(r["violations"]) for r in rows)
    det = all(r["deterministic"] for r in rows)
    zero = np.array([r["zero_share"][0] for r in rows])
    gaps = np.array([r["oracle_gap"] for r in rows if np.isfinite(r.get("oracle_gap", np.inf))] or [np.nan])
    if any("vs_oracle" in r for r in rows):
        print(
            f"\nnet gain vs oracle with the same units: {stats('vs_oracle')} (target >= 93%)"
            f"\nexpected extra sales vs that oracle's: {stats('vs_oracle_sales')}"
            f"\ncapture of all worthwhile moves (oracle without unit limit): {stats('capture')} (target >= 85%)"
            f"\noracle's distance to the bound HiGHS proved on its whole program (the farther of its "
            f"two solves per batch): min {np.min(gaps):.2%}, median {np.median(gaps):.2%}, largest "
            f"{np.max(gaps):.2%} over {len(gaps)} batches, {int(np.sum(gaps > 0.01))} beyond 1 %; "
            f"oracle seconds median {np.median([r.get('oracle_seconds', 0.0) for r in rows]):.1f}"
        )
    for week in (1, 2):
        ratios = [r["estimate_ratio"] for r in rows if r["week"] == week]
        if ratios:
            print(
                f"estimated daily demand / true rate over live store cells, week {week}: median of the batches' "
                f"medians {np.median(ratios):.2f} (min {np.min(ratios):.2f}, max {np.max(ratios):.2f})"
            )
    print(
        f"recommendations to a cell with no sales in the window: median {np.median(zero):.1%}"
        f"\nrule violations: {total_viol}; deterministic: {det}"
    )
    week2 = [r for r in rows if "resent" in r]
    resent = sum(r["resent"] for r in week2)
    overdrawn = sum(r["overdrawn"] for r in week2)
    print(
        f"week 2, week 1's transfers in transit ({len(week2)} batches): units re-sent to cells their "
        f"in-transit units already cover: {resent} (target 0); units overdrawn from an origin's "
        f"post-transit stock: {overdrawn} (target 0). The same batches with in transit ignored: "
        f"{sum(r['resent_ignored'] for r in week2)} re-sent, {sum(r['overdrawn_ignored'] for r in week2)} overdrawn"
    )
    transit_ok = resent == 0 and overdrawn == 0
    if not any("vs_oracle" in r for r in rows):
        return total_viol == 0 and det and transit_ok
    vs = np.array([r.get("vs_oracle", np.nan) for r in rows])
    cap = np.array([r.get("capture", np.nan) for r in rows])
    return total_viol == 0 and det and transit_ok and np.nanmin(vs) >= 0.93 and np.nanmin(cap) >= 0.85


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds per network shape and rule set")
    parser.add_argument(
        "--shape", action="append", choices=[s.name for s in SHAPES], help="only these shapes"
    )
    parser.add_argument("--scale", action="store_true", help="also time the 300 stores x 6,000 items case")
    parser.add_argument(
        "--no-oracle",
        action="store_true",
        help="skip the oracle (rules, determinism and in-transit figures only)",
    )
    rates = parser.add_mutually_exclusive_group()
    rates.add_argument(
        "--true-rates",
        action="store_true",
        help="hand the engine the true daily rates (the planning's share of the gap)",
    )
    rates.add_argument(
        "--informed-rates",
        choices=("demand", "sales"),
        help="hand the engine the posterior of each rate under the simulator's own prior, from the "
        "window's demand uncapped by stock or from its sales (benchmarks/simulate_informed.py)",
    )
    parser.add_argument("--first-seed", type=int, default=1000, help="first seed (the others follow it)")
    parser.add_argument(
        "--ganho-minimo",
        type=int,
        help="the rule ganhoMinimo in thousandths (default: the rule's default) for both rule sets",
    )
    parser.add_argument(
        "--oracle-seconds", type=float, default=ORACLE_TIME_LIMIT, help="time limit of each oracle solve"
    )
    args = parser.parse_args(argv)
    bar = args.ganho_minimo if args.ganho_minimo is not None else round(MIN_GAIN_PER_UNIT * 1000)
    print(
        f"Horizon {HORIZON} days, history {HISTORY_DAYS} days, two weeks per network. Rules A: min 3, max 15, "
        "CD first, campaign lock, shipment 0.3 + 0.001/km units; rules B: min 2, max 10, no CD preference, "
        f"no campaign lock, blocked stores and a brand, shipment 1.0 + 0.002/km units; both ganhoMinimo {bar}. "
        "Load average "
        f"{os.getloadavg()[0]:.1f}."
    )
    rows = []
    for shape in [s for s in SHAPES if not args.shape or s.name in args.shape]:
        for seed in range(args.seeds):
            for variant in (0, 1):
                rows += run_case(
                    shape,
                    args.first_seed + seed,
                    variant,
                    with_oracle=not args.no_oracle,
                    true_rates=args.true_rates,
                    informed_rates=args.informed_rates,
                    ganho_minimo=bar / 1000,
                    oracle_seconds=args.oracle_seconds,
                )
    print_table(rows)
    ok = summary(rows)
    if args.scale:
        run_scale(7)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
