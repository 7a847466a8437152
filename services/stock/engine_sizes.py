"""Size curves of the recommendation engine: each size's share of its product's demand.

Pure numpy (``docs/engine.md`` §1). A product's sizes sell along a bell: most
around the size its customers centre on, fewer the further out. Each product's
bell (log demand quadratic in the size's distance from the grid's middle) is
fitted on the network's sales over the days each size was on the shelf; the
products' slopes and curvatures are shrunk toward the network's by precision,
their spread fitted by moments; each size's own sales then pull it off its
bell as far as the Gamma prior fitted on the snapshot lets them
(Poisson-Gamma empirical Bayes). The Gamma fit by moments lives here too: the
rates (``engine_demand``) and the learning (``learning``) share it.
"""

from __future__ import annotations

import numpy as np

# Shape bounds of the empirical-Bayes Gamma priors.
SHAPE_BOUNDS = (0.5, 1000.0)
# Rounds of the alternating-sums fits (exposure-weighted).
FIT_ROUNDS = 4
# Distances from a grid's middle size (in sizes) told apart where a grid is too short for a bell.
SIZE_CURVE_RINGS = 3
# Newton steps of each product's bell, and the least sizes a bell is fitted on.
BELL_ROUNDS = 8
BELL_MIN_SIZES = 3
# A whisper of a prior on slope and curvature: a grid with sizes never on the shelf stays solvable.
BELL_RIDGE = 1e-3


def gamma_shape(observed: np.ndarray, expected: np.ndarray, weight: np.ndarray | float = 1.0) -> float:
    """Method-of-moments shape of a Gamma(a, a) multiplier on Poisson means.

    For T ~ Poisson(E * g) with E[g] = 1, Var[g] = 1/a:
    E[(T - E)^2 - T] = E^2 / a. ``weight``: how much each observation counts (its chance of
    being one of these at all).
    """
    mask = expected > 0
    w = np.broadcast_to(weight, expected.shape)[mask]
    den = float(np.sum(w * expected[mask] ** 2))
    if den <= 0:
        return SHAPE_BOUNDS[1]
    num = float(np.sum(w * ((observed[mask] - expected[mask]) ** 2 - observed[mask])))
    if num <= 0:
        return SHAPE_BOUNDS[1]
    return float(np.clip(den / num, *SHAPE_BOUNDS))


def size_curve(
    item_tot: np.ndarray,
    item_exp: np.ndarray,
    item_product: np.ndarray,
    item_size_pos: np.ndarray,
    sizes_per_product: np.ndarray,
) -> np.ndarray:
    """(K,) each size's share of its product's sales with the whole run on the shelf.

    ``item_tot`` is what each size sold over the network, ``item_exp`` its mean share of the
    window on the shelf. Each size is shrunk toward its product's bell (``bell_prior``); a grid
    too short for one takes the share its distance from the middle has over the network's
    products (product level x distance weight, a Poisson fit by alternating sums). A size seldom
    or never on the shelf anywhere takes its prior; one with a long run on the shelf keeps
    mostly its own (Poisson-Gamma, prior fitted as the rates').
    """
    n_products = sizes_per_product.shape[0]
    centre = (sizes_per_product[item_product] - 1) / 2.0
    # distance from the middle in half steps: grids of odd and even lengths share the scale
    step = np.minimum(np.rint(2.0 * np.abs(item_size_pos - centre)), 2 * SIZE_CURVE_RINGS).astype(np.int64)
    n_steps = 2 * SIZE_CURVE_RINGS + 1
    weight = np.ones(n_steps)
    level = np.zeros(n_products)
    for _ in range(FIT_ROUNDS):
        level = np.bincount(item_product, weights=item_tot, minlength=n_products) / np.maximum(
            np.bincount(item_product, weights=weight[step] * item_exp, minlength=n_products), 1e-9
        )
        seen = np.bincount(step, weights=level[item_product] * item_exp, minlength=n_steps)
        sold = np.bincount(step, weights=item_tot, minlength=n_steps)
        fitted = seen > 0
        if not fitted.any():
            break
        weight = np.where(fitted, sold / np.maximum(seen, 1e-9), 0.0)
        # a distance no grid had on the shelf: the least a fitted one sells
        weight[~fitted] = weight[fitted].min()
    bell = bell_prior(item_tot, item_exp, item_product, item_size_pos - centre, sizes_per_product)
    prior = np.where(np.isnan(bell), level[item_product] * weight[step], bell)
    expected = prior * item_exp
    shape = gamma_shape(item_tot, expected)
    with np.errstate(invalid="ignore", divide="ignore"):
        curve = np.where(prior > 0, prior * (item_tot + shape) / (expected + shape), 0.0)
    # a product nobody sold (nothing to fit): an even curve
    curve = np.where(
        np.bincount(item_product, weights=curve, minlength=n_products)[item_product] > 0, curve, 1.0
    )
    return curve / np.bincount(item_product, weights=curve, minlength=n_products)[item_product]


def bell_prior(
    item_tot: np.ndarray,
    item_exp: np.ndarray,
    item_product: np.ndarray,
    z: np.ndarray,
    sizes_per_product: np.ndarray,
) -> np.ndarray:
    """(K,) each size's sales per unit on the shelf under its product's bell, NaN where the
    grid is shorter than BELL_MIN_SIZES or the product sold nothing.

    ``log mu = level + slope * z + curvature * z^2``, ``z`` the size's distance from its grid's
    middle: a Poisson fit per product (Newton, all products at once), then slope and curvature
    shrunk toward the network's (precision-weighted means) by their spread over the products
    beyond what each fit's own variance explains (moments), and the level refitted.
    """
    n_products = sizes_per_product.shape[0]
    design = np.column_stack([np.ones_like(z), z, z * z])
    total = np.bincount(item_product, weights=item_tot, minlength=n_products)
    shelf = np.bincount(item_product, weights=item_exp, minlength=n_products)
    fitted = (sizes_per_product >= BELL_MIN_SIZES) & (total > 0) & (shelf > 0)
    if not fitted.any():
        return np.full(item_product.shape[0], np.nan)
    beta = np.zeros((n_products, 3))
    beta[:, 0] = np.log(np.maximum(total, 0.5) / np.maximum(shelf, 1e-9))
    ridge = np.diag([0.0, BELL_RIDGE, BELL_RIDGE])
    info = np.zeros((n_products, 3, 3))
    for _ in range(BELL_ROUNDS):
        mu = _bell(design, beta[item_product]) * item_exp
        grad = np.zeros((n_products, 3))
        np.add.at(grad, item_product, design * (item_tot - mu)[:, None])
        info = np.zeros((n_products, 3, 3))
        np.add.at(info, item_product, design[:, :, None] * design[:, None, :] * mu[:, None, None])
        info[:, 0, 0] += 1e-9
        newton = np.linalg.solve(info + ridge, grad[:, :, None])[:, :, 0]
        beta[fitted] += np.clip(newton[fitted], -2.0, 2.0)
    variance = np.linalg.inv(info[fitted] + ridge)
    for j in (1, 2):
        own, var = beta[fitted, j], np.maximum(variance[:, j, j], 1e-9)
        network = float(np.sum(own / var) / np.sum(1.0 / var))
        spread = max(float(np.mean((own - network) ** 2 - var)), 1e-6)
        beta[fitted, j] = network + spread / (spread + var) * (own - network)
    beta[:, 0] = 0.0
    shape = _bell(design, beta[item_product])
    level = total / np.maximum(
        np.bincount(item_product, weights=shape * item_exp, minlength=n_products), 1e-9
    )
    return np.where(fitted[item_product], level[item_product] * shape, np.nan)


def _bell(design: np.ndarray, beta: np.ndarray) -> np.ndarray:
    return np.exp(np.clip(np.einsum("kj,kj->k", design, beta), -30.0, 30.0))
