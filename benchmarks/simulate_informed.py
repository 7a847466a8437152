"""``simulate_engine.py --informed-rates``: what 30 days of data can tell.

The oracle knows every cell's true rate. No estimate can: 30 days of Poisson
sales leave each cell's rate uncertain, whatever the estimator. This estimate
is told more than any retailer's data holds, so that what the engine still
loses with it is the part of the gap no estimator closes:

- the simulator's own prior: each store's and each product's level, which
  stores carry which product, every size's share of the run, each size's
  chance that a store's customers never buy it, the campaign lifts and the
  broken-run effect of each day's stock;
- with ``--informed-rates demand``, the demand of every day of the window,
  **not capped by the stock** (no stock-outs in its data); with
  ``--informed-rates sales``, the sales, and for each day which cells sold out
  (their demand was at least the stock the day began with: a censored count).

What it does not know is what the simulator draws per store and product (the
interaction, lognormal with σ 0.35) and per cell (whether its customers buy
the size, and the Poisson noise). It gives each cell the exact posterior of
its rate under that prior: the interaction on a grid of Gauss–Hermite nodes,
each size dead or alive given its count, pooled over the sizes of the store's
run of the product; the engine gets the posterior mean of a live cell's rate,
the probability that it is live (``alive``), and the posterior spread of the
rate as the negative binomial's dispersion.

With ``sales`` it does not read the stock itself: a size a store was never
given is more often one nobody buys there than the prior says (the simulator
allocates stock by demand, as buyers do), and this estimate keeps the prior's
chance for it. Its figures are a floor of what the sales can tell, not a
bound (``docs/engine.md`` §8, "Figures").
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln
from scipy.stats import poisson

from services.stock.engine_demand import Demand

GRID_NODES = 48


def informed_demand(
    counts: np.ndarray,
    exposure: np.ndarray,
    prior_rate: np.ndarray,
    dead_p: np.ndarray,
    lift: np.ndarray,
    item_product: np.ndarray,
    sigma: float,
    *,
    censored: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> Demand:
    """The posterior of every cell's rate over the horizon.

    ``counts`` (N, K): demand over the window; ``exposure`` (N, K): the sum over its days of
    the rate's multiplier (campaign lift, broken-run effect); ``prior_rate`` (N, K): the rate
    with the store x product interaction at its mean, every size live; ``dead_p`` (K,): each
    size's chance that a store's customers never buy it; ``lift`` (N, K): the campaign over the
    horizon; ``sigma``: the interaction's spread (log scale). ``censored`` holds the days that
    sold out, left out of ``counts`` and ``exposure``: (node, item, units the day began with, the
    day's multiplier) each, whose demand was at least those units.
    """
    nodes, weights = np.polynomial.hermite_e.hermegauss(GRID_NODES)
    weights = weights / weights.sum()
    factor = np.exp(-0.5 * sigma**2 + sigma * nodes)  # the interaction at each node, mean 1
    n = counts.astype(np.float64)[..., None]
    rate = prior_rate[..., None] * factor  # (N, K, G) a live cell's rate at each node
    mean = exposure[..., None] * rate
    with np.errstate(divide="ignore", invalid="ignore"):
        log_live = np.where(mean > 0, n * np.log(mean) - mean - gammaln(n + 1), np.where(n > 0, -np.inf, 0.0))
    never_sold = n == 0
    if censored is not None:
        node, item, at_least, day = censored
        day_mean = day[:, None] * rate[node, item]  # (C, G)
        np.add.at(log_live, (node, item), poisson.logsf(at_least[:, None] - 1, day_mean))
        never_sold[node, item] = False
    # a size that sold is live; one that never did is dead or live: its likelihood, in logs so
    # that no count far from a node's mean underflows
    p_dead = np.broadcast_to(dead_p[None, :, None], log_live.shape)
    live_zero = (1.0 - p_dead) * np.exp(np.where(never_sold, log_live, 0.0))
    log_cell = np.where(never_sold, np.log(live_zero + p_dead), np.log1p(-p_dead) + log_live)
    live_given = np.where(never_sold, live_zero / (live_zero + p_dead), 1.0)
    # the interaction is one draw per store and product: its likelihood is the product over sizes
    starts = np.r_[0, np.nonzero(np.diff(item_product))[0] + 1]
    log_post = np.add.reduceat(log_cell, starts, axis=1) + np.log(weights)
    top = log_post.max(axis=2, keepdims=True)
    post = np.exp(log_post - np.where(np.isfinite(top), top, 0.0))
    total = post.sum(axis=2, keepdims=True)
    post = np.where(total > 0, post / np.where(total > 0, total, 1.0), 0.0)[:, item_product, :]
    weight = post * live_given
    alive = weight.sum(axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.where(alive > 0, (weight * rate).sum(axis=2) / alive, 0.0)
        second = np.where(alive > 0, (weight * rate**2).sum(axis=2) / alive, 0.0)
        dispersion = np.where(first > 0, np.maximum(second - first**2, 0.0) / first**2, 0.0)
    live = first > 0
    return Demand(first * lift, np.where(live, alive, 0.0), dispersion)
