"""The transfer engine lived with week after week: every batch approved, sales played on.

``simulate_engine.py`` measures one batch (and a second one a week later) against an oracle.
This module plays what a retailer lives with: a network of known Poisson rates
(``simulate_engine.build_world``: 30 days of history) runs for ``--weeks`` weeks; at the
start of each week the engine gets the snapshot the database would hold (stock on the shelf,
the sales ledger of the last 30 days and of the quarter the estimate reads, with each cell's
last-sale age and its store's first sale of the product, the units in transit, and what its
earlier transfers sold against what it expected),
its whole batch is approved and executed, then 7 days of sales are played. The same weeks
are played from the same start by each policy:

- **none**: no transfers at all;
- **engine**: ``recommend`` on each week's snapshot;
- **oracle**: ``simulate_engine.oracle`` (the MIP on the true rates, same rules) on the
  policy's own snapshot, with at most the engine's units of that week (equal units);
- **unlimited**: the same oracle with no limit on units.

Assumptions, all of them:

- **Demand** is Poisson on the true rates: the campaigns that start on day 23 of the history
  run to the end, and a store missing key sizes sells less of the rest of the run, on each
  day's shelf (``simulate_engine``'s run effect); sales are capped by the shelf. Stores are
  not restocked (the history's mid-window restock is not repeated): transfers are their only
  supply.
- **Common random numbers**: the demand of store x item on day d is the inverse Poisson CDF, at
  its rate that day, of a uniform drawn for that (store, item, day) from a generator seeded
  with (seed, d): every policy meets the same customers, more of them where its runs are
  whole. The draws are common to both rule sets of a seed.
- **Execution**: the batch leaves its origins at once, before the first day's sales; the units
  reach their destinations ``--lead-days`` days later, before that day's sales (0: at once;
  default 3: on the shelf for the week's days 4-7) and count as in transit until then. With a lead time
  under 7 days nothing is in transit at the next week's snapshot; units still on their way
  when the horizon ends count as moved and not sold.
- **CD replenishment**: after each week's 7 days every CD's stock of each item is brought back
  up to what it held at the start of week 1 (never cut): the CD is the network's weekly
  supply, and the transfers are its only way to the stores.
- **Sold** are the units sold over the weeks played (realised, with the common draws);
  **lift** = sold - sold by **none**; **share** = the engine's lift / the oracle's (equal
  units; ``share.u``: / the unlimited oracle's). **Cost** is the batches' shipping in expected
  units sold, each route once per batch (``routes_cost``).
- **vs.orac**, per week, is ``simulate_engine``'s measure on the engine's snapshot: the
  batch's expected extra sales over 14 days less shipping, on the true rates, over the
  oracle's with the same units on the same snapshot (week 1's solve is also the oracle
  policy's first batch).
- **Oracle gap**: the distance of the oracle's plan to the bound HiGHS proved on the whole
  integer program (every origin for every destination), ``(bound - value) / bound`` in the
  program's objective net of moving nothing (``oracle`` returns it; ``inf``: no plan found).
  Every solve beyond 1 % is marked ``!`` and counted (listed one by one when there are 12 or
  fewer), as are the solves that took the whole ``--oracle-seconds``; min / median / max are
  printed.
- **Checks**, all with target 0: rule violations of every engine batch (``check_rules``);
  units **overdrawn** (taken from an origin beyond its stock on the shelf, any policy);
  units **re-sent**: units sent to a cell that has units in transit and whose stock on the
  shelf plus in transit is at least its TRUE expected demand over the rules' horizon (14
  days: true rate with the campaign lift x the run factor of what it holds x 14), counted on
  that week's snapshot for every policy. With ``--lead-days`` under 7 no cell has units in
  transit at a snapshot, so the count is 0 by construction; ``--lead-days 10`` exercises it.
- **Outcome**: each transfer the engine's lane executes is measured as ``services.stock.outcome``
  measures it from the database (ASI over the 14 days from its arrival, the destination's own
  stock selling first, earlier lots of the batch into the cell ahead), and once its window is
  over it reaches the engine, which sets it against what its current rates expect
  (``engine_demand.outcome_factors``; ``--no-outcome`` leaves it out); ``--history-days 30`` has the estimate read the window alone.
- **Planning alone**: ``--true-rates`` hands the engine the true rates (with the campaign
  lift, the whole run) instead of its estimate: what is left of the gap is the planning's.
- **The best estimate the data allow**: ``--informed-rates`` hands the engine
  ``simulate_informed``'s exact posterior of each rate under the simulator's own prior, from
  every day played (at most ``--history-days``): from the demand uncapped by the stock
  (``demand``) or from the sales, each day that sold out a censored count (``sales``). It is
  told more than a retailer's data hold (the prior's levels, each day's stock) and less (what
  each store was given), so it shows a target within reach, not a bound.
- **A stock ledger**: ``--stock-days`` tells the engine each cell's days out of stock, read
  from its stock at the start of every day (the history's included, whose mid-window restock
  the database cannot show): what a stock import kept every day would give, in place of the
  last-sale rule, the receipts and the transfers out.
- **Determinism**: the engine runs twice on week 1 of each seed x rule set (``same_output``);
  the engine's and the no-transfer lanes are deterministic for a seed, the oracle's depend on
  HiGHS's time limit (``--oracle-seconds``) and may vary by a few units between runs.

Exit status 0 unless a rule violation, an overdraw or nondeterminism is found.

Usage::

    .venv/bin/python benchmarks/simulate_weeks.py [--seeds 5] [--weeks 8] [--shape 10x20]
        [--lead-days 3] [--oracle-seconds 10] [--first-week-seconds 30] [--no-oracle] [--equal-only]
        [--first-seed 1000]
        [--true-rates | --informed-rates {demand,sales}] [--no-outcome] [--history-days 91] [--stock-days]

``--shape`` takes 10x20, 16x30 or any SxP (S stores, 1 CD, P products of 4-6 sizes);
``--equal-only`` skips the unlimited oracle policy (half the solver time).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.simulate_engine import (
    HISTORY_DAYS,
    ORACLE_TIME_LIMIT,
    SHAPES,
    Plan,
    Shape,
    World,
    _net,
    _run_factor,
    _snapshot,
    build_world,
    check_rules,
    evaluate,
    informed,
    oracle,
    routes_cost,
    same_output,
)
from services.stock import ledger as stock_ledger
from services.stock.engine import recommend
from services.stock.engine_contract import ESTIMATE_HISTORY_DAYS, NO_SEND, Outcomes
from services.stock.engine_demand import RECENT_DAYS

WEEK_DAYS = 7
GAP_WARN = 0.01  # an oracle solve farther than this from its bound is listed
LANES = ("none", "engine", "oracle", "unlimited")


@dataclass
class Options:
    weeks: int = 8
    lead_days: int = 3
    oracle: bool = True
    unlimited: bool = True
    oracle_seconds: float = ORACLE_TIME_LIMIT
    # week 1's programs are the largest (every store's history gap open at once)
    first_week_seconds: float = 3 * ORACLE_TIME_LIMIT
    ledger: bool = True  # the receipts' stock-out days reach the engine, as the database gives them
    true_rates: bool = False  # the engine plans on the true rates (the planning alone)
    # the engine plans on the best estimate the days played allow (``simulate_informed``): from
    # their demand uncapped by the stock ("demand") or from their sales ("sales")
    informed: str | None = None
    outcome: bool = True  # what moved units sold against what was expected reaches the engine
    history_days: int = ESTIMATE_HISTORY_DAYS  # days of sales the estimate reads (HISTORY_DAYS: the window)
    stock_days: bool = False  # each cell's days out of stock read from its stock every day


@dataclass
class Lane:
    """One policy's network as it lives on: the shelves, the units on their way, the ledger."""

    stock: np.ndarray  # (N, K) int64 on the shelf
    ledger: list[np.ndarray]  # one (N, K) array of units sold per day played, history included
    arrivals: dict[int, np.ndarray] = field(default_factory=dict)  # day -> (N, K) units due
    received: dict[int, np.ndarray] = field(default_factory=dict)  # day -> (N, K) units arrived
    sent: dict[int, np.ndarray] = field(default_factory=dict)  # day -> (N, K) units taken by transfers
    day: int = HISTORY_DAYS  # the next day to play
    sold: int = 0  # units sold since week 1
    weekly_sold: list[int] = field(default_factory=list)
    moved: int = 0
    cost: float = 0.0
    overdrawn: int = 0
    resent: int = 0
    # the engine's executed transfers, for the outcome measure (``outcomes``)
    transfers: list[Transfer] = field(default_factory=list)
    # for ``Options.informed``: day by day, the demand uncapped by the stock, the stock the day
    # began with and the demand's multiplier on the rate before the campaign (``Truth``)
    record: tuple[list, list, list] | None = None


@dataclass
class Transfer:
    """An executed transfer as ``services.stock.outcome`` reads it from the database."""

    dest: int
    item: int
    units: int
    batch_day: int  # the batch's date (a day index of the ledger)
    start: int  # the day it reached the shelf (``recebida_data``)
    dest_stock: int  # the destination's stock on hand at the batch (``estoque_destino``)
    ahead: int  # units of the same batch into the same cell that start earlier


def parse_shape(text: str) -> Shape:
    for shape in SHAPES:
        if shape.name == text:
            return shape
    match = re.fullmatch(r"(\d+)x(\d+)", text)
    if match is None or int(match[1]) < 2 or int(match[2]) < 1:
        raise argparse.ArgumentTypeError(f"shape {text!r}: expected SxP, e.g. 10x20")
    return Shape(text, int(match[1]), 1, int(match[2]), (4, 5, 6))


def demand_uniforms(seed: int, days: int, cells: tuple[int, int]) -> np.ndarray:
    """(days, N, K) uniforms, one per store x item x day, each day's from a generator seeded with
    (seed, day): the common random numbers every policy's demand is drawn from."""
    return np.stack([np.random.default_rng([seed, HISTORY_DAYS + d]).random(cells) for d in range(days)])


def cell_sums(shape: tuple[int, ...], node: np.ndarray, item: np.ndarray, quantity: np.ndarray) -> np.ndarray:
    total = np.zeros(shape, dtype=np.int64)
    np.add.at(total, (np.asarray(node, dtype=np.int64), np.asarray(item, dtype=np.int64)), quantity)
    return total


def in_transit(lane: Lane) -> np.ndarray:
    total = np.zeros_like(lane.stock)
    for units in lane.arrivals.values():
        total += units
    return total


def snapshot(
    base: World,
    lane: Lane,
    week: int,
    ledger: bool = True,
    history_days: int = ESTIMATE_HISTORY_DAYS,
    stock_days: bool = False,
) -> World:
    """What the database holds at the start of the week, with the truth the measures read: with
    ``ledger``, the receipts of the window: the stock-out days before each and the units they
    brought (``services.stock.ledger``); with ``stock_days``, each cell's days out of stock."""
    transit = in_transit(lane)
    truth = replace(base.truth, stock=lane.stock, daily_sales=lane.ledger)
    if lane.record is not None:
        truth = replace(
            truth, daily_demand=lane.record[0], daily_stock=lane.record[1], daily_exposure=lane.record[2]
        )
    inputs = _snapshot(truth, base.inputs, transit if transit.any() else None, history_days)
    days = inputs.history_days if inputs.estimate_history is None else inputs.estimate_history.days
    start = lane.day - days
    into, out = (np.zeros((days, *lane.stock.shape), dtype=np.int64) for _ in range(2))
    for moves, daily in ((lane.received, into), (lane.sent, out)):
        for day, units in moves.items():
            if day >= start:
                daily[day - start] += units
    span = None if inputs.estimate_history is None else inputs.estimate_history.span
    if ledger and out.any():
        sent, sent_history = stock_ledger.dense_units(out, inputs.history_days, span)
        last = days - 1 - np.argmax(out[::-1] > 0, axis=0)
        age = np.where(out.any(axis=0), days - 1 - last, NO_SEND).astype(np.int16)
        inputs = replace(inputs, sent=sent, last_sent_age=age)
        if inputs.estimate_history is not None:
            inputs = replace(inputs, estimate_history=replace(inputs.estimate_history, sent=sent_history))
    gaps = stock_ledger.dense_out_days(
        lane.stock, np.stack(lane.ledger[-days:]), into, RECENT_DAYS, inputs.history_days, span
    )
    if ledger and gaps is not None:
        inputs = replace(
            inputs, receipt_out_days=gaps.window, receipt_out_recent=gaps.recent, received=gaps.units
        )
        if inputs.estimate_history is not None:
            history = replace(
                inputs.estimate_history, receipt_out_days=gaps.history, received=gaps.units_history
            )
            inputs = replace(inputs, estimate_history=history)
    if stock_days:
        inputs = days_out_of_stock(inputs, base, lane, days, into, out)
    return World(inputs, base.rules, truth, week, transit)


def days_out_of_stock(inputs, base: World, lane: Lane, days: int, into: np.ndarray, out: np.ndarray):
    """``inputs`` with each cell's days out of stock in the window, its last week and its span of
    the history read from its stock at the start of each day (after that day's arrivals), where
    the last-sale rule, the receipts and the transfers out are all the engine otherwise has.
    Walking back from today gives the played days; the history's come from the simulator, whose
    mid-window restock only a kept stock ledger would show."""
    sold = np.stack(lane.ledger[-days:]).astype(np.int64)
    began = np.zeros_like(sold)
    end = lane.stock.astype(np.int64)
    for t in range(days - 1, -1, -1):
        began[t] = end + sold[t]
        end = began[t] - into[t] + out[t]
    first = len(lane.ledger) - days
    for t in range(max(HISTORY_DAYS - first, 0)):
        began[t] = base.truth.daily_stock[first + t]
    empty = began <= 0
    none = np.zeros(inputs.stock.shape, dtype=np.int16)
    inputs = replace(
        inputs,
        last_sale_age=none,
        last_sent_age=None,
        receipt_out_days=empty[-inputs.history_days :].sum(axis=0).astype(np.int16),
        receipt_out_recent=empty[-RECENT_DAYS:].sum(axis=0).astype(np.int16),
    )
    history = inputs.estimate_history
    if history is None:
        return inputs
    in_span = np.arange(days)[:, None, None] >= days - np.asarray(history.span, dtype=np.int64)[None]
    out_days = (empty & in_span).sum(axis=0).astype(np.int16)
    return replace(inputs, estimate_history=replace(history, last_sale_age=none, receipt_out_days=out_days))


def resent_units(world: World, sent: np.ndarray) -> int:
    """Units sent to cells with units in transit whose stock plus in transit is at least their
    true expected demand over the horizon (true rate x run factor of what they hold x H)."""
    if not world.in_transit.any():
        return 0
    inputs = world.inputs
    held = inputs.stock.astype(np.int64) + world.in_transit
    factor = _run_factor(held, world.truth.key_live, inputs.item_product, inputs.product_blocked.size)
    need = world.truth.rate * factor * world.rules.horizon_days
    covered = (world.in_transit > 0) & (held >= need)
    return int(sent[covered].sum())


def record_transfers(lane: Lane, world: World, out, lead_days: int) -> None:
    """The engine's batch as executed transfers, in its order (several origins of one cell: the
    earlier in the batch counts as ahead)."""
    seen: dict[tuple[int, int], int] = {}
    for o_dest, o_item, units in zip(
        out.dest.tolist(), out.item.tolist(), out.quantity.tolist(), strict=True
    ):
        ahead = seen.get((o_dest, o_item), 0)
        seen[(o_dest, o_item)] = ahead + units
        stock = int(world.inputs.stock[o_dest, o_item])
        lane.transfers.append(Transfer(o_dest, o_item, units, lane.day, lane.day + lead_days, stock, ahead))


def outcomes(lane: Lane, horizon_days: int) -> Outcomes | None:
    """The engine's executed transfers whose first ``horizon_days`` on the shelf are over at the
    lane's day, as ``services.stock.outcome.measured_transfers`` reads them from the database:
    the units of the cell that sell first (its own stock left at the arrival and the same
    batch's earlier lots into it), the units moved and, of them, those sold (ASI)."""
    rows = []
    for t in lane.transfers:
        end = t.start + horizon_days
        if end > lane.day:
            continue
        sold = np.stack(lane.ledger[t.batch_day : end])[:, t.dest, t.item]
        before = max(t.dest_stock - int(sold[: t.start - t.batch_day].sum()), 0) + t.ahead
        window = int(sold[t.start - t.batch_day :].sum())
        rows.append((t.dest, t.item, before, t.units, min(max(window - before, 0), t.units)))
    if not rows:
        return None
    dest, item, before, units, asi = (np.array(column) for column in zip(*rows, strict=True))
    return Outcomes(
        dest.astype(np.int32), item.astype(np.int32), before.astype(np.float64),
        units.astype(np.float64), asi.astype(np.float64), horizon_days,
    )  # fmt: skip


def execute(lane: Lane, world: World, plan, lead_days: int) -> None:
    """The whole batch approved: its units leave the origins now and arrive after the lead time."""
    q = np.asarray(plan.quantity, dtype=np.int64)
    if q.shape[0] == 0:
        return
    taken = cell_sums(lane.stock.shape, plan.origin, plan.item, q)
    sent = cell_sums(lane.stock.shape, plan.dest, plan.item, q)
    lane.overdrawn += int(np.maximum(taken - lane.stock, 0).sum())
    lane.resent += resent_units(world, sent)
    lane.stock = np.maximum(lane.stock - taken, 0)
    lane.sent[lane.day] = lane.sent.get(lane.day, 0) + taken
    due = lane.day + lead_days
    lane.arrivals[due] = lane.arrivals.get(due, 0) + sent
    lane.moved += int(q.sum())
    lane.cost += routes_cost(world, np.asarray(plan.origin), np.asarray(plan.dest))


def play_week(lane: Lane, base: World, uniforms: np.ndarray, cd_start: np.ndarray) -> None:
    """7 days of sales on the common draws, capped by the shelf; then the CDs are replenished."""
    truth, inputs = base.truth, base.inputs
    week_sold = 0
    for day in range(lane.day, lane.day + WEEK_DAYS):
        arriving = lane.arrivals.pop(day, None)
        if arriving is not None:
            lane.stock = lane.stock + arriving
            lane.received[day] = arriving
        factor = _run_factor(lane.stock, truth.key_live, inputs.item_product, inputs.product_blocked.size)
        demand = np.maximum(stats.poisson.ppf(uniforms[day - HISTORY_DAYS], truth.rate * factor), 0).astype(
            np.int64
        )
        if lane.record is not None:
            lane.record[0].append(demand.astype(np.int32))
            lane.record[1].append(lane.stock.astype(np.int32))
            lane.record[2].append((truth.lift * factor).astype(np.float32))
        sold = np.minimum(demand, lane.stock)
        lane.stock = lane.stock - sold
        lane.ledger.append(sold.astype(np.int16))
        week_sold += int(sold.sum())
    lane.day += WEEK_DAYS
    lane.sold += week_sold
    lane.weekly_sold.append(week_sold)
    cd = inputs.node_is_cd
    lane.stock[cd] = np.maximum(lane.stock[cd], cd_start)


def solve(world: World, cap: int | None, seconds: float) -> tuple[Plan, float, bool]:
    """The oracle's plan, its distance to the bound HiGHS proved and whether it took the whole
    time limit (nothing to solve at 0 units)."""
    if cap == 0:
        none = np.zeros(0, dtype=np.int64)
        return Plan(none, none, none, none), 0.0, False
    plan, gap, took = oracle(world, cap, seconds)
    return plan, gap, took >= seconds


def engine_week(base: World, lane: Lane, week: int, opts: Options) -> tuple[dict, Plan | None]:
    """The engine's batch of the week on its lane's snapshot, measured, checked and executed;
    with the oracle, also its plan with the same units on the same snapshot."""
    world = snapshot(base, lane, week, opts.ledger, opts.history_days, opts.stock_days)
    if opts.outcome and not (opts.true_rates or opts.informed):
        measured = outcomes(lane, world.rules.horizon_days)
        world = replace(world, inputs=replace(world.inputs, outcomes=measured))
    rate = {"daily_rate": world.truth.rate} if opts.true_rates else {}
    if opts.informed:
        days = min(len(lane.ledger), opts.history_days)
        rate = {"demand": informed(world, opts.informed, days)}
    t0 = time.perf_counter()
    out = recommend(world.inputs, world.rules, **rate)
    seconds = time.perf_counter() - t0
    gain, cost, units = evaluate(world, out)
    row = {
        "week": week,
        "recs": len(out),
        "units": units,
        "net": gain - cost,
        "violations": check_rules(world, out),
        "seconds": seconds,
        "transit": int(world.in_transit.sum()),
        "limited": [],  # the oracle solves of the week that took the whole time limit
    }
    if week == 1:
        row["deterministic"] = same_output(out, recommend(world.inputs, world.rules, **rate))
    plan = None
    if opts.oracle:
        seconds = opts.first_week_seconds if week == 1 else opts.oracle_seconds
        plan, row["gap"], limited = solve(world, units, seconds)
        row["limited"] += ["measure"] * limited
        row["oracle"] = _net(world, plan)
        row["vs_oracle"] = row["net"] / row["oracle"] if row["oracle"] > 0 else float("nan")
    record_transfers(lane, world, out, opts.lead_days)
    execute(lane, world, out, opts.lead_days)
    return row, plan


def oracle_week(base: World, lane: Lane, row: dict, cap: int | None, opts: Options) -> tuple[int, float]:
    """An oracle policy's batch of the week on its own lane's snapshot, executed: (units, gap)."""
    world = snapshot(base, lane, row["week"])
    seconds = opts.first_week_seconds if row["week"] == 1 else opts.oracle_seconds
    plan, gap, limited = solve(world, cap, seconds)
    row["limited"] += ["unlimited policy" if cap is None else "oracle policy"] * limited
    execute(lane, world, plan, opts.lead_days)
    return int(np.sum(plan.quantity)), gap


def run_case(shape: Shape, seed: int, variant: int, opts: Options) -> dict:
    """Every policy over the same weeks from the same start; a row per week and the lanes."""
    base = build_world(
        shape, seed, variant=variant, record_demand=opts.informed is not None or opts.stock_days
    )
    uniforms = demand_uniforms(seed, opts.weeks * WEEK_DAYS, base.inputs.stock.shape)
    cd_start = base.truth.stock[base.inputs.node_is_cd].copy()
    names = [n for n in LANES if opts.oracle or n in ("none", "engine")]
    if not opts.unlimited:
        names = [n for n in names if n != "unlimited"]
    lanes = {n: Lane(base.truth.stock.copy(), list(base.truth.daily_sales)) for n in names}
    if opts.informed:
        truth = base.truth
        lanes["engine"].record = (
            list(truth.daily_demand),
            list(truth.daily_stock),
            list(truth.daily_exposure),
        )
    rows = []
    for week in range(1, opts.weeks + 1):
        row, plan = engine_week(base, lanes["engine"], week, opts)
        if "oracle" in lanes:
            if week == 1:
                # the same snapshot and the same units: the measure's solve is the policy's batch
                world = snapshot(base, lanes["oracle"], week)
                execute(lanes["oracle"], world, plan, opts.lead_days)
                row["o_units"], row["o_gap"] = int(np.sum(plan.quantity)), row["gap"]
            else:
                row["o_units"], row["o_gap"] = oracle_week(base, lanes["oracle"], row, row["units"], opts)
        if "unlimited" in lanes:
            row["u_units"], row["u_gap"] = oracle_week(base, lanes["unlimited"], row, None, opts)
        for lane in lanes.values():
            play_week(lane, base, uniforms, cd_start)
        row["sold"] = {n: lane.weekly_sold[-1] for n, lane in lanes.items()}
        rows.append(row)
    return {"shape": shape.name, "seed": seed, "rules": "B" if variant % 2 else "A", "weeks": rows} | horizon(
        lanes, rows
    )


def horizon(lanes: dict[str, Lane], rows: list[dict]) -> dict:
    """The whole horizon's figures of a case."""
    sold = {n: lane.sold for n, lane in lanes.items()}
    lift = {n: sold[n] - sold["none"] for n in lanes}

    def share(of: str) -> float:
        return lift["engine"] / lift[of] if of in lift and lift[of] > 0 else float("nan")

    return {
        "sold": sold,
        "lift": lift,
        "share": share("oracle"),
        "share_u": share("unlimited"),
        "moved": {n: lane.moved for n, lane in lanes.items()},
        "cost": {n: lane.cost for n, lane in lanes.items()},
        "overdrawn": {n: lane.overdrawn for n, lane in lanes.items()},
        "resent": {n: lane.resent for n, lane in lanes.items()},
        "violations": [v for r in rows for v in r["violations"]],
        "deterministic": all(r.get("deterministic", True) for r in rows),
    }


def pct(x: float) -> str:
    return f"{x:.1%}" if np.isfinite(x) else "-"


def gap_text(gap: float | None) -> str:
    if gap is None:
        return "-"
    if not np.isfinite(gap):
        return "none!"
    return f"{gap:.1%}" + ("!" if gap > GAP_WARN else "")


def print_weeks(case: dict) -> None:
    """One table per seed x rule set: each week's batches and sales."""
    print(f"\n{case['shape']} seed {case['seed']} rules {case['rules']}")
    head = (
        f"{'wk':>2} {'recs':>4} {'units':>5} {'transit':>7} {'net':>6} {'oracle':>6} {'vs.orac':>7} "
        f"{'gap':>6} {'o.units':>7} {'o.gap':>6} {'u.units':>7} {'u.gap':>6} | sold: "
        f"{'none':>5} {'engine':>6} {'oracle':>6} {'unlim':>5} {'viol':>4}"
    )
    print(head)
    print("-" * len(head))
    for r in case["weeks"]:
        sold = r["sold"]
        print(
            f"{r['week']:>2} {r['recs']:>4} {r['units']:>5} {r['transit']:>7} {r['net']:>6.1f} "
            f"{format(r['oracle'], '.1f') if 'oracle' in r else '-':>6} {pct(r.get('vs_oracle', float('nan'))):>7} "
            f"{gap_text(r.get('gap')):>6} {r.get('o_units', '-'):>7} {gap_text(r.get('o_gap')):>6} "
            f"{r.get('u_units', '-'):>7} {gap_text(r.get('u_gap')):>6} |       "
            f"{sold['none']:>5} {sold['engine']:>6} {sold.get('oracle', '-'):>6} "
            f"{sold.get('unlimited', '-'):>5} {len(r['violations']):>4}"
        )


def lanes_text(values: dict, fmt: str = "") -> str:
    return "/".join(format(values[n], fmt) if n in values else "-" for n in LANES if n != "none")


def print_horizon(cases: list[dict]) -> None:
    """One row per seed x rule set: the whole horizon."""
    print("\nWhole horizon (engine/oracle/unlimited where three figures share a column)")
    head = (
        f"{'shape':>6} {'seed':>4} {'r':>1} {'sold none':>9} {'sold e/o/u':>17} {'lift e/o/u':>15} "
        f"{'share':>6} {'share.u':>7} {'moved e/o/u':>17} {'cost e/o/u':>17} {'viol':>4} "
        f"{'overdr':>8} {'resent':>8} {'det':>3}"
    )
    print(head)
    print("-" * len(head))
    for c in cases:
        print(
            f"{c['shape']:>6} {c['seed']:>4} {c['rules']:>1} {c['sold']['none']:>9} "
            f"{lanes_text(c['sold']):>17} {lanes_text(c['lift']):>15} {pct(c['share']):>6} "
            f"{pct(c['share_u']):>7} {lanes_text(c['moved']):>17} {lanes_text(c['cost'], '.0f'):>17} "
            f"{len(c['violations']):>4} {lanes_text(c['overdrawn']):>8} {lanes_text(c['resent']):>8} "
            f"{'yes' if c['deterministic'] else 'NO':>3}"
        )
        if c["violations"]:
            print("          violations:", ", ".join(sorted(set(c["violations"]))))


def spread(values: list[float], fmt: str) -> str:
    a = np.asarray(values, dtype=np.float64)
    a = a[np.isfinite(a)]
    if a.shape[0] == 0:
        return "n/a"
    return f"{format(a.min(), fmt)} / {format(float(np.median(a)), fmt)} / {format(a.max(), fmt)}"


def print_spreads(cases: list[dict], weeks: int) -> None:
    """min / median / max over seeds, per rule set and over both."""
    print("\nSummary, min / median / max over seeds")
    for label in ("A", "B", "A+B"):
        group = [c for c in cases if c["rules"] in label]
        if not group:
            continue
        print(f"rules {label} ({len(group)} runs of {weeks} weeks):")
        for lane in LANES:
            if lane not in group[0]["sold"]:
                continue
            print(
                f"  {lane:>9}: sold {spread([c['sold'][lane] for c in group], '.0f')}; "
                f"lift {spread([c['lift'][lane] for c in group], '.0f')}; "
                f"moved {spread([c['moved'][lane] for c in group], '.0f')}; "
                f"cost {spread([c['cost'][lane] for c in group], '.1f')}"
            )
        print(
            f"  engine's lift / oracle's (equal units): {spread([c['share'] for c in group], '.1%')}; "
            f"/ unlimited oracle's: {spread([c['share_u'] for c in group], '.1%')}"
        )
    if "vs_oracle" in cases[0]["weeks"][0]:
        print("engine batch net vs oracle's at equal units, per week, over every seed x rule set:")
        for w in range(weeks):
            print(f"  week {w + 1}: {spread([c['weeks'][w]['vs_oracle'] for c in cases], '.1%')}")
        if weeks > 1:
            later = [r["vs_oracle"] for c in cases for r in c["weeks"][1:]]
            print(f"  weeks 2-{weeks} pooled: {spread(later, '.1%')}")


def solves(cases: list[dict]) -> list[tuple[str, float]]:
    """Every oracle solve: (where, distance to its proven bound)."""
    found = []
    kinds = (("gap", "measure"), ("o_gap", "oracle policy"), ("u_gap", "unlimited policy"))
    for c in cases:
        for r in c["weeks"]:
            for key, kind in kinds:
                if key in r and not (key == "o_gap" and r["week"] == 1):  # week 1: the measure's solve
                    found.append((f"seed {c['seed']} rules {c['rules']} week {r['week']} {kind}", r[key]))
    return found


def print_gaps(cases: list[dict]) -> None:
    """The oracle's distance to its bound: every solve beyond GAP_WARN is said, none hidden."""
    found = solves(cases)
    if not found:
        return
    far = [(where, gap) for where, gap in found if not gap <= GAP_WARN]
    gaps = np.array([gap for _, gap in found])
    finite = gaps[np.isfinite(gaps)]
    limited = sum(len(r["limited"]) for c in cases for r in c["weeks"])
    spread_text = spread(list(finite), ".2%") if finite.shape[0] else "n/a"
    print(
        f"oracle solves: {len(found)}; distance to the bound HiGHS proved on the whole program, "
        f"min / median / max: {spread_text}; NOT within {GAP_WARN:.0%} of it: {len(far)} (marked ! "
        f"above; no plan found: {int((~np.isfinite(gaps)).sum())}); took the whole time limit: {limited}"
    )
    for label, first in (("week 1", True), ("weeks 2+", False)):
        part = [gap for where, gap in found if (" week 1 " in where) == first]
        if part:
            print(f"  {label}: {spread(part, '.2%')}")
    for where, gap in far if len(far) <= 12 else [max(far, key=lambda f: f[1])]:
        print(f"  {'' if len(far) <= 12 else 'farthest: '}{where}: {gap_text(gap)}")


def print_checks(cases: list[dict]) -> bool:
    """The 0-checks and the oracle's distance to its bound; True when nothing failed."""
    violations = sum(len(c["violations"]) for c in cases)
    played = [n for n in LANES if n in cases[0]["sold"]]
    overdrawn = {n: sum(c["overdrawn"][n] for c in cases) for n in played}
    resent = {n: sum(c["resent"][n] for c in cases) for n in played}
    det = all(c["deterministic"] for c in cases)
    print(
        f"rule violations (engine): {violations}; deterministic (engine twice on week 1): {det}"
        f"\nunits overdrawn (none/engine/oracle/unlimited): {'/'.join(str(overdrawn.get(n, '-')) for n in LANES)}"
        f"\nunits re-sent to cells covered, on the true rates, by stock + in transit "
        f"(engine/oracle/unlimited): {lanes_text(resent)}; units in transit at the weekly snapshots "
        f"(engine): {sum(r['transit'] for c in cases for r in c['weeks'])}"
    )
    print_gaps(cases)
    return violations == 0 and sum(overdrawn.values()) == 0 and det


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds per rule set")
    parser.add_argument("--weeks", type=int, default=8, help="weeks played")
    parser.add_argument("--shape", type=parse_shape, default=SHAPES[0], help="10x20, 16x30 or SxP")
    parser.add_argument("--lead-days", type=int, default=3, help="days from approval to arrival")
    parser.add_argument("--oracle-seconds", type=float, default=ORACLE_TIME_LIMIT, help="per solve")
    parser.add_argument(
        "--first-week-seconds", type=float, default=3 * ORACLE_TIME_LIMIT, help="per solve of week 1"
    )
    parser.add_argument("--no-oracle", action="store_true", help="no oracle policies nor measures")
    parser.add_argument("--equal-only", action="store_true", help="skip the unlimited oracle policy")
    parser.add_argument("--first-seed", type=int, default=1000, help="first seed (the others follow it)")
    parser.add_argument(
        "--no-ledger",
        action="store_true",
        help="the engine without the receipts (stock-out days, units received)",
    )
    given = parser.add_mutually_exclusive_group()
    given.add_argument(
        "--true-rates", action="store_true", help="the engine plans on the true rates (the planning alone)"
    )
    given.add_argument(
        "--informed-rates",
        choices=("demand", "sales"),
        help="the engine plans on the best estimate the days played allow, from their demand uncapped "
        "by stock or from their sales (benchmarks/simulate_informed.py)",
    )
    parser.add_argument(
        "--no-outcome", action="store_true", help="the engine without what its moved units sold (ASI)"
    )
    parser.add_argument(
        "--history-days",
        type=int,
        default=ESTIMATE_HISTORY_DAYS,
        help=f"days of sales the estimate reads, at most ({HISTORY_DAYS}: the window alone)",
    )
    parser.add_argument(
        "--stock-days",
        action="store_true",
        help="the engine told each cell's days out of stock, as a stock import kept every day would",
    )
    args = parser.parse_args(argv)
    if args.weeks < 1 or args.lead_days < 0:
        parser.error("--weeks must be >= 1 and --lead-days >= 0")
    opts = Options(
        args.weeks,
        args.lead_days,
        not args.no_oracle,
        not args.equal_only,
        args.oracle_seconds,
        args.first_week_seconds,
        not args.no_ledger,
        args.true_rates,
        args.informed_rates,
        not args.no_outcome,
        max(args.history_days, HISTORY_DAYS),
        args.stock_days,
    )
    t0 = time.perf_counter()
    print(
        f"{args.weeks} weeks after {HISTORY_DAYS} days of history, shape {args.shape.name}, lead time "
        f"{args.lead_days} days, CDs topped up weekly to their starting stock, oracle "
        f"{f'{args.oracle_seconds:g} s per solve ({args.first_week_seconds:g} s in week 1)' if opts.oracle else 'off'}. "
        f"Load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs."
    )
    cases = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        for variant in (0, 1):
            cases.append(run_case(args.shape, seed, variant, opts))
            print_weeks(cases[-1])
    if not cases:
        return 0
    print_horizon(cases)
    print_spreads(cases, args.weeks)
    ok = print_checks(cases)
    print(f"wall {time.perf_counter() - t0:.0f} s; load average at the end {os.getloadavg()[0]:.1f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
