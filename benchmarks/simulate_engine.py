"""Quality and speed simulator of the transfer recommendation engine.

Builds synthetic networks with known Poisson demand rates per store and size,
draws the sales history from them, gives the stores an imbalanced stock and
measures, exactly with Poisson formulas, the expected units sold over the
horizon:

- with no transfers;
- with the engine's batch (``recommend`` on the observed history);
- with every worthwhile unit move (true net gain >= 0.25 units), the same
  eligibility rules, no lot sizes: the gain the batch should capture;
- with the oracle: the same engine fed the true rates and the same number of
  units to move (it picks the best units of the whole network).

Every recommendation of every batch is checked against the rules, and each
batch is computed twice to check determinism.

Usage::

    .venv/bin/python benchmarks/simulate_engine.py [--seeds 5] [--scale]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import tracemalloc
from dataclasses import dataclass, replace

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from services.stock.engine import (
    ALTA_MAX_DAYS,
    DAYS_CAP,
    eligibility,
    expected_sales,
    haversine_km,
    prob_at_least,
    recommend,
)
from services.stock.engine_contract import EngineInput, EngineOutput, EngineRules

WORTH = 0.25  # a unit is worth moving when it adds this many expected units sold
HISTORY_DAYS = 30
RECENT_DAYS = 7


@dataclass
class Shape:
    name: str
    stores: int
    cds: int
    products: int
    sizes: tuple[int, ...]  # possible grid lengths


SHAPES = [
    Shape("20x50", 20, 1, 50, (4, 5, 6)),
    Shape("60x200", 60, 2, 200, (4, 5, 6)),
    Shape("120x400", 120, 2, 400, (5, 6)),
]
SCALE = Shape("300x1000", 300, 2, 1000, (6,))


@dataclass
class World:
    inputs: EngineInput
    rules: EngineRules
    true_rate: np.ndarray  # (N, K) daily rate over the coming horizon


def build_world(shape: Shape, seed: int, *, variant: int = 0) -> World:
    """A network with known demand. ``variant`` changes the rules and blocks."""
    rng = np.random.default_rng(seed)
    n_nodes = shape.stores + shape.cds
    is_cd = np.zeros(n_nodes, dtype=bool)
    is_cd[shape.stores :] = True

    # stores spread over a few regional clusters, CDs near the clusters' centres
    n_clusters = max(2, shape.stores // 25)
    centres = np.column_stack([rng.uniform(-30, -5, n_clusters), rng.uniform(-55, -35, n_clusters)])
    cluster = rng.integers(0, n_clusters, n_nodes)
    lat = centres[cluster, 0] + rng.normal(0, 0.6, n_nodes)
    lng = centres[cluster, 1] + rng.normal(0, 0.6, n_nodes)
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

    # size curves: a bell around the middle of the grid, perturbed per product,
    # with a mild regional skew toward smaller or larger sizes per store
    pos = item_size_pos.astype(np.float64)
    mid = (n_sizes[item_product] - 1) / 2.0 + rng.normal(0, 0.4, shape.products)[item_product]
    width = rng.uniform(0.9, 1.6, shape.products)[item_product]
    curve = np.exp(-0.5 * ((pos - mid) / width) ** 2) * rng.gamma(30, 1 / 30, n_items)
    skew = rng.normal(0, 0.08, n_nodes)
    share = curve[None, :] * np.exp(skew[:, None] * (pos - mid)[None, :])
    prod_sum = np.zeros((n_nodes, shape.products))
    np.add.at(prod_sum.T, item_product, share.T)
    share = share / prod_sum[:, item_product]

    store_level = rng.lognormal(0.0, 0.45, n_nodes)
    product_level = rng.lognormal(-0.2, 0.7, shape.products)
    interaction = rng.lognormal(-0.5 * 0.35**2, 0.35, (n_nodes, shape.products))
    carried = rng.random((n_nodes, shape.products)) < 0.8
    base = 0.7  # units/day of an average product at an average store, all sizes
    rate_np = base * store_level[:, None] * product_level[None, :] * interaction * carried
    rate_np[is_cd] = 0.0
    rate = rate_np[:, item_product] * share

    # campaigns that started a week ago and lift demand by 30-60 %
    campaign = np.zeros((n_nodes, shape.products), dtype=bool)
    camp_products = rng.choice(shape.products, max(1, shape.products // 20), replace=False)
    campaign[np.ix_(~is_cd, camp_products)] = rng.random((shape.stores, camp_products.shape[0])) < 0.5
    lift = np.where(campaign, rng.uniform(1.3, 1.6, campaign.shape), 1.0)[:, item_product]

    old = rng.poisson(rate * (HISTORY_DAYS - RECENT_DAYS))
    recent = rng.poisson(rate * lift * RECENT_DAYS)
    sales = (old + recent).astype(np.float32)

    # imbalanced stock: allocation errors per store x product and per size
    horizon = 14
    alloc = rng.lognormal(0.0, 0.75, (n_nodes, shape.products))[:, item_product]
    alloc = alloc * rng.lognormal(0.0, 0.5, (n_nodes, n_items))
    stock = rng.poisson(rate * horizon * 1.6 * alloc)
    dead = (~carried[:, item_product]) & (rng.random((n_nodes, n_items)) < 0.08)
    stock = np.where(dead, rng.poisson(4, (n_nodes, n_items)), stock)
    stock[:, rng.random(n_items) < 0.1] *= 0  # some sizes broken everywhere
    network_need = rate.sum(axis=0) * horizon
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
    )
    route_factor = np.ones((n_nodes, n_nodes), dtype=np.float32)
    if variant % 2 == 1:
        node_blocked[rng.choice(shape.stores, max(1, shape.stores // 20), replace=False)] = True
        product_blocked = product_brand == rng.integers(0, n_brands)
        rules = replace(rules, qtd_minima=2, qtd_maxima=10, priorizar_cd=False, bloqueio_campanha=False)
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
        sales=sales,
        sales_recent=recent.astype(np.float32),
        history_days=HISTORY_DAYS,
        campaign=campaign,
        route_factor=route_factor,
        brand_factor=np.where(np.arange(n_brands) == 0, 0.8, 1.0).astype(np.float32),
        category_factor=np.ones(n_categories, dtype=np.float32),
    )
    return World(inputs, rules, rate * lift)


# --------------------------------------------------------------------------
# Measures


def apply_moves(stock: np.ndarray, out: EngineOutput) -> np.ndarray:
    after = stock.astype(np.int64).copy()
    np.add.at(after, (out.origin, out.item), -out.quantity.astype(np.int64))
    np.add.at(after, (out.dest, out.item), out.quantity.astype(np.int64))
    return after


def network_sales(stock: np.ndarray, mu: np.ndarray) -> float:
    return float(expected_sales(stock, mu).sum())


def worthwhile_gain(world: World) -> tuple[float, int]:
    """Gain and units of all unit moves with true net gain >= WORTH (same eligibility, no lot sizes)."""
    inputs, rules = world.inputs, world.rules
    mu = world.true_rate * rules.horizon_days
    stock = inputs.stock.astype(np.int64)
    dest_ok, avail = eligibility(inputs, rules, mu)
    total, units = 0.0, 0
    for k in range(stock.shape[1]):
        dests = np.nonzero(dest_ok[:, k] & (prob_at_least(stock[:, k] + 1, mu[:, k]) >= WORTH))[0]
        origins = np.nonzero(avail[:, k] > 0)[0]
        origins = origins[~np.isin(origins, dests)]
        if dests.shape[0] == 0 or origins.shape[0] == 0:
            continue
        j = np.arange(1, 60)
        gains = prob_at_least(stock[dests, k][:, None] + j[None, :], mu[dests, k][:, None]).ravel()
        gains = np.sort(gains[gains >= WORTH])[::-1]
        per = avail[origins, k]
        owner = np.repeat(origins, per)
        jj = np.arange(owner.shape[0]) - np.repeat(np.cumsum(per) - per, per) + 1
        losses = np.sort(prob_at_least(stock[owner, k] - jj + 1, mu[owner, k]))
        n = min(gains.shape[0], losses.shape[0])
        net = gains[:n] - losses[:n]
        take = net >= WORTH
        total += float(net[take].sum())
        units += int(take.sum())
    return total, units


def oracle(world: World, units: int) -> tuple[float, int]:
    """Engine with the true rates, its unit budget tuned to move as many units as the batch."""
    inputs, rules = world.inputs, world.rules
    mu = world.true_rate * rules.horizon_days
    before = network_sales(inputs.stock, mu)

    def run(budget: int) -> tuple[float, int]:
        out = recommend(
            inputs,
            rules,
            daily_rate=world.true_rate,
            unit_budget=budget,
            min_unit_gain=0.01,
            min_lot_gain=0.01,
        )
        return network_sales(apply_moves(inputs.stock, out), mu) - before, int(out.quantity.sum())

    lo, hi = 0, units * 2 + 10
    best = (0.0, 0)
    for _ in range(14):
        mid = (lo + hi) // 2
        gain, moved = run(mid)
        if moved <= units:
            best = max(best, (gain, moved))
            lo = mid + 1
        else:
            hi = mid - 1
        if lo > hi:
            break
    return best


def check_rules(world: World, out: EngineOutput) -> list[str]:
    """Every rule on every recommendation; returns the violations found."""
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
    sold = np.zeros((inputs.stock.shape[0], inputs.product_blocked.shape[0]))
    np.add.at(sold.T, inputs.item_product, inputs.sales.T)
    v += ["destination does not sell the product"] * int((sold[d, p] <= 0).sum())
    # origin keeps at least its observed horizon demand
    sent = np.zeros_like(stock)
    np.add.at(sent, (o, k), q)
    received = np.zeros_like(stock)
    np.add.at(received, (d, k), q)
    v += ["circle"] * int(((sent > 0) & (received > 0)).sum())
    need = np.ceil(inputs.sales / days_hist * horizon - 1e-9) * ~inputs.node_is_cd[:, None]
    v += ["origin below its need"] * int(((sent > 0) & (stock - sent < need)).sum())
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
    rank = np.searchsorted(np.array(["alta", "baixa", "media"]), out.priority)
    rank = np.array([0, 2, 1])[rank]
    sort_key = rank * 1000 - out.score
    v += ["order"] * int((np.diff(sort_key) < 0).sum())
    v += ["justification"] * sum(
        1 for i, text in enumerate(out.justification) if f"Enviar {q[i]} un." not in text
    )
    return v


def same_output(a: EngineOutput, b: EngineOutput) -> bool:
    fields = ("origin", "dest", "item", "quantity", "score", "priority", "days_to_stockout")
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in fields) and (
        a.justification == b.justification
    )


def run_case(shape: Shape, seed: int, variant: int) -> dict:
    world = build_world(shape, seed, variant=variant)
    inputs, rules = world.inputs, world.rules
    mu = world.true_rate * rules.horizon_days
    t0 = time.perf_counter()
    out = recommend(inputs, rules)
    elapsed = time.perf_counter() - t0
    tracemalloc.start()  # a second run, traced, for memory (tracing slows it down)
    again = recommend(inputs, rules)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    before = network_sales(inputs.stock, mu)
    batch_gain = network_sales(apply_moves(inputs.stock, out), mu) - before
    units = int(out.quantity.sum())
    worth_gain, worth_units = worthwhile_gain(world)
    oracle_gain, oracle_units = oracle(world, units)
    violations = check_rules(world, out)
    # the same engine fed each cell's own average: what pooling is worth
    naive_rate = inputs.sales / inputs.history_days * ~inputs.node_is_cd[:, None]
    naive = recommend(inputs, rules, daily_rate=naive_rate)
    naive_gain = network_sales(apply_moves(inputs.stock, naive), mu) - before
    naive_oracle, _ = oracle(world, int(naive.quantity.sum()))
    return {
        "shape": shape.name,
        "seed": seed,
        "rules": "B" if variant % 2 else "A",
        "recs": len(out),
        "units": units,
        "before": before,
        "batch": batch_gain,
        "worth": worth_gain,
        "worth_units": worth_units,
        "oracle": oracle_gain,
        "oracle_units": oracle_units,
        "capture": batch_gain / worth_gain if worth_gain > 0 else float("nan"),
        "vs_oracle": batch_gain / oracle_gain if oracle_gain > 0 else float("nan"),
        "naive_vs_oracle": naive_gain / naive_oracle if naive_oracle > 0 else float("nan"),
        "violations": len(violations),
        "violation_kinds": sorted(set(violations)),
        "deterministic": same_output(out, again),
        "seconds": elapsed,
        "peak_mb": peak / 2**20,
    }


def print_table(rows: list[dict]) -> None:
    head = (
        f"{'shape':>9} {'seed':>4} {'rules':>5} {'recs':>6} {'units':>6} {'no-move':>9} {'batch+':>8} "
        f"{'worth+':>8} {'w.units':>7} {'oracle+':>8} {'o.units':>7} {'capture':>7} {'vs.orac':>7} "
        f"{'viol':>4} {'det':>3} {'sec':>6} {'MB':>6}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['shape']:>9} {r['seed']:>4} {r['rules']:>5} {r['recs']:>6} {r['units']:>6} {r['before']:>9.1f} "
            f"{r['batch']:>8.1f} {r['worth']:>8.1f} {r['worth_units']:>7} {r['oracle']:>8.1f} "
            f"{r['oracle_units']:>7} {r['capture']:>7.1%} {r['vs_oracle']:>7.1%} {r['naive_vs_oracle']:>6.1%} "
            f"{r['violations']:>4} "
            f"{'yes' if r['deterministic'] else 'NO':>3} {r['seconds']:>6.2f} {r['peak_mb']:>6.1f}"
        )
        if r["violation_kinds"]:
            print("          violations:", ", ".join(r["violation_kinds"]))


def run_scale(seed: int, with_quality: bool) -> None:
    world = build_world(SCALE, seed)
    inputs, rules = world.inputs, world.rules
    n, k = inputs.stock.shape
    print(f"\nScale: N={n} nodes, K={k} items ({n * k:,} cells), {inputs.history_days} days of sales")
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    recommend(inputs, rules)  # warm-up (imports, caches)
    tracemalloc.start()
    t0 = time.perf_counter()
    out = recommend(inputs, rules)
    elapsed = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    t1, c1 = time.perf_counter(), time.process_time()
    recommend(inputs, rules)
    untraced, cpu = time.perf_counter() - t1, time.process_time() - c1
    load = os.getloadavg()[0]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    violations = check_rules(world, out)
    print(
        f"recommend: {untraced:.2f} s wall, {cpu:.2f} s CPU (load average {load:.1f} on "
        f"{os.cpu_count()} CPUs; {elapsed:.2f} s under tracemalloc), peak traced memory "
        f"{peak:.0f} MB, process max RSS {rss:.0f} MB (with the network built, before the engine ran: "
        f"{rss_before:.0f} MB)"
    )
    print(
        f"{len(out):,} recommendations, {int(out.quantity.sum()):,} units, rule violations: {len(violations)}"
    )
    if with_quality:
        print_table([run_case(SCALE, seed, 0)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds per network shape")
    parser.add_argument("--scale", action="store_true", help="also time the 300 stores x 6,000 items case")
    parser.add_argument("--scale-quality", action="store_true", help="with --scale, also measure its quality")
    args = parser.parse_args(argv)

    rows = []
    for shape in SHAPES:
        for seed in range(args.seeds):
            rows.append(run_case(shape, 1000 + seed, seed))
    print(
        f"Horizon 14 days, history {HISTORY_DAYS} days; a unit is worthwhile when it adds >= {WORTH} "
        "expected units sold. Rules A: defaults (min 3, max 15, CD first, campaign lock); "
        "rules B: min 2, max 10, no CD preference, no campaign lock, blocked stores and a blocked brand."
    )
    print_table(rows)
    capture = np.array([r["capture"] for r in rows])
    vs_oracle = np.array([r["vs_oracle"] for r in rows])
    total_viol = sum(r["violations"] for r in rows)
    print(
        f"\ncapture of worthwhile gain: min {np.nanmin(capture):.1%}, mean {np.nanmean(capture):.1%} "
        f"(target >= 80%)\nvs oracle with the same units: min {np.nanmin(vs_oracle):.1%}, "
        f"mean {np.nanmean(vs_oracle):.1%} (target >= 90%)\nsame engine on each cell's own average, vs its "
        f"oracle: mean {np.nanmean([r['naive_vs_oracle'] for r in rows]):.1%}\nrule violations: {total_viol}; "
        f"deterministic: {all(r['deterministic'] for r in rows)}"
    )
    if args.scale:
        run_scale(7, args.scale_quality)
    ok = (
        total_viol == 0
        and np.nanmin(capture) >= 0.8
        and np.nanmin(vs_oracle) >= 0.9
        and all(r["deterministic"] for r in rows)
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
