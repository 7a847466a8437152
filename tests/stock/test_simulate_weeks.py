"""The multi-week simulator (``benchmarks/simulate_weeks.py``) on a tiny network.

4 stores and a CD, 5 products, 3 weeks: well under a second per run. Seed 7 is a world where
the engine's transfers sell more than no transfers at all under both rule sets (lift 109 units
under rules A, 50 under B, at the time of writing); the test asserts only that the lift is
positive.
"""

from __future__ import annotations

import functools
import importlib.util
import pathlib
import sys
from dataclasses import replace

import numpy as np
import pytest

from services.stock.engine_demand import estimate_demand

SEED = 7


@functools.lru_cache(maxsize=1)
def _weeks():
    path = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "simulate_weeks.py"
    spec = importlib.util.spec_from_file_location("simulate_weeks", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while loading
    spec.loader.exec_module(module)
    return module


def _run(variant: int, lead_days: int = 3) -> dict:
    sim = _weeks()
    opts = sim.Options(weeks=3, lead_days=lead_days, oracle=False)
    return sim.run_case(sim.parse_shape("4x5"), SEED, variant, opts)


def _figures(case: dict) -> tuple:
    weeks = [(r["recs"], r["units"], r["net"], r["sold"]) for r in case["weeks"]]
    return weeks, case["sold"], case["moved"], case["cost"], case["resent"]


@pytest.mark.parametrize("variant", [0, 1])
def test_weeks_of_engine_batches_hold_the_rules_and_sell_more_than_no_transfers(variant):
    case = _run(variant)
    assert len(case["weeks"]) == 3
    assert case["violations"] == []
    assert case["overdrawn"] == {"none": 0, "engine": 0}
    assert case["deterministic"]  # the engine twice on week 1
    assert _figures(_run(variant)) == _figures(case)  # the whole run, for the same seed
    assert case["moved"]["engine"] > 0
    assert case["lift"]["engine"] > 0


def test_a_lead_time_beyond_a_week_leaves_units_in_transit_at_the_snapshots():
    case = _run(0, lead_days=10)
    assert sum(r["transit"] for r in case["weeks"][1:]) > 0
    assert case["violations"] == []
    assert case["overdrawn"]["engine"] == 0


def test_the_command_line_exits_0_when_every_check_holds(capsys):
    args = ["--seeds", "1", "--weeks", "3", "--shape", "4x5", "--no-oracle", "--first-seed", str(SEED)]
    assert _weeks().main(args) == 0
    out = capsys.readouterr().out
    assert "rule violations (engine): 0" in out
    assert "Load average" in out


@pytest.mark.parametrize("variant", [0, 1])
def test_the_oracle_solves_its_whole_program_to_within_1_percent_of_its_bound(variant):
    """On the tiny network HiGHS proves the oracle's plan within 1 % of the bound of the whole
    integer program, and that plan, measured on the true rates, nets at least the engine's
    planning on the same true rates with the same units (the rules then read the same for both,
    the engine's bar the stricter), up to its 1 % (on a network this small the engine solves its
    own routes exactly), and overdraws no origin."""
    sim = _weeks()
    opts = sim.Options(weeks=2, oracle=True, unlimited=False, oracle_seconds=20, true_rates=True)
    case = sim.run_case(sim.parse_shape("4x5"), SEED, variant, opts)
    for week in case["weeks"]:
        assert week["gap"] <= 0.01
        assert week["oracle"] >= 0.99 * week["net"]
    assert case["overdrawn"]["oracle"] == 0
    assert case["lift"]["oracle"] > 0


def test_the_engine_hears_what_its_moved_units_sold_once_their_window_is_over():
    """Two stores each received 10 units with nothing of their own on the shelf: one sold none of
    them, the other all. Once their 14 days are over the engine reads both (the units moved and,
    of them, the sold), and its rates in that category fall at the first store and rise at the
    second against the same estimate without them; a window still open says nothing yet."""
    sim = _weeks()
    base = sim.build_world(sim.parse_shape("4x5"), SEED)
    inputs = base.inputs
    stock = inputs.stock.copy()
    days = [np.zeros(stock.shape, dtype=np.int16) for _ in range(40)]
    for day in days[20:34]:
        day[1, 0] = 1  # store 1 sells one unit a day of item 0 once the transfer is on the shelf
    lane = sim.Lane(stock, days, day=34)
    for store in (0, 1):
        lane.transfers.append(sim.Transfer(store, 0, 10, batch_day=17, start=20, dest_stock=0, ahead=0))
    measured = sim.outcomes(lane, 14)
    assert measured.dest.tolist() == [0, 1] and measured.item.tolist() == [0, 0]
    assert measured.units.tolist() == [10, 10] and measured.sold.tolist() == [0, 10]
    assert measured.before.tolist() == [0, 0]
    without = estimate_demand(inputs).rate
    rate = estimate_demand(replace(inputs, outcomes=measured)).rate
    category = inputs.product_category[inputs.item_product]
    for store, lower in ((0, True), (1, False)):
        rated = (category == category[0]) & (without[store] > 0)
        assert rated.any()
        assert np.all((rate[store, rated] < without[store, rated]) == lower), (
            store,
            rate[store],
            without[store],
        )
    assert sim.outcomes(sim.Lane(stock, days, day=33, transfers=lane.transfers), 14) is None


def test_the_best_estimate_the_data_allow_reads_every_day_played_of_the_lane():
    """``--informed-rates``: the engine's lane records each day's demand, the stock it began with
    and its multiplier, so that the informed posterior reads the weeks played as well as the
    history; more days of uncapped demand bring it closer to the true rates, and the weeks
    played on it hold every rule."""
    sim = _weeks()
    shape = sim.parse_shape("10x20")
    base = sim.build_world(shape, SEED, record_demand=True)
    truth = base.truth
    lane = sim.Lane(truth.stock.copy(), list(truth.daily_sales))
    lane.record = (list(truth.daily_demand), list(truth.daily_stock), list(truth.daily_exposure))
    uniforms = sim.demand_uniforms(SEED, 3 * sim.WEEK_DAYS, truth.stock.shape)
    cd_start = truth.stock[base.inputs.node_is_cd].copy()
    for _ in range(3):
        sim.play_week(lane, base, uniforms, cd_start)
    played = sim.HISTORY_DAYS + 3 * sim.WEEK_DAYS
    assert [len(days) for days in lane.record] == [played] * 3 and len(lane.ledger) == played
    world = sim.snapshot(base, lane, 4)
    live = (truth.rate > 0) & ~base.inputs.node_is_cd[:, None]

    def log_error(days: int) -> float:
        demand = sim.informed(world, "demand", days)
        mean = demand.rate * demand.alive
        return float(np.median(np.abs(np.log(np.maximum(mean[live], 1e-9) / truth.rate[live]))))

    assert log_error(played) < 0.9 * log_error(sim.HISTORY_DAYS)

    opts = sim.Options(weeks=2, oracle=False, informed="sales")
    case = sim.run_case(sim.parse_shape("4x5"), SEED, 1, opts)
    assert case["violations"] == [] and case["overdrawn"]["engine"] == 0
    assert case["lift"]["engine"] > 0


def test_told_each_days_stock_the_engine_reads_the_days_its_shelves_were_empty():
    """``--stock-days``: over two weeks of batches executed (units sent, in transit, received)
    the days out of stock the engine is told are those each cell began empty, to the day; the
    history's mid-window restock, which the database alone cannot show, adds days out of stock
    the last-sale rule does not count."""
    sim = _weeks()
    base = sim.build_world(sim.parse_shape("10x20"), SEED, record_demand=True)
    truth = base.truth
    lane = sim.Lane(truth.stock.copy(), list(truth.daily_sales))
    lane.record = (list(truth.daily_demand), list(truth.daily_stock), list(truth.daily_exposure))
    uniforms = sim.demand_uniforms(SEED, 2 * sim.WEEK_DAYS, truth.stock.shape)
    cd_start = truth.stock[base.inputs.node_is_cd].copy()
    opts = sim.Options(weeks=2, oracle=False, stock_days=True)
    for week in (1, 2):
        row, _ = sim.engine_week(base, lane, week, opts)
        assert row["units"] > 0 and row["violations"] == []
        sim.play_week(lane, base, uniforms, cd_start)
    told = sim.snapshot(base, lane, 3, stock_days=True).inputs
    stores = ~base.inputs.node_is_cd  # a CD's weekly refill is no sale: it has no demand to censor
    began = np.stack(lane.record[1])[:, stores]
    assert told.receipt_out_days[stores].tolist() == (began[-sim.HISTORY_DAYS :] <= 0).sum(axis=0).tolist()
    assert told.receipt_out_recent[stores].tolist() == (began[-sim.RECENT_DAYS :] <= 0).sum(axis=0).tolist()
    by_default = sim.snapshot(base, lane, 3).inputs
    stocked = by_default.stock > 0  # in stock all along, by the last-sale rule
    assert (told.estimate_history.receipt_out_days[stocked] > 0).sum() > 0
