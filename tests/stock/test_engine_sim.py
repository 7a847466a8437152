"""The recommendation engine on small hand-built networks and on a simulated one.

The engine is a pure function of arrays (``services.stock.engine.recommend``),
so these tests build its input directly; the batch endpoints that wrap it are
tested with the batches themselves.
"""

from __future__ import annotations

import functools
import importlib.util
import pathlib
import re
import sys
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from services.stock import engine_alive
from services.stock.engine import Demand, haversine_km, recommend
from services.stock.engine_cells import CellValues
from services.stock.engine_contract import EngineInput, EngineRules, Outcomes
from services.stock.engine_demand import estimate_demand, outcome_factors
from services.stock.engine_polish import polish
from services.stock.engine_reflow import reflow
from services.stock.engine_routing import Destinations
from services.stock.engine_routing import Plan as RoutedPlan

RULES = EngineRules(
    qtd_minima=3,
    qtd_maxima=15,
    priorizar_cd=True,
    peso_distancia=40,
    peso_giro=35,
    peso_estoque=25,
    bloqueio_campanha=True,
)
DAYS = 30
# node 0: CD far away; 1: store short of stock; 2: store with excess, close to 1; 3: other store
COORDS = [(-23.0, -46.0), (-27.0, -49.0), (-27.1, -49.1), (-25.0, -47.0)]


def network(
    *,
    is_cd=(True, False, False, False),
    sizes=2,
    products=1,
    stock=None,
    sales=None,
    campaign=None,
    node_blocked=None,
    product_blocked=None,
) -> EngineInput:
    """A network of len(is_cd) nodes, ``products`` products of ``sizes`` sizes each."""
    n = len(is_cd)
    k = sizes * products
    lat = np.array([c[0] for c in COORDS[:n]])
    lng = np.array([c[1] for c in COORDS[:n]])
    sales_arr = np.zeros((n, k), dtype=np.float32) if sales is None else np.asarray(sales, dtype=np.float32)
    return EngineInput(
        node_is_cd=np.array(is_cd, dtype=bool),
        node_lat=lat,
        node_lng=lng,
        node_blocked=np.zeros(n, dtype=bool) if node_blocked is None else np.array(node_blocked),
        product_blocked=np.zeros(products, dtype=bool)
        if product_blocked is None
        else np.array(product_blocked),
        product_brand=np.arange(products, dtype=np.int32),
        product_category=np.zeros(products, dtype=np.int32),
        item_product=np.repeat(np.arange(products), sizes).astype(np.int32),
        item_size_pos=np.tile(np.arange(sizes), products).astype(np.int16),
        stock=np.zeros((n, k), dtype=np.int32) if stock is None else np.asarray(stock, dtype=np.int32),
        sales=sales_arr,
        sales_recent=sales_arr * (7 / DAYS),
        history_days=DAYS,
        campaign=np.zeros((n, products), dtype=bool) if campaign is None else np.array(campaign),
        route_factor=np.ones((n, n), dtype=np.float32),
        brand_factor=np.ones(products, dtype=np.float32),
        category_factor=np.ones(1, dtype=np.float32),
    )


def shortage(**kw) -> EngineInput:
    """Store 1 sells 1 unit/day of size 0 and has none; the CD and store 2 have plenty."""
    stock = kw.pop("stock", [[40, 40], [0, 6], [60, 6], [3, 3]])
    sales = kw.pop("sales", [[0, 0], [30, 15], [6, 15], [15, 15]])
    return network(stock=stock, sales=sales, **kw)


def find(out, origin: int, dest: int, item: int) -> int:
    """Index of the recommendation moving ``item`` from ``origin`` to ``dest``."""
    hits = np.nonzero((out.origin == origin) & (out.dest == dest) & (out.item == item))[0]
    assert hits.shape[0] == 1, routes(out)
    return int(hits[0])


def routes(out) -> set[tuple[int, int, int]]:
    return {(int(o), int(d), int(k)) for o, d, k in zip(out.origin, out.dest, out.item, strict=True)}


def test_a_store_out_of_stock_gets_a_checkable_recommendation_from_the_cd():
    out = recommend(shortage(), RULES)
    first = find(out, 0, 1, 0)
    assert RULES.qtd_minima <= out.quantity[first] <= RULES.qtd_maxima
    assert out.priority[first] == "alta"
    assert out.days_to_stockout[first] == 0
    assert out.dest_stock[first] == 0 and out.origin_stock[first] == 40
    assert out.dest_daily_sales[first] == pytest.approx(1.0)
    assert out.origin_daily_sales[first] == 0.0
    assert out.distance_km[first] == pytest.approx(haversine_km(*COORDS[0], *COORDS[1]))
    assert 0 <= out.score[first] <= 100
    text = out.justification[first]
    assert "Destino com 0 un. e venda média de 1,00/dia" in text
    assert "Origem CD com 40 un." in text
    assert f"Enviar {out.quantity[first]} un." in text
    assert f"Distância {round(float(out.distance_km[first]))} km" in text


def test_a_nearby_store_with_excess_serves_when_cds_are_not_preferred():
    with_cd = recommend(shortage(), RULES)
    without = recommend(shortage(), replace(RULES, priorizar_cd=False))
    assert (0, 1, 0) in routes(with_cd)
    assert (2, 1, 0) in routes(without)
    i = find(without, 2, 1, 0)
    assert (
        "Origem loja com 60 un. e venda média de 0,20/dia (300 dias de cobertura)" in without.justification[i]
    )


def test_an_origin_keeps_its_need_counts_units_on_their_way_toward_it_and_says_so():
    # store 2 sells 1/day (14 units over the horizon) and holds 20
    net = shortage(stock=[[0, 0], [0, 6], [20, 6], [3, 3]], sales=[[0, 0], [30, 15], [30, 15], [15, 15]])
    rules = replace(RULES, priorizar_cd=False, qtd_minima=1)
    out = recommend(net, rules)
    sent = int(out.quantity[out.origin == 2].sum())
    text = out.justification[find(out, 2, 1, 0)]
    need = int(re.search(r"necessidade de 14 dias \((\d+) un\.\)", text).group(1))
    assert sent > 0 and need == 14 <= 20 - sent  # its expected demand over the horizon, no margin
    assert f"fica com {20 - sent} un. após os envios deste lote, o que cobre" in text
    # ten more units on their way to store 2 count toward what it keeps: it may give them now
    transit = np.zeros_like(net.stock)
    transit[2, 0] = 10
    again = recommend(replace(net, in_transit=transit), rules)
    sent_now = int(again.quantity[again.origin == 2].sum())
    text = again.justification[find(again, 2, 1, 0)]
    assert sent < sent_now <= 20 and 20 - sent_now + 10 >= need
    assert (
        f"fica com {20 - sent_now} un. após os envios deste lote e tem 10 un. a caminho, o que cobre" in text
    )
    assert f"necessidade de 14 dias ({need} un.)" in text


def test_lots_respect_minimum_and_maximum_or_are_not_made():
    big = shortage(stock=[[400, 40], [0, 6], [0, 6], [3, 3]], sales=[[0, 0], [150, 15], [6, 15], [15, 15]])
    out = recommend(big, replace(RULES, qtd_minima=2, qtd_maxima=7))
    assert len(out) > 0
    assert out.quantity.min() >= 2 and out.quantity.max() <= 7
    # a lot that would mostly not sell is not made: 0.3 unit/day sells ~4 of 40 units in 14 days
    slow = shortage(stock=[[400, 400], [0, 0], [0, 0], [0, 0]], sales=[[0, 0], [9, 9], [9, 9], [9, 9]])
    assert len(recommend(slow, replace(RULES, qtd_minima=40, qtd_maxima=50))) == 0
    assert len(recommend(slow, replace(RULES, qtd_minima=3, qtd_maxima=50))) == 6


def test_blocked_stores_brands_and_cds_are_never_destinations():
    two_products = network(
        products=2,
        stock=[[40, 40, 40, 40], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
        sales=[[0, 0, 0, 0], [30, 30, 30, 30], [30, 30, 30, 30], [30, 30, 30, 30]],
        node_blocked=[False, False, True, False],
        product_blocked=[False, True],
    )
    out = recommend(two_products, RULES)
    assert len(out) > 0
    assert 2 not in set(out.dest.tolist()) | set(out.origin.tolist())
    assert set(out.item.tolist()) <= {0, 1}  # product 1 (items 2, 3) has a blocked brand
    assert not two_products.node_is_cd[out.dest].any()


def test_a_destination_that_never_sold_the_product_receives_nothing():
    out = recommend(shortage(sales=[[0, 0], [0, 0], [6, 15], [15, 15]]), RULES)
    assert 1 not in out.dest.tolist()


def test_campaign_stock_stays_put_under_the_campaign_lock():
    net = shortage(stock=[[0, 0], [0, 6], [60, 6], [3, 3]], campaign=[[False], [False], [True], [False]])
    locked = recommend(net, replace(RULES, priorizar_cd=False))
    free = recommend(net, replace(RULES, priorizar_cd=False, bloqueio_campanha=False))
    assert 2 not in locked.origin.tolist()
    assert 2 in free.origin.tolist()
    assert free.in_campaign[free.origin == 2].all()
    assert "Produto em campanha na origem." in free.justification[find(free, 2, 1, 0)]


def test_no_item_moves_in_circles_and_the_batch_is_sorted():
    out = recommend(shortage(), RULES)
    for k in set(out.item.tolist()):
        assert not set(out.origin[out.item == k].tolist()) & set(out.dest[out.item == k].tolist())
    rank = np.array([{"alta": 0, "media": 1, "baixa": 2}[p] for p in out.priority])
    key = rank * 1000 - out.score
    assert (np.diff(key) >= 0).all()


def test_refusals_and_vetoes_lower_the_score_through_the_learning_factors():
    base = recommend(shortage(), RULES)
    penalised = shortage()
    penalised.route_factor[0, 1] = 0.5
    penalised.brand_factor[0] = 0.8
    out = recommend(penalised, RULES)
    i, j = find(base, 0, 1, 0), find(out, 0, 1, 0)
    assert base.score[i] > 20
    assert abs(out.score[j] - base.score[i] * 0.5 * 0.8) <= 1
    # other routes keep their score: store 2's route from the CD is not penalised by the route factor
    if (0, 3, 1) in routes(base):
        assert out.score[find(out, 0, 3, 1)] == pytest.approx(base.score[find(base, 0, 3, 1)] * 0.8, abs=1)


def test_the_weights_shape_the_score():
    only_distance = recommend(shortage(), replace(RULES, peso_giro=0, peso_estoque=0))
    only_stock = recommend(shortage(), replace(RULES, peso_distancia=0, peso_giro=0))
    i = find(only_distance, 0, 1, 0)
    d = float(only_distance.distance_km[i])
    assert only_distance.score[i] == int(np.floor(100 / (1 + d / 100) + 0.5))
    # stock component: a destination already out of stock is fully urgent
    assert only_stock.score[find(only_stock, 0, 1, 0)] == 100


@functools.lru_cache(maxsize=1)
def _simulator():
    path = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "simulate_engine.py"
    spec = importlib.util.spec_from_file_location("simulate_engine", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while loading
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("variant", [0, 1])
def test_a_simulated_network_gets_a_deterministic_batch_that_holds_every_rule(variant):
    sim = _simulator()
    world = sim.build_world(sim.SHAPES[0], 42, variant=variant)
    out = recommend(world.inputs, world.rules)
    assert len(out) > 50
    assert sim.check_rules(world, out) == []
    assert sim.same_output(out, recommend(world.inputs, world.rules))
    gain, cost, units = sim.evaluate(world, out)
    assert gain - cost > 0.3 * units * 0.5  # every moved unit adds, net of the trips, a fair share
    # week 2: week 1's units are in transit, and the new batch still holds every rule
    week2 = sim.second_week(world, out)
    out2 = recommend(week2.inputs, week2.rules)
    assert sim.check_rules(week2, out2) == []
    assert sim.evaluate(week2, out2)[0] > 0


def test_units_in_transit_count_as_the_destination_stock():
    net = shortage()
    first = recommend(net, RULES)
    q = int(first.quantity[find(first, 0, 1, 0)])
    transit = np.zeros_like(net.stock)
    transit[1, 0] = 40  # more than the horizon can sell
    again = recommend(replace(net, in_transit=transit), RULES)
    assert (0, 1, 0) not in routes(again) and q >= RULES.qtd_minima


def test_stock_out_days_are_left_out_of_the_rate():
    """Store 1 sold 10 units of size 0 in 10 days, then ran out 20 days ago: a rate of 1/day, not 1/3."""
    sales = [[0, 0], [10, 15], [6, 15], [15, 15]]
    age = np.zeros((4, 2), dtype=np.int16)
    age[1, 0] = 20
    blind = recommend(shortage(sales=sales), RULES)
    seen = recommend(replace(shortage(sales=sales), last_sale_age=age), RULES)
    i, j = find(blind, 0, 1, 0), find(seen, 0, 1, 0)
    assert seen.quantity[j] > blind.quantity[i]

    def estimate(out, i):
        return float(out.justification[i].split("demanda estimada ")[1].split("/dia")[0].replace(",", "."))

    # pooled with the network, but well above what 30 days on the shelf would say
    assert estimate(seen, j) > 1.4 * estimate(blind, i)


def test_a_size_that_did_not_sell_while_on_the_shelf_gets_nothing():
    """12 stores sell sizes 0 and 1 of a product; store 1 had size 1 on the shelf all month and sold none."""
    n = 13
    stock = np.full((n, 2), 4)
    stock[0] = [200, 200]  # the CD
    stock[1] = [0, 2]
    sales = np.full((n, 2), 15.0)
    sales[0] = 0
    sales[1] = [15, 0]
    net = EngineInput(
        node_is_cd=np.arange(n) == 0,
        node_lat=np.full(n, -23.0),
        node_lng=np.linspace(-46.0, -47.0, n),
        node_blocked=np.zeros(n, dtype=bool),
        product_blocked=np.zeros(1, dtype=bool),
        product_brand=np.zeros(1, dtype=np.int32),
        product_category=np.zeros(1, dtype=np.int32),
        item_product=np.zeros(2, dtype=np.int32),
        item_size_pos=np.arange(2, dtype=np.int16),
        stock=stock.astype(np.int32),
        sales=sales.astype(np.float32),
        sales_recent=(sales * 7 / DAYS).astype(np.float32),
        history_days=DAYS,
        campaign=np.zeros((n, 1), dtype=bool),
        route_factor=np.ones((n, n), dtype=np.float32),
        brand_factor=np.ones(1, dtype=np.float32),
        category_factor=np.ones(1, dtype=np.float32),
        last_sale_age=np.where(sales > 0, 0, DAYS).astype(np.int16),
    )
    out = recommend(net, replace(RULES, qtd_minima=1))
    to_store_1 = {int(k) for d, k in zip(out.dest, out.item, strict=True) if d == 1}
    assert to_store_1 == {0}


def _one_product_network(stock: np.ndarray, sales: np.ndarray) -> EngineInput:
    """Node 0 a CD, the others stores along a road; one product, a size per column."""
    n, k = stock.shape
    return EngineInput(
        node_is_cd=np.arange(n) == 0,
        node_lat=np.full(n, -23.0),
        node_lng=np.linspace(-46.0, -47.0, n),
        node_blocked=np.zeros(n, dtype=bool),
        product_blocked=np.zeros(1, dtype=bool),
        product_brand=np.zeros(1, dtype=np.int32),
        product_category=np.zeros(1, dtype=np.int32),
        item_product=np.zeros(k, dtype=np.int32),
        item_size_pos=np.arange(k, dtype=np.int16),
        stock=stock.astype(np.int32),
        sales=sales.astype(np.float32),
        sales_recent=(sales * 7 / DAYS).astype(np.float32),
        history_days=DAYS,
        campaign=np.zeros((n, 1), dtype=bool),
        route_factor=np.ones((n, n), dtype=np.float32),
        brand_factor=np.ones(1, dtype=np.float32),
        category_factor=np.ones(1, dtype=np.float32),
        last_sale_age=np.where(sales > 0, 0, DAYS).astype(np.int16),
    )


def test_a_size_no_store_had_on_the_shelf_is_valued_on_its_products_bell_not_the_networks_average():
    """Three products' customers centre on the middle of a 5-size grid; the fourth's on its small
    end (14, 10, 4 and 1 units a month of its first four sizes at each of 20 stores). Its largest
    size sat in the CD all month: its own bell says it sells next to nothing, where the share the
    network's grids give their last size would send the CD's units to every store."""
    n, sizes = 21, 5
    middle = np.array([4, 10, 14, 10, 4], dtype=np.float64)
    small_end = np.array([14, 10, 4, 1, 0], dtype=np.float64)
    sales = np.zeros((n, 4 * sizes))
    sales[1:] = np.concatenate([small_end, middle, middle, middle])
    stock = np.where(sales > 0, 6, 0)
    stock[0, 4] = 200  # the CD holds the small-end product's last size only
    net = replace(
        _one_product_network(stock, sales),
        product_blocked=np.zeros(4, dtype=bool),
        product_brand=np.zeros(4, dtype=np.int32),
        product_category=np.zeros(4, dtype=np.int32),
        item_product=np.repeat(np.arange(4), sizes).astype(np.int32),
        item_size_pos=np.tile(np.arange(sizes), 4).astype(np.int16),
        campaign=np.zeros((n, 4), dtype=bool),
        brand_factor=np.ones(4, dtype=np.float32),
        category_factor=np.ones(4, dtype=np.float32),
    )
    demand = estimate_demand(net)
    # per store and day: its bell continues 14, 10, 4, 1 (a fraction of a unit a month)
    assert np.all(demand.rate[1:, 4] < demand.rate[1:, 3])
    assert not np.any(recommend(net, replace(RULES, qtd_minima=1)).item == 4)


def test_a_size_just_in_at_the_products_best_store_is_not_read_as_its_best_size():
    """Size 0 was out everywhere until a transfer brought 8 units to store 1 five days ago; it
    sold 5 there, as store 1 sells its other sizes (five times what the six other stores sell
    of each). Read as five days at an average store, those units made size 0 most of the
    product's demand: every other store's rate of it over twice its other sizes', and store
    1's other sizes read as selling two thirds of what they sold."""
    n, sizes = 8, 4
    sales = np.zeros((n, sizes))
    sales[1, 1:] = 20
    sales[2:, 1:] = 4
    sales[1, 0] = 5
    stock = np.where(sales > 0, 6, 0)
    stock[1, 0], stock[0, 0] = 3, 200
    just_in = np.zeros((n, sizes), dtype=bool)
    just_in[1, 0] = True
    net = replace(
        _one_product_network(stock, sales),
        receipt_out_days=np.where(just_in, 25, 0).astype(np.int16),
        received=np.where(just_in, 8, 0).astype(np.int32),
    )
    rate = estimate_demand(net).rate
    # the stores that never had it: about what their other sizes sell (4 a month), not twice
    assert np.all(rate[2:, 0] < 1.6 * rate[2:, 1]), rate[2:, :2] * DAYS
    # store 1 sold it at its own pace, and its other sizes keep theirs (20 a month each)
    assert 0.5 < rate[1, 0] < 1.5, rate[1] * DAYS
    assert np.all(rate[1, 1:] * DAYS > 16), rate[1] * DAYS


def test_moved_units_are_set_against_what_todays_rates_expect_of_them():
    """Stores 0 and 1 each received 10 units with nothing of their own on the shelf; today's
    rates say 1 a day. Over 14 days those units should sell E[min(D, 10)], D ~ Poisson(14):
    store 0 sold none of them, store 1 all. Each factor is (ASI + 20) / (that + 20), the prior
    never under 20 units; a store x category with no transfer keeps 1."""
    outcomes = Outcomes(
        dest=np.array([0, 1], dtype=np.int32),
        item=np.array([0, 0], dtype=np.int32),
        before=np.zeros(2),
        units=np.full(2, 10.0),
        sold=np.array([0.0, 10.0]),
        days=14,
    )
    rate, alive, dispersion = np.ones((3, 2)), np.ones((3, 2)), np.zeros((3, 2))
    factor = outcome_factors(outcomes, rate, alive, dispersion, np.array([0, 1]))
    expected = float(np.sum(np.minimum(np.arange(200), 10) * stats.poisson.pmf(np.arange(200), 14)))
    assert factor[0, 0] == pytest.approx(20 / (expected + 20))
    assert factor[1, 0] == pytest.approx(30 / (expected + 20))
    assert factor[2, 0] == factor[0, 1] == 1.0


def test_a_size_a_store_was_never_given_while_it_got_the_rest_of_the_run_gets_nothing():
    """24 stores were given 10 units of each of 4 sizes and sell them. Store 1 was given none of
    the last size and store 2 sold all of its: the CD's units of that size go to store 2, whose
    customers buy it, and not to store 1, which stores are given what they sell says they do not."""
    n = 25
    stock = np.full((n, 4), 4)
    sales = np.full((n, 4), 6.0)
    stock[0], sales[0] = [0, 0, 0, 100], 0  # the CD
    stock[1, 3], sales[1, 3] = 0, 0  # never given the size
    stock[2, 3], sales[2, 3] = 0, 10  # sold out
    net = _one_product_network(stock, sales)
    out = recommend(net, replace(RULES, qtd_minima=1))
    served = {int(d) for d, k in zip(out.dest, out.item, strict=True) if k == 3}
    assert 2 in served and 1 not in served
    # on the shelf all month without a sale would say the same; out of it, only the allocation does
    assert estimate_demand(net).alive[1, 3] < 0.1 < 0.9 < estimate_demand(net).alive[2, 3]


def _allocated_network(seed: int) -> tuple[EngineInput, np.ndarray, np.ndarray]:
    """60 stores and a CD, one product of 4 sizes: stores given stock by what they sell (noisy,
    Gamma shape 4 per store and per cell), the end sizes bought at 70 % of stores, half of what
    was given sold. Returns the network, each cell's units given and whether its customers buy it."""
    rng = np.random.default_rng(seed)
    n = 61
    bought = rng.random((n, 4)) >= np.array([0.3, 0.0, 0.0, 0.3])
    bought[0] = True
    share = np.array([0.15, 0.35, 0.35, 0.15]) * bought
    share = share / share.sum(axis=1, keepdims=True)
    level = rng.gamma(4.0, 1 / 4.0, n) * 20
    given = rng.poisson(level[:, None] * share * rng.gamma(4.0, 1 / 4.0, (n, 4)))
    sold = rng.binomial(given, 0.5)
    stock, sales = given - sold, sold.astype(float)
    stock[0], sales[0] = 40, 0
    return _one_product_network(stock, sales), given, bought


@pytest.mark.parametrize("sample_cells", [None, 60])
def test_the_share_of_sizes_nobody_buys_is_read_from_the_stores_never_given_them_not_taken_for_noise(
    sample_cells, monkeypatch
):
    """Over four networks where 30 % of stores' customers never buy the end sizes and were given
    none, and the rest were given stock with noise: the cells never given are live about as often
    as ``alive`` says. Fitted as if every zero were the allocation's noise, the spread explained
    the zeros away and ``alive`` read 0.49 where 0.28 were live. A network too large to fit on
    every cell (here: over 60) fits on a sample of its products and agrees."""
    if sample_cells is not None:
        monkeypatch.setattr(engine_alive, "ZERO_INFLATION_CELLS", sample_cells)
    estimated, actual = [], []
    for seed in range(4):
        net, given, bought = _allocated_network(seed)
        never = (given == 0) & ~net.node_is_cd[:, None]
        estimated.append(estimate_demand(net).alive[never])
        actual.append(bought[never])
    assert abs(np.concatenate(estimated).mean() - np.concatenate(actual).mean()) < 0.1


def test_units_a_store_was_sent_of_a_size_never_given_that_sat_unsold_make_it_less_likely_bought():
    """The store selling most at a size it was never given gets 3 units of it, on the shelf for
    the 20 days since, with no sale: ``alive`` falls well below what the allocation alone said
    (both pieces of evidence count, not only the stronger)."""
    net, given, _bought = _allocated_network(0)
    never = (given == 0) & ~net.node_is_cd[:, None]
    store, size = max(zip(*np.nonzero(never), strict=True), key=lambda cell: net.sales[cell[0]].sum())
    stock = net.stock.copy()
    stock[store, size] = 3
    received = np.zeros(stock.shape, dtype=np.int32)
    received[store, size] = 3
    out_days = np.zeros(stock.shape, dtype=np.int16)
    out_days[store, size] = DAYS - 20  # empty until the receipt
    sent = replace(net, stock=stock, received=received, receipt_out_days=out_days)
    before = estimate_demand(net).alive[store, size]
    assert estimate_demand(sent).alive[store, size] < 0.5 * before


def test_an_uncertain_rate_values_units_with_the_negative_binomial():
    """A rate known only up to a Gamma of shape r makes the horizon's demand negative binomial:
    the shipment's expected extra sales are E[min(D, q)] under it, not under a Poisson at the
    same mean (the estimate's ``dispersion``, 1 / r; none: Poisson)."""
    stock = np.array([[60], [0]])
    net = _one_product_network(stock, np.array([[0.0], [6.0]]))
    rate = np.array([[0.0], [0.25]])  # 3.5 units over 14 days
    rules = replace(RULES, qtd_minima=1, custo_envio=0.0, custo_km=0.0)
    mean = 0.25 * rules.horizon_days

    def gain(q: int, dispersion: float | None) -> float:
        units = np.arange(q)  # E[min(D, q)] = sum of P(D > u) for u < q
        if dispersion is None:
            return float(stats.poisson.sf(units, mean).sum())
        r = 1.0 / dispersion
        return float(stats.nbinom.sf(units, r, r / (r + mean)).sum())

    for dispersion in (None, 0.5):
        phi = None if dispersion is None else np.array([[0.0], [dispersion]])
        out = recommend(net, rules, demand=Demand(rate, np.ones((2, 1)), phi))
        assert len(out) == 1
        assert out.expected_gain[0] == pytest.approx(gain(int(out.quantity[0]), dispersion), rel=1e-9)
    poisson = recommend(net, rules, demand=Demand(rate, np.ones((2, 1))))
    uncertain = recommend(net, rules, demand=Demand(rate, np.ones((2, 1)), np.array([[0.0], [0.5]])))
    # the long right tail makes the deeper units of the lot worth sending
    assert uncertain.quantity[0] > poisson.quantity[0]


def test_shipping_costs_drop_trips_that_do_not_pay_and_share_the_route():
    cheap = recommend(shortage(), RULES)
    assert len(cheap) > 0
    # a trip costs 50 units sold: nothing is worth it
    assert len(recommend(shortage(), replace(RULES, custo_envio=50.0))) == 0
    # a trip costs 3 units sold: one route carrying both sizes pays, as a whole
    shared = recommend(shortage(), replace(RULES, custo_envio=3.0))
    pairs = {(int(o), int(d)) for o, d in zip(shared.origin, shared.dest, strict=True)}
    assert len(shared) >= len(pairs)


def test_an_origin_short_of_a_lot_shares_the_destination_with_another():
    """Two stores can spare 4 units each; the destination needs about 8."""
    net = shortage(
        stock=[[0, 0], [0, 6], [24, 6], [24, 6]],
        sales=[[0, 0], [60, 15], [30, 15], [30, 15]],
    )
    out = recommend(net, replace(RULES, priorizar_cd=False, qtd_minima=2))
    origins = {int(o) for o, d, k in zip(out.origin, out.dest, out.item, strict=True) if d == 1 and k == 0}
    assert origins == {2, 3}


def test_a_destination_short_of_more_than_one_lot_gets_one_from_each_of_several_origins():
    """Store 1 sells 5 a day and has none: about 70 units over the horizon, lots of at most 7."""
    net = shortage(stock=[[400, 40], [0, 6], [300, 6], [3, 3]], sales=[[0, 0], [150, 15], [6, 15], [15, 15]])
    out = recommend(net, replace(RULES, qtd_minima=2, qtd_maxima=7))
    to_1 = (out.dest == 1) & (out.item == 0)
    lots = dict(zip(out.origin[to_1].tolist(), out.quantity[to_1].tolist(), strict=True))
    # one recommendation per origin, each within the bounds; the preferred CD sends a full lot
    assert set(lots) == {0, 2} and lots[0] == 7 and 2 <= lots[2] <= 7
    assert len(routes(out)) == len(out)


def _known_cells(held: np.ndarray, mu: np.ndarray) -> tuple[CellValues, Destinations]:
    """Cells whose customers buy every size, Poisson with mean ``mu``, keeping nothing back, and
    no destination candidate beyond the plan's."""
    cells = CellValues(
        held=held, mu=mu, alive=np.ones(held.shape), uplift=np.zeros(held.shape), dispersion=None,
        sold=np.ones(held.shape, dtype=bool), keep=np.zeros(held.shape, dtype=np.int32),
    )  # fmt: skip
    nobody = Destinations(
        *(np.zeros(0, dtype=np.int64),) * 2, np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0)
    )
    return cells, nobody


@pytest.mark.parametrize(("other_rate", "closed"), [(1.0, True), (20.0, False)])
def test_the_local_search_closes_a_trip_whose_items_another_paid_trip_can_carry(other_rate, closed):
    """Stores 1 and 2 each send two items to store 0. Store 1 holds plenty of all four, so the
    trip from store 2 closes, both its lots moving to store 1, unless store 1 would lose more
    of the two items than that trip costs (it sells them well)."""
    held = np.array([[0, 0, 0, 0], [20, 20, 20, 20], [0, 0, 20, 20]])
    mu = np.array([[10.0] * 4, [1.0, 1.0, other_rate, other_rate], [0.0, 0.0, 0.5, 0.5]])
    cells, nobody = _known_cells(held, mu)
    cost = np.full((3, 3), 2.0)
    plan = RoutedPlan(*(np.array(a) for a in ([1, 1, 2, 2], [0, 0, 0, 0], [0, 1, 2, 3], [3, 3, 3, 3])))
    out = polish(plan, nobody, cells, held.copy(), np.zeros(3, dtype=bool), 0.05, cost, (False, 3, 15, 0.15))
    assert sorted(zip(out.item.tolist(), out.quantity.tolist(), strict=True)) == [(k, 3) for k in range(4)]
    assert set(out.origin.tolist()) == ({1} if closed else {1, 2})


def test_the_batchs_routes_are_chosen_with_its_lots_where_only_a_chain_of_moves_closes_a_trip():
    """Stores 0 and 3 need items a, c, e and f; store 2's trip to store 0 carries a lot of a
    alone. Store 1 already sends to both and holds one lot of a, which goes to store 3; store 4
    also sends to store 3 and holds plenty of a. No single move closes store 2's trip (store 1
    has no a to spare, and moving its lot to store 4 gains nothing by itself); the chain does:
    store 4 serves store 3, store 1 serves store 0."""
    a, c, e, f = range(4)
    held = np.zeros((5, 4), dtype=np.int64)
    held[1, [a, c, f]] = [3, 20, 20]
    held[2, a] = 20
    held[4, [a, e]] = 20
    mu = np.zeros((5, 4))
    mu[[0, 3]] = 10.0
    cells, nobody = _known_cells(held, mu)
    cost = np.full((5, 5), 2.0)
    shipments = [(2, 0, a), (1, 0, c), (1, 3, a), (4, 3, e), (1, 3, f)]
    plan = RoutedPlan(*(np.array(col) for col in zip(*shipments, strict=True)), np.full(5, 3))
    args = (nobody, cells, held.copy(), np.zeros(5, dtype=bool), 0.05, cost, (False, 3, 3, 0.15))

    def routes_of(p):
        return {(int(o), int(d)) for o, d in zip(p.origin, p.dest, strict=True)}

    assert (2, 0) in routes_of(polish(plan, *args))
    out = reflow(plan, *args)
    assert routes_of(out) == {(1, 0), (1, 3), (4, 3)}
    sent = {
        (int(o), int(d), int(k)): int(q)
        for o, d, k, q in zip(out.origin, out.dest, out.item, out.quantity, strict=True)
    }
    assert sent == {(1, 0, a): 3, (1, 0, c): 3, (4, 3, a): 3, (4, 3, e): 3, (1, 3, f): 3}


def test_a_network_without_sales_or_with_contradictory_lot_bounds_gets_an_empty_batch():
    silent = network(stock=[[40, 40], [0, 0], [5, 5], [0, 0]])
    assert len(recommend(silent, RULES)) == 0
    assert len(recommend(shortage(), replace(RULES, qtd_minima=10, qtd_maxima=5))) == 0
    no_items = network(sizes=0, stock=np.zeros((4, 0)), sales=np.zeros((4, 0)))
    out = recommend(no_items, RULES)
    assert len(out) == 0 and out.justification == []


@pytest.mark.parametrize("source", ["demand", "sales"])
def test_the_simulators_informed_estimate_is_closer_to_the_truth_than_the_engines(source):
    """``--informed-rates`` is the yardstick for what data can tell: told the simulator's prior, it
    must estimate the live cells better than the engine does, and tell dead sizes apart better."""
    sim = _simulator()
    world = sim.build_world(sim.SHAPES[0], 42, record_demand=True)
    truth = world.truth
    stores = ~world.inputs.node_is_cd[:, None]
    live = (truth.rate > 0) & stores
    informed = sim.informed(world, source)
    engine = estimate_demand(world.inputs)

    def log_error(demand):
        mean = demand.rate * demand.alive
        return float(np.median(np.abs(np.log(np.maximum(mean[live], 1e-9) / truth.rate[live]))))

    assert log_error(informed) < 0.75 * log_error(engine)
    # a size its customers never buy, on the shelf some day of the window, shows it by selling
    # nothing (one never on the shelf keeps the prior's chance, in the sales)
    shelved = (np.stack(truth.daily_stock[-sim.HISTORY_DAYS :]) > 0).any(axis=0)
    dead = (truth.base_rate == 0) & (truth.prior_rate > 0) & stores & shelved
    assert dead.sum() >= 5
    assert informed.alive[dead].mean() < engine.alive[dead].mean() - 0.1
    assert informed.alive[live].mean() > 0.9
