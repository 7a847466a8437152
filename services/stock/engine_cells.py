"""What every cell holds and may sell over the horizon: the values the planning shares.

Part of the engine's planning (``engine_plan``, ``docs/engine.md`` §2-3): computed once per
batch from the snapshot, the rules and the demand estimate, then read by the planning, the
route pruning, the top-up of paid routes (``engine_topup``) and each shipment's figures; and
what each unit received or given is worth at a cell (``unit_gains``, ``unit_losses``), which
the top-up and the local search (``engine_polish``) value their moves with.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from services.stock.engine_contract import EngineInput, EngineRules
from services.stock.engine_demand import (
    Demand,
    by_product,
    expected_sales,
    key_sizes,
    pmf_step,
    prob_at_least,
    prob_exactly,
    product_matrix,
)
from services.stock.engine_runs import item_effects


def held_stock(inputs: EngineInput) -> np.ndarray:
    """Stock on hand plus units in transit to the cell: what it holds over the horizon."""
    stock = np.asarray(inputs.stock, dtype=np.int64)
    if inputs.in_transit is None:
        return stock
    return stock + np.maximum(np.asarray(inputs.in_transit, dtype=np.int64), 0)


def observed_product_sales(inputs: EngineInput) -> np.ndarray:
    """(N, P) units each node sold of each product over the window."""
    return by_product(product_matrix(inputs), np.asarray(inputs.sales, dtype=np.float64))


def origin_need(mu: np.ndarray, observed_mu: np.ndarray, is_cd: np.ndarray) -> np.ndarray:
    """Units a store keeps for itself: ceil(m), m its expected horizon demand, the higher of the
    estimated and the observed; CDs keep nothing back. No margin on top: what a store loses by
    giving a unit it might have sold is valued unit by unit against the bar (``shipment_values``),
    and a margin of sqrt(m) kept back units whose moves paid (``docs/engine.md`` §2)."""
    need = np.ceil(np.maximum(mu, observed_mu) - 1e-9)
    need[np.asarray(is_cd, dtype=bool)] = 0
    return need.astype(np.int64)


def origin_keeps(inputs: EngineInput, rules: EngineRules, mu: np.ndarray, sold: np.ndarray) -> np.ndarray:
    """(N, K) units each cell keeps for itself: ``origin_need``, and one unit of each key size of
    a product the store sold in the window (``sold``), so that its run stays whole. ``mu`` is the
    expected horizon demand (rate x alive x H). Units in transit to the cell count toward it."""
    days = max(int(inputs.history_days), 1)
    is_cd = np.asarray(inputs.node_is_cd, dtype=bool)
    observed_mu = np.asarray(inputs.sales, dtype=np.float64) / days * rules.horizon_days
    keep = origin_need(mu, observed_mu, is_cd)
    return np.where(sold & key_sizes(inputs)[None, :] & ~is_cd[:, None], np.maximum(keep, 1), keep)


def run_factor(inputs: EngineInput, held: np.ndarray, effect: np.ndarray | None = None) -> np.ndarray:
    """(N, K) share of its complete-run demand each cell sells with the key sizes ``held`` has;
    ``effect`` (K,) is each item's broken-run effect (``Demand.run_effect``)."""
    key = key_sizes(inputs)
    if not key.any():
        return np.ones(held.shape)
    item_product = np.asarray(inputs.item_product, dtype=np.int64)
    a_mat = product_matrix(inputs)
    n_key = np.bincount(item_product, weights=key.astype(np.float64), minlength=a_mat.shape[1])
    missing = by_product(a_mat, (key[None, :] & (held <= 0)).astype(np.float64))
    share = (missing / np.maximum(n_key, 1.0)[None, :])[:, item_product]
    return 1.0 - item_effects(effect, item_product.shape[0])[None, :] * share


def run_uplift(
    inputs: EngineInput,
    held: np.ndarray,
    mean_mu: np.ndarray,
    dispersion: np.ndarray | None = None,
    effect: np.ndarray | None = None,
) -> np.ndarray:
    """(N, K) expected sales a key size with no stock would bring back to the rest of its run.

    The item's broken-run effect (``Demand.run_effect``) / (key sizes) of what the store's other
    sizes of the product are expected to sell; 0 for a size that is not key or has stock.
    """
    out = np.zeros(held.shape)
    key = key_sizes(inputs)
    if not key.any():
        return out
    item_product = np.asarray(inputs.item_product, dtype=np.int64)
    a_mat = product_matrix(inputs)
    missing = key[None, :] & (held <= 0)
    # only the store x product pairs with a key size out: few, and the Poisson sums are costly
    broken = (by_product(a_mat, missing.astype(np.float64)) > 0)[:, item_product]
    rows, cols = np.nonzero(broken)
    if rows.shape[0] == 0:
        return out
    es = np.zeros(held.shape)
    phi = None if dispersion is None else dispersion[rows, cols]
    es[rows, cols] = expected_sales(held[rows, cols], mean_mu[rows, cols], phi)
    run_es = by_product(a_mat, es)[:, item_product]
    n_key = np.bincount(item_product, weights=key.astype(np.float64), minlength=a_mat.shape[1])
    share = np.where(
        n_key[item_product] > 0, item_effects(effect, key.shape[0]) / np.maximum(n_key, 1)[item_product], 0.0
    )
    return np.where(missing, share[None, :] * (run_es - es), 0.0)


@dataclass
class CellValues:
    """What every cell holds and may sell over the horizon: computed once per batch, shared by
    the planning, the route pruning and each shipment's figures (the run uplift is costly)."""

    held: np.ndarray  # (N, K) stock on hand plus units in transit to the cell
    mu: np.ndarray  # (N, K) expected horizon demand while its customers buy the size, run as held
    alive: np.ndarray  # (N, K) probability its customers buy the size
    uplift: np.ndarray  # (N, K) run_uplift: what a missing key size brings back to its run
    dispersion: np.ndarray | None  # (N, K) negative binomial dispersion of mu (None: Poisson)
    sold: np.ndarray  # (N, K) the store sold the cell's product (any size) in the window
    keep: np.ndarray  # (N, K) origin_keeps: units the cell keeps for itself


def cell_values(inputs: EngineInput, rules: EngineRules, demand: Demand) -> CellValues:
    held = held_stock(inputs)
    mu = (
        np.asarray(demand.rate, dtype=np.float64)
        * rules.horizon_days
        * run_factor(inputs, held, demand.run_effect)
    )
    alive = np.asarray(demand.alive, dtype=np.float64)
    phi = None if demand.dispersion is None else np.asarray(demand.dispersion, dtype=np.float64)
    item_product = np.asarray(inputs.item_product, dtype=np.int64)
    sold = (observed_product_sales(inputs) > 0)[:, item_product]
    expected = mu * alive  # the horizon demand, a size nobody buys counting for nothing
    keep = origin_keeps(inputs, rules, expected, sold).astype(np.int32)
    return CellValues(
        held, mu, alive, run_uplift(inputs, held, expected, phi, demand.run_effect), phi, sold, keep
    )


def unit_gains(
    held: np.ndarray,
    mu: np.ndarray,
    phi: np.ndarray | None,
    alive: np.ndarray,
    uplift: np.ndarray,
    q_cap: int,
) -> np.ndarray:
    """(n, q_cap) what the j-th unit received adds at each cell: alive x P(D >= held + j), the
    first also the run it completes."""
    out = np.empty((held.shape[0], q_cap))
    h = held.astype(np.float64)
    tail = prob_at_least(h + 1.0, mu, phi)
    pmf = prob_exactly(h + 1.0, mu, phi)
    for j in range(1, q_cap + 1):
        out[:, j - 1] = alive * tail
        tail = np.maximum(tail - pmf, 0.0)
        pmf = pmf * pmf_step(h + j, mu, phi) / (h + j + 1.0)
    out[:, 0] += uplift
    return out


def unit_losses(
    held: np.ndarray, mu: np.ndarray, phi: np.ndarray | None, alive: np.ndarray, q_cap: int
) -> np.ndarray:
    """(n, q_cap) what the j-th unit given loses at each store cell: alive x P(D >= held - j + 1)."""
    out = np.empty((held.shape[0], q_cap))
    h = held.astype(np.float64)
    tail = prob_at_least(h, mu, phi)
    pmf = prob_exactly(np.maximum(h - 1.0, 0.0), mu, phi) * (h >= 1)
    for j in range(1, q_cap + 1):
        out[:, j - 1] = alive * np.minimum(tail, 1.0)
        x = h - j  # the next unit loses P(D >= x)
        tail = tail + pmf
        with np.errstate(divide="ignore", invalid="ignore"):
            pmf = np.where(x >= 1, pmf * x / pmf_step(np.maximum(x - 1.0, 0.0), mu, phi), 0.0)
    return out
