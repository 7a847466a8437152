"""The batch's routes and lots chosen together, where the network is small enough (docs/engine.md §4).

The greedy picks units, the routing their origins by trip, the local search moves one shipment or
one route at a time: a chain of moves (store 4 serves store 3, so that store 1's lot goes to store
0 and store 2's trip closes) is out of its reach. On the routes the plan pays, which origin serves
which destination cell with how many units, and which trips stay paid, is a small mixed-integer
program: concave gains at the destinations and convex losses at the origins as unit segments, a
semi-integer lot per shipment (0 or qtdMinima..qtdMaxima), a binary per route paying its trip,
at most the plan's units (how many is the bar's, §2). HiGHS solves it from the plan itself as
the first solution, on one thread with a fixed seed and a node limit, so that the batch is the
same every time and never worth less than the plan. An item whose store lots a CD could now send
whole (priorizarCd) keeps its old flows; the caller drops the routes left short of their trip and
keeps whichever plan adds more. Above ``REFLOW_MAX_COLUMNS`` the program is not built: the root of
a larger one takes longer than the whole batch may.
"""

from __future__ import annotations

from dataclasses import dataclass

import highspy
import numpy as np
from scipy import sparse

from services.stock.engine_cells import CellValues, unit_gains, unit_losses
from services.stock.engine_demand import expected_sales
from services.stock.engine_routing import ROUTING_PASSES, Destinations, Plan, expand_groups, group_starts

# Above this many columns the program is not built: a larger network keeps its local search alone.
REFLOW_MAX_COLUMNS = 12_000
# Branch-and-bound nodes the solver may explore, and the gap to its bound at which it stops: a
# count, not a time, so that the batch is the same on any machine and under any load.
REFLOW_MAX_NODES = 1
REFLOW_REL_GAP = 1e-3
# What a CD unit is preferred by under priorizarCd, where keeping it is worth nothing.
CD_PREFERENCE = 1e-6


def reflow(
    p: Plan,
    dest: Destinations,
    cells: CellValues,
    avail: np.ndarray,
    is_cd: np.ndarray,
    keep_cd: float,
    cost: np.ndarray,
    rules: tuple[bool, int, int, float],
) -> Plan:
    """The plan's lots and trips chosen again together over its routes, where that gains.
    ``avail`` is what each cell may give in all, ``dest`` the destination candidates, ``cost`` a
    trip's; ``rules`` is (priorizarCd, qtdMinima, qtdMaxima, the bar)."""
    if not 0 < p.origin.shape[0] <= REFLOW_MAX_COLUMNS:
        return p  # each shipment of the plan is a column: a batch at scale costs nothing here
    priorizar_cd, qmin = rules[0], rules[1]
    program = _program(p, dest, cells, avail, is_cd, keep_cd, cost, rules)
    if program is None:
        return p
    x = _solve(program)
    if x is None:
        return p
    q = np.rint(x).astype(np.int64)
    keep = q >= qmin
    new = Plan(program.o[keep], program.d[keep], program.k[keep], q[keep])
    if priorizar_cd:
        # an item whose store lots a CD could now send whole keeps its old flows
        passed = _cd_passed_over(new, avail, is_cd)
        new = Plan.joined([p.take(passed[p.item]), new.take(~passed[new.item])])
    return new


@dataclass
class _Program:
    """The program, minimising c x: shipments (semi-integer lots, 0 or qtdMinima..qtdMaxima)
    first, then destination and origin unit segments, then a binary per route."""

    o: np.ndarray  # each shipment column's origin, destination and item
    d: np.ndarray
    k: np.ndarray
    c: np.ndarray
    a: sparse.csc_matrix
    row_lo: np.ndarray
    row_hi: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    kind: np.ndarray  # 0 continuous, 1 integer, 3 semi-integer
    start: np.ndarray  # the plan as a feasible solution
    n_x: int


def _solve(program: _Program) -> np.ndarray | None:
    """Each shipment's units in the best plan found from the plan's own (HiGHS, one thread, a
    fixed seed and a node limit: the same batch every time); None if none."""
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = program.a.shape[1], program.a.shape[0]
    lp.col_cost_ = program.c
    lp.col_lower_ = program.lo
    lp.col_upper_ = program.hi
    lp.row_lower_ = np.maximum(program.row_lo, -highspy.kHighsInf)
    lp.row_upper_ = program.row_hi
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = program.a.indptr
    lp.a_matrix_.index_ = program.a.indices
    lp.a_matrix_.value_ = program.a.data
    kinds = {0: highspy.HighsVarType.kContinuous, 1: highspy.HighsVarType.kInteger,
             3: highspy.HighsVarType.kSemiInteger}  # fmt: skip
    lp.integrality_ = [kinds[int(t)] for t in program.kind]
    h = highspy.Highs()
    for name, value in (
        ("output_flag", False), ("threads", 1), ("random_seed", 0),
        ("mip_max_nodes", REFLOW_MAX_NODES), ("mip_rel_gap", REFLOW_REL_GAP),
    ):  # fmt: skip
        h.setOptionValue(name, value)
    h.passModel(lp)
    h.setSolution(_solution(program))
    h.run()
    if h.getInfo().primal_solution_status != 2:  # kSolutionStatusFeasible
        return None
    return np.asarray(h.getSolution().col_value)[: program.n_x]


def _solution(program: _Program):
    solution = highspy.HighsSolution()
    solution.col_value = program.start.tolist()
    solution.value_valid = True
    return solution


def _program(
    p: Plan,
    dest: Destinations,
    cells: CellValues,
    avail: np.ndarray,
    is_cd: np.ndarray,
    keep_cd: float,
    cost: np.ndarray,
    rules: tuple[bool, int, int, float],
) -> _Program | None:
    """The program on the plan's routes, with the plan as its first solution; None when it has
    no shipment or more than ``REFLOW_MAX_COLUMNS`` columns."""
    qmin, qmax = rules[1], rules[2]
    n_nodes, n_items = cells.held.shape
    found = _shipments(p, dest, avail, qmin, rules[3])
    if found is None:
        return None
    o, d, k, cell, d_cells = found
    o_cells, o_row = np.unique(o * n_items + k, return_inverse=True)
    d_seg, o_seg = _unit_segments(cells, d_cells, cell, o_cells, o_row, avail, is_cd, keep_cd, rules)
    n_x, n_d, n_o = o.shape[0], d_seg.row.shape[0], o_seg.row.shape[0]
    if n_x + n_d + n_o > REFLOW_MAX_COLUMNS:
        return None
    n_dc, n_flow = d_cells.shape[0], d_cells.shape[0] + o_cells.shape[0]
    x_cols = np.arange(n_x)
    # a binary per route, paying its trip: a shipment rides only an open route
    r_cells, route_of = np.unique(o * n_nodes + d, return_inverse=True)
    n_r = r_cells.shape[0]
    top = np.minimum(avail[o, k], qmax).astype(np.float64)
    # rows: destination cells (in - segments = 0), origin cells (out - segments = 0), then
    # x - top * route <= 0 for each shipment, and no more units than the plan moves (how many is
    # the bar's, docs/engine.md §2)
    y_cols = n_x + n_d + n_o + route_of
    rows = np.r_[cell, n_dc + o_row, d_seg.row, n_dc + o_seg.row, n_flow + x_cols, n_flow + x_cols]
    rows = np.r_[rows, np.full(n_x, n_flow + n_x)]
    cols = np.r_[x_cols, x_cols, n_x + np.arange(n_d), n_x + n_d + np.arange(n_o), x_cols, y_cols, x_cols]
    vals = np.r_[np.ones(2 * n_x), -np.ones(n_d + n_o), np.ones(n_x), -top, np.ones(n_x)]
    n_cols = n_x + n_d + n_o + n_r
    start = np.zeros(n_cols)
    keys = (o * n_nodes + d) * n_items + k
    order = np.argsort(keys, kind="stable")
    plan_keys = (p.origin * n_nodes + p.dest) * n_items + p.item
    plan_cols = order[np.minimum(np.searchsorted(keys, plan_keys, sorter=order), n_x - 1)]
    if (keys[plan_cols] != plan_keys).any():
        return None  # a shipment of the plan the program cannot make: no first solution
    # the plan as the first solution: its lots, its routes, each cell's units in segment order
    start[plan_cols] = p.quantity
    into = np.bincount(cell, weights=start[:n_x], minlength=n_dc)
    start[n_x : n_x + n_d] = np.clip(into[d_seg.row] - d_seg.before, 0, d_seg.width)
    out_of = np.bincount(o_row, weights=start[:n_x], minlength=o_cells.shape[0])
    start[n_x + n_d : n_x + n_d + n_o] = np.clip(out_of[o_seg.row] - o_seg.before, 0, o_seg.width)
    start[n_x + n_d + n_o + np.unique(route_of[plan_cols])] = 1.0
    return _Program(
        o, d, k,
        c=np.r_[np.zeros(n_x), -d_seg.value, o_seg.value, cost.ravel()[r_cells]],
        a=sparse.csc_matrix((vals, (rows, cols)), shape=(n_flow + n_x + 1, n_cols)),
        row_lo=np.r_[np.zeros(n_flow), np.full(n_x, -np.inf), 0.0],
        row_hi=np.r_[np.zeros(n_flow + n_x), float(p.quantity.sum())],
        lo=np.r_[np.full(n_x, float(qmin)), np.zeros(n_d + n_o + n_r)],
        hi=np.r_[top, d_seg.width, o_seg.width, np.ones(n_r)],
        kind=np.r_[np.full(n_x, 3), np.zeros(n_d + n_o), np.ones(n_r)].astype(np.int8),
        start=start,
        n_x=n_x,
    )  # fmt: skip


def _shipments(
    p: Plan, dest: Destinations, avail: np.ndarray, qmin: int, bar: float
) -> tuple[np.ndarray, ...] | None:
    """The shipments the program may make: every destination cell (the plan's, and the candidates
    it leaves out that give nothing) from every origin of a route of the plan into its node that
    may give a lot of the item and receives none. (origin, destination, item, each one's
    destination cell, the destination cells as node x K + item); None past the column limit."""
    n_nodes, n_items = avail.shape
    receives = np.zeros((n_nodes, n_items), dtype=bool)
    receives[p.dest, p.item] = True
    gives = np.zeros((n_nodes, n_items), dtype=bool)
    gives[p.origin, p.item] = True
    left_out = ~receives[dest.node, dest.item] & ~gives[dest.node, dest.item] & (dest.urgency >= bar)
    d_cells = np.unique(np.r_[p.dest * n_items + p.item, dest.node[left_out].astype(np.int64) * n_items
                              + dest.item[left_out]])  # fmt: skip
    dn, dk = d_cells // n_items, d_cells % n_items
    is_dest = np.zeros((n_nodes, n_items), dtype=bool)
    is_dest[dn, dk] = True
    routes = np.unique(p.dest * n_nodes + p.origin)  # by destination
    r_dest, r_origin = routes // n_nodes, routes % n_nodes
    counts, starts = group_starts(r_dest, n_nodes)
    if counts[dn].sum() > REFLOW_MAX_COLUMNS:
        return None
    cell, pos = expand_groups(counts[dn])
    o = r_origin[starts[dn[cell]] + pos - 1]
    d, k = dn[cell], dk[cell]
    ok = (avail[o, k] >= qmin) & ~is_dest[o, k]  # a node that receives an item never sends it
    if not ok.any():
        return None
    return o[ok], d[ok], k[ok], cell[ok], d_cells


def _unit_segments(
    cells: CellValues,
    d_cells: np.ndarray,
    cell: np.ndarray,
    o_cells: np.ndarray,
    o_row: np.ndarray,
    avail: np.ndarray,
    is_cd: np.ndarray,
    keep_cd: float,
    rules: tuple[bool, int, int, float],
) -> tuple[_Segments, _Segments]:
    """What each unit a destination cell receives adds (up to what its origins can carry, at most
    ``ROUTING_PASSES`` lots), and what each unit an origin cell gives loses (up to what it may
    give over its routes; a CD: the value of keeping it), as segments."""
    priorizar_cd, qmax = rules[0], rules[2]
    n_items = cells.held.shape[1]
    phi = cells.dispersion
    dn, dk = d_cells // n_items, d_cells % n_items
    j_dest = np.minimum(np.bincount(cell, minlength=d_cells.shape[0]) * qmax, qmax * ROUTING_PASSES)
    gains = unit_gains(
        cells.held[dn, dk], cells.mu[dn, dk], None if phi is None else phi[dn, dk], cells.alive[dn, dk],
        cells.uplift[dn, dk], int(j_dest.max()),
    )  # fmt: skip
    on, ok_ = o_cells // n_items, o_cells % n_items
    j_orig = np.minimum(avail[on, ok_], np.bincount(o_row) * qmax)
    losses = unit_losses(
        cells.held[on, ok_].astype(np.float64), cells.mu[on, ok_], None if phi is None else phi[on, ok_],
        cells.alive[on, ok_], int(j_orig.max()),
    )  # fmt: skip
    # a cell expected to sell nothing loses nothing (the recursion divides by its mean)
    losses = np.where(cells.mu[on, ok_][:, None] > 0, np.nan_to_num(losses, nan=np.inf), 0.0)
    cd_loss = keep_cd - (CD_PREFERENCE if priorizar_cd else 0.0)
    losses = np.where(is_cd[on][:, None], cd_loss, losses)
    return _segments(gains, j_dest), _segments(losses, j_orig)


@dataclass
class _Segments:
    row: np.ndarray  # each segment's cell
    value: np.ndarray  # what each of its units is worth
    width: np.ndarray  # its units
    before: np.ndarray  # the cell's units in the segments before it


def _segments(values: np.ndarray, count: np.ndarray) -> _Segments:
    """The first ``count`` units of each row of ``values`` (per unit, monotone along the row) as
    segments, consecutive units of one value (to 1e-9; all of a CD's, a store's overstock) as one:
    the program keeps a column per value, not per unit."""
    row, j = np.nonzero(np.arange(values.shape[1])[None, :] < count[:, None])
    value = np.round(values[row, j], 9)
    first = np.r_[True, (row[1:] != row[:-1]) | (value[1:] != value[:-1])]
    starts = np.nonzero(first)[0]
    width = np.diff(np.r_[starts, row.shape[0]]).astype(np.float64)
    return _Segments(row[starts], value[starts], width, j[starts].astype(np.float64))


def plan_value(p: Plan, cells: CellValues, is_cd: np.ndarray, keep_cd: float, cost: np.ndarray) -> float:
    """What the plan adds at its destinations, less what its origins lose and each trip once,
    valued on the cells' totals."""
    if p.origin.shape[0] == 0:
        return 0.0
    n_nodes, n_items = cells.held.shape
    phi = cells.dispersion
    value = -float(cost.ravel()[np.unique(p.origin * n_nodes + p.dest)].sum())
    for nodes, sign in ((p.dest, 1.0), (p.origin, -1.0)):
        flat = np.bincount(nodes * n_items + p.item, weights=p.quantity, minlength=n_nodes * n_items)
        n, k = np.divmod(np.nonzero(flat)[0], n_items)
        q = flat[n * n_items + k]
        h, mu, f = cells.held[n, k].astype(np.float64), cells.mu[n, k], None if phi is None else phi[n, k]
        if sign > 0:
            worth = cells.alive[n, k] * (expected_sales(h + q, mu, f) - expected_sales(h, mu, f))
            worth += np.where(h <= 0, cells.uplift[n, k], 0.0)
        else:
            worth = cells.alive[n, k] * (expected_sales(h, mu, f) - expected_sales(h - q, mu, f))
            worth = np.where(is_cd[n], keep_cd * q, worth)
        value += sign * float(worth.sum())
    return value


def _cd_passed_over(p: Plan, avail: np.ndarray, is_cd: np.ndarray) -> np.ndarray:
    """(K,) items a store sends a lot of while a CD could still send it whole (priorizarCd)."""
    n_items = avail.shape[1]
    sent = np.zeros(avail.shape, dtype=np.int64)
    np.add.at(sent, (p.origin, p.item), p.quantity)
    cd_free = (avail[is_cd] - sent[is_cd]).max(axis=0, initial=0)
    store = ~is_cd[p.origin]
    bad = np.zeros(n_items, dtype=bool)
    bad[p.item[store & (cd_free[p.item] >= p.quantity)]] = True
    return bad
