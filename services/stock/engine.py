"""The transfer recommendation engine.

``recommend(inputs, rules)`` turns a stock snapshot, the sales history, the
node coordinates, the campaigns and the rules into one batch of transfers.
It works on dense numpy arrays only (no database, no ids) and is
deterministic: the same inputs give the same batch, in the same order.

Three modules, one job each (``docs/engine.md`` has the full write-up):

1. ``engine_demand``: each cell's daily rate (pooled, with stock-out days left
   out) and the probability that its customers buy the size at all.
2. ``engine_plan``: which units move, in which lots, from which origins, net
   of what origins lose and of shipping costs; rules held on every shipment.
3. this module: each shipment's figures, a 0-100 score from the weighted
   distance, turnover and stock components times the learning factors, a
   priority from the days to stock-out, a Portuguese justification, and the
   output in its documented order.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from services.stock.engine_cells import CellValues, cell_values
from services.stock.engine_contract import EngineInput, EngineOutput, EngineRules
from services.stock.engine_demand import (
    Demand,
    distance_matrix,
    estimate_daily_demand,
    estimate_demand,
    expected_sales,
    haversine_km,
    item_run_effects,
    prob_at_least,
)
from services.stock.engine_plan import cd_keep_value, eligibility, shipment_cost, shipment_values
from services.stock.engine_plan import plan as make_plan
from services.stock.engine_routing import Plan

__all__ = [
    "ALTA_MAX_DAYS",
    "DAYS_CAP",
    "cd_keep_value",
    "eligibility",
    "estimate_daily_demand",
    "expected_sales",
    "haversine_km",
    "prob_at_least",
    "recommend",
    "shipment_cost",
]

# Distance at which the distance component of the score is one half.
DISTANCE_HALF_KM = 100.0
# Priorities from the destination's days to stock-out.
ALTA_MAX_DAYS = 7
DAYS_CAP = 999

PRIORITIES = np.array(["alta", "media", "baixa"])


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
    origin_in_transit: np.ndarray,
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
    for qi, ds, dob, des, dy, cd, os_, oob, sold, cov, left, need, coming, g, lo, dist, cdst, corg in zip(
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
        origin_in_transit.tolist(),
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
            coming_text = f" e tem {coming} un. a caminho" if coming > 0 else ""
            origin = (
                f"Origem loja com {os_} un. e venda média de {oob}/dia ({cover_text}); "
                f"fica com {left} un. após os envios deste lote{coming_text}, o que cobre sua "
                f"necessidade de {horizon} dias ({need} un.)."
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


class Justifications(Sequence[str]):
    """The justification of each recommendation, built on demand a chunk of lines at a time.

    A batch holds hundreds of thousands of texts of ~400 bytes: the batch writer builds
    them chunk by chunk while PostgreSQL stores the chunk before (on the other core), and
    never holds them all at once. The lines are those ``_justifications`` gives for the
    whole batch (each line depends only on its own row's figures).
    """

    CHUNK = 10_000

    def __init__(self, columns: dict[str, np.ndarray], *, history_days: int, horizon: int):
        self._columns = columns
        self._count = int(columns["q"].shape[0])
        self._texts = {"history_days": history_days, "horizon": horizon}
        self._start, self._lines = 0, []  # the chunk built last, for reads by index

    def _build(self, start: int) -> list[str]:
        stop = min(start + self.CHUNK, self._count)
        return _justifications(**{n: v[start:stop] for n, v in self._columns.items()}, **self._texts)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        for start in range(0, self._count, self.CHUNK):
            yield from self._build(start)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        i = operator.index(index)
        i = i + self._count if i < 0 else i
        if not 0 <= i < self._count:
            raise IndexError("justification index out of range")
        if not self._start <= i < self._start + len(self._lines):
            self._start = i - i % self.CHUNK
            self._lines = self._build(self._start)
        return self._lines[i - self._start]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compared by content, like a list


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
        expected_gain=f64.copy(),
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
    origin_need: np.ndarray  # units the origin keeps for itself (``origin_keeps``)
    origin_in_transit: np.ndarray  # units on their way to the origin, counted toward what it keeps


def _score(
    inputs: EngineInput, rules: EngineRules, plan: Plan, components: tuple[np.ndarray, ...]
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
    inputs: EngineInput, rules: EngineRules, plan: Plan, demand: Demand, cells: CellValues, dist: np.ndarray
) -> _Figures:
    o, d, k, q = plan.origin, plan.dest, plan.item, plan.quantity
    horizon = int(rules.horizon_days)
    history = max(int(inputs.history_days), 1)
    stock = np.asarray(inputs.stock, dtype=np.int64)
    sales = np.asarray(inputs.sales, dtype=np.float64)
    is_cd = np.asarray(inputs.node_is_cd, dtype=bool)
    rate = demand.mean
    o_stock, d_stock = stock[o, k], stock[d, k]
    d_est = rate[d, k]
    gain, loss = shipment_values(inputs, rules, cells, plan)
    # days of cover count the units already on their way to the destination
    d_held = cells.held[d, k]
    with np.errstate(divide="ignore", invalid="ignore"):
        days_f = np.where(d_est > 0, np.floor(d_held / d_est), DAYS_CAP)
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
        origin_need=cells.keep[o, k],
        origin_in_transit=cells.held[o, k] - o_stock,
    )


def recommend(
    inputs: EngineInput,
    rules: EngineRules,
    *,
    daily_rate: np.ndarray | None = None,
    demand: Demand | None = None,
    unit_budget: int | None = None,
) -> EngineOutput:
    """One batch of transfer recommendations for the snapshot in ``inputs``.

    ``daily_rate`` replaces the demand estimate (the simulator's oracle passes
    the true rates), ``demand`` gives the estimate already made (a partition of a
    batch computed apart from the network it was estimated on), ``unit_budget`` caps the units moved (the best units of
    the whole network are kept). ``rules.ganho_minimo`` is the net expected gain a moved
    unit must bring, and a minimum lot on average.
    """
    n_nodes, n_items = np.asarray(inputs.stock).shape
    if n_nodes == 0 or n_items == 0:
        return _empty_output()
    demand = _demand(inputs, daily_rate, demand)
    dist = distance_matrix(inputs)
    cells = cell_values(inputs, rules, demand)
    plan = make_plan(inputs, rules, demand, dist, unit_budget=unit_budget, cells=cells)
    if plan.origin.shape[0] == 0:
        return _empty_output()
    return _output(inputs, rules, plan, _figures(inputs, rules, plan, demand, cells, dist))


def _demand(inputs: EngineInput, daily_rate: np.ndarray | None, demand: Demand | None) -> Demand:
    """The demand the batch is planned for: the one given, the oracle's rates, or the estimate."""
    if demand is not None:
        return demand
    if daily_rate is None:
        return estimate_demand(inputs)
    rate = np.asarray(daily_rate, dtype=np.float64)
    return Demand(rate, np.ones(rate.shape), run_effect=item_run_effects(inputs))


def _output(inputs: EngineInput, rules: EngineRules, plan: Plan, f: _Figures) -> EngineOutput:
    """The planned transfers in the output's order: priority, score descending, then
    destination, item and origin."""
    order = np.lexsort((plan.origin, plan.item, plan.dest, -f.score, f.prio_rank))
    o, d, k, q = plan.origin[order], plan.dest[order], plan.item[order], plan.quantity[order]
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
        justification=_ordered_justifications(inputs, rules, f, order, o, k, q),
        expected_gain=f.gain[order].astype(np.float64),
    )


def _ordered_justifications(
    inputs: EngineInput,
    rules: EngineRules,
    f: _Figures,
    order: np.ndarray,
    o: np.ndarray,
    k: np.ndarray,
    q: np.ndarray,
) -> Justifications:
    """The justification of each transfer, in ``order`` (``o``, ``k``, ``q`` already in it): what
    an origin is left with counts every unit it sends of the item in the batch."""
    n_items = np.asarray(inputs.stock).shape[1]
    uniq, inverse = np.unique(o * n_items + k, return_inverse=True)
    sent_total = np.bincount(inverse, weights=q, minlength=uniq.shape[0]).astype(np.int64)[inverse]
    return Justifications(
        dict(
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
            origin_in_transit=f.origin_in_transit[order],
            gain=f.gain[order],
            loss=f.loss[order],
            distance=f.distance[order],
            campaign_dest=f.campaign_dest[order],
            campaign_origin=f.campaign_origin[order],
        ),
        history_days=max(int(inputs.history_days), 1),
        horizon=int(rules.horizon_days),
    )
