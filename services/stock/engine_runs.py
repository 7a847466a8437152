"""How much a broken size run costs, fitted per category from the sales (docs/engine.md §1).

A store missing k of a product's n key sizes sells about ``1 - e k / n`` of its usual demand
of the sizes it still has. ``e`` is read from the sales: when a store's key sizes of a product
ran out during the last week and not before, the sizes still on its shelf sold less in that
week than in the weeks before, beyond what the category sold less (or more) lately everywhere.

Each cell's sales split between the last week and the days before it as a binomial: with ``A``
its days on the shelf in a period and ``m`` the share of its run's key sizes out then (each
cell's days as ``exposure`` counts them), the last week's share is
``tau A_r (1 - e m_r) / (tau A_r (1 - e m_r) + A_e (1 - e m_e))``; the cell's own level cancels.
``tau``, the category's last week against its weeks before, is fitted on the runs that stayed
as they were; ``e`` on the runs that broke (or were completed) during the window, on a grid.
The network's effect is the posterior mean under a prior centred on ``KEY_RUN_EFFECT``; each
category's is shrunk toward it with a between-category variance fitted by moments, so a
category with little evidence keeps the network's.
"""

from __future__ import annotations

import numpy as np

# A store missing k of its n key sizes of a product sells about (1 - e k / n) of its usual
# demand: e's prior mean, and its spread (a run missing half its key sizes selling 5-20 % less).
KEY_RUN_EFFECT = 0.25
RUN_EFFECT_PRIOR_SD = 0.1
RUN_EFFECT_GRID = np.linspace(0.0, 0.8, 33)
# A run counts as broken or completed during the window when its key-out share moved this much.
RUN_CHANGE = 0.05
TREND_ROUNDS = 8


def run_effects(
    x: np.ndarray,
    recent: np.ndarray,
    f: np.ndarray,
    f_recent: np.ndarray,
    days: int,
    recent_days: int,
    key_out: tuple[np.ndarray, np.ndarray],
    informative: np.ndarray,
    item_category: np.ndarray,
    n_categories: int,
) -> np.ndarray:
    """(C,) each category's broken-run effect ``e``.

    ``x`` (N, K) sales over the ``days`` the estimate reads, ``recent`` over its last
    ``recent_days``; ``f`` and ``f_recent`` the share of each on the shelf; ``key_out`` the
    share of each cell's run's key sizes out over the days and over the last ones (N, K);
    ``informative`` the cells to read (stores, products with key sizes, no campaign)."""
    effects = np.full(n_categories, KEY_RUN_EFFECT)
    early_days = days - recent_days
    if early_days <= 0 or n_categories == 0:
        return effects
    m_all, m_recent = key_out
    m_early = np.clip((days * m_all - recent_days * m_recent) / early_days, 0.0, 1.0)
    a_recent = recent_days * f_recent
    a_early = np.maximum(days * f - a_recent, 0.0)
    use = informative & (x > 0) & (a_recent > 0) & (a_early > 0)
    r, x, ar, ae = recent[use], x[use], a_recent[use], a_early[use]
    mr, me, cat = m_recent[use], m_early[use], np.broadcast_to(item_category, use.shape)[use]
    r = np.minimum(r, x)
    changed = np.abs(mr - me) >= RUN_CHANGE
    steady = ~changed
    tau = _trend(r[steady], x[steady], ar[steady] * (1 - KEY_RUN_EFFECT * mr[steady]),
                 ae[steady] * (1 - KEY_RUN_EFFECT * me[steady]), cat[steady], n_categories)  # fmt: skip
    r, x, ar, ae, mr, me, cat = (a[changed] for a in (r, x, ar, ae, mr, me, cat))
    if r.shape[0] == 0:
        return effects
    loglik = np.zeros((n_categories, RUN_EFFECT_GRID.shape[0]))
    for g, e in enumerate(RUN_EFFECT_GRID):
        last = tau[cat] * ar * (1.0 - e * mr)
        before = ae * (1.0 - e * me)
        p = np.clip(last / (last + before), 1e-12, 1.0 - 1e-12)
        loglik[:, g] = np.bincount(
            cat, weights=r * np.log(p) + (x - r) * np.log1p(-p), minlength=n_categories
        )
    return _shrunk(loglik, np.bincount(cat, minlength=n_categories) > 0)


def item_effects(effect: np.ndarray | None, n_items: int) -> np.ndarray:
    """(K,) each item's broken-run effect: the one given, else the model's prior."""
    return np.full(n_items, KEY_RUN_EFFECT) if effect is None else np.asarray(effect, dtype=np.float64)


def _trend(
    r: np.ndarray, x: np.ndarray, ar: np.ndarray, ae: np.ndarray, cat: np.ndarray, n_categories: int
) -> np.ndarray:
    """(C,) each category's last week against its weeks before (the binomial's MLE, by Newton
    steps on log tau); 1 where it has no cells."""
    log_tau = np.zeros(n_categories)
    for _ in range(TREND_ROUNDS):
        t = np.exp(log_tau)[cat]
        p = t * ar / (t * ar + ae)
        score = np.bincount(cat, weights=r - x * p, minlength=n_categories)
        info = np.bincount(cat, weights=x * p * (1.0 - p), minlength=n_categories)
        log_tau = np.where(info > 0, log_tau + score / np.maximum(info, 1e-12), 0.0)
        log_tau = np.clip(log_tau, -2.0, 2.0)
    return np.exp(log_tau)


def _posterior(loglik: np.ndarray, log_prior: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and variance of ``e`` on the grid, per row of ``loglik``."""
    log_post = loglik + log_prior
    w = np.exp(log_post - log_post.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    mean = w @ RUN_EFFECT_GRID
    var = w @ RUN_EFFECT_GRID**2 - mean**2
    return mean, np.maximum(var, 0.0)


def _shrunk(loglik: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """Each category's effect: the network's posterior (prior ``KEY_RUN_EFFECT``), then each
    category's own estimate shrunk toward it by precision, the between-category variance fitted
    by moments over the categories seen (their spread beyond their own uncertainty)."""
    grid = RUN_EFFECT_GRID
    network, _ = _posterior(loglik.sum(axis=0), -0.5 * ((grid - KEY_RUN_EFFECT) / RUN_EFFECT_PRIOR_SD) ** 2)
    own_mean, own_var = _posterior(loglik[seen], np.zeros(grid.shape[0]))
    # a likelihood narrower than the grid's step reads as that step's uniform spread
    own_var = np.maximum(own_var, (grid[1] - grid[0]) ** 2 / 12.0)
    spread = float(np.mean((own_mean - network) ** 2) - np.mean(own_var)) if seen.sum() > 1 else 0.0
    between = max(spread, 1e-4)
    effects = np.full(loglik.shape[0], float(network))
    # precision-weighted (normal approximations): exact where the grid is coarse for the prior
    effects[seen] = (own_mean / own_var + network / between) / (1.0 / own_var + 1.0 / between)
    return effects
