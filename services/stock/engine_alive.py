"""Sizes nobody buys: each store x size cell's ``alive``, the probability that its customers
buy the size at all (``docs/engine.md`` §1).

Two pieces of evidence: a size on the shelf that sold nothing while the pooled rate says it
would have (``alive_on_shelf``), and a size a store was never given while it got the rest of
the run, since stores are given what they sell (``never_given_alive``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from services.stock.engine_sizes import gamma_shape

# Upper bound of the share of cells whose customers never buy the size.
DEAD_SHARE_MAX = 0.8
# EM rounds of the zero-inflated fit of what each cell was given (``_zero_inflated``).
ZERO_INFLATION_ROUNDS = 50
ZERO_INFLATION_TOLERANCE = 1e-3
# Cells a network may have for the EM rounds to read every one; a larger one fits on a sample
# of its products (``_zero_inflated``).
ZERO_INFLATION_CELLS = 100_000


def alive_on_shelf(
    x: np.ndarray, p_zero: np.ndarray, ring: np.ndarray, informative: np.ndarray
) -> np.ndarray:
    """The probability each cell's customers buy the size: 1 where it sold, otherwise its zero
    (``p_zero`` under the pooled rate) weighed against its ring's share of sizes nobody buys."""
    dead = _dead_share(x, p_zero, ring, informative)[ring][None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        alive = np.where(x > 0, 1.0, (1.0 - dead) * p_zero / (dead + (1.0 - dead) * p_zero))
    return np.nan_to_num(alive, nan=1.0)


def _dead_share(x: np.ndarray, p_zero: np.ndarray, ring: np.ndarray, informative: np.ndarray) -> np.ndarray:
    """Share of cells nobody buys, per ring of the grid (0 = middle): observed zeros beyond Poisson's."""
    share = np.zeros(int(ring.max()) + 1 if ring.size else 1)
    for r in range(share.shape[0]):
        cells = informative & (ring == r)[None, :]
        if cells.sum() < 20:
            continue
        zeros = float((x[cells] <= 0).mean())
        expected = float(p_zero[cells].mean())
        if expected < 1.0:
            share[r] = np.clip((zeros - expected) / (1.0 - expected), 0.0, DEAD_SHARE_MAX)
    return share


def never_given_alive(
    given: np.ndarray,
    x: np.ndarray,
    store_product: np.ndarray,
    item_product: np.ndarray,
    ring: np.ndarray,
    carried: np.ndarray,
    alive: np.ndarray,
    shelf_zero: np.ndarray,
) -> np.ndarray:
    """``alive`` of the cells a store never had on the shelf while it had the product's other sizes.

    Stores are given what they sell: a size a store got none of (``given``), while it got the rest
    of the run (``store_product``: its units of each product), is more often one its customers do
    not buy than the stock-outs on the shelf say (those are evidence on cells that were given
    stock). P(nothing | bought) is a Gamma-Poisson zero, and the ring's share of cells nobody buys
    the zeros beyond it, the two fitted together (``_zero_inflated``). ``shelf_zero`` is each
    cell's chance of no sale over its days on the shelf (after a transfer) if its customers buy
    the size.
    """
    never = carried & (given <= 0) & (x <= 0)
    fit = _zero_inflated(given, store_product, never, ring, item_product)
    if fit is None:
        return alive
    cells, p_zero, dead = fit
    # Days on the shelf after a transfer with no sale are evidence too (independent of the
    # allocation's): both likelihoods multiply the ring's prior odds. A size the network was
    # given none of (expected 0) tells nothing either way: it keeps the prior.
    evidence = np.where(cells, p_zero, 1.0) * shelf_zero
    d = dead[ring][None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        posterior = (1.0 - d) * evidence / (d + (1.0 - d) * evidence)
    return np.where(never, np.minimum(alive, np.nan_to_num(posterior, nan=1.0)), alive)


@dataclass
class _Given:
    """What the cells with an expectation were given, as flat arrays (``_zero_inflated``)."""

    items: np.ndarray
    group: np.ndarray  # the cell's store x product
    units: np.ndarray
    totals: np.ndarray  # its store's units of the product
    zero: np.ndarray  # never given
    ring: np.ndarray

    def __getitem__(self, keep: np.ndarray) -> _Given:
        return _Given(*(getattr(self, f.name)[keep] for f in fields(self)))


def _zero_inflated(
    given: np.ndarray,
    store_product: np.ndarray,
    never: np.ndarray,
    ring: np.ndarray,
    item_product: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(cells with an expectation, P(nothing given | bought) per cell, share of cells nobody buys
    per ring), or None with too few cells: what each cell got is 0 for a size nobody buys there,
    otherwise Gamma-Poisson around its store's units of the product spread over the sizes its
    customers buy by the sizes' shares among the stores that buy them.

    Fitted on every cell as if all were bought, the zeros read as spread and as a smaller share
    for the sizes a few stores do not buy, and so as chance (on the simulator that halved the
    outer rings' share of sizes nobody buys): EM fits them together (``_em_rounds``). On a large
    network the rounds read a sample of whole products, then two E steps every cell.
    """
    cells = (store_product[:, item_product] > 0) & (given.sum(axis=0) > 0)[None, :]
    rows, items = np.nonzero(cells)
    if rows.shape[0] < 20:
        return None
    products = item_product[items]
    flat = _Given(
        items, rows * store_product.shape[1] + products, given[rows, items], store_product[rows, products],
        never[rows, items], ring[items],
    )  # fmt: skip
    n_rings = int(ring.max()) + 1
    in_ring = np.bincount(flat.ring, minlength=n_rings)
    # From every zero a size nobody buys, down: EM started at no such sizes would stay there.
    dead = np.bincount(flat.ring, weights=flat.zero, minlength=n_rings) / np.maximum(in_ring, 1)
    dead = np.minimum(np.where(in_ring >= 20, dead, 0.0), DEAD_SHARE_MAX)
    stride = -(-rows.shape[0] // ZERO_INFLATION_CELLS)
    if stride == 1:
        dead, shape, expected = _em_rounds(flat, dead, item_product, ZERO_INFLATION_ROUNDS)
    else:
        # Whole products, so that their sizes' shares are the network's: the shape and the rings'
        # shares are the same over any of them.
        dead, shape, _ = _em_rounds(flat[products % stride == 0], dead, item_product, ZERO_INFLATION_ROUNDS)
        weight = np.where(flat.zero, 1.0 - dead[flat.ring], 1.0)
        for _ in range(2):  # the E step on every cell, from the prior and then from its own zero
            expected = _expectations(flat, weight, item_product)
            weight = _bought(flat, dead, shape, expected, weight)
    p_zero = np.ones_like(given, dtype=np.float64)
    p_zero[rows, items] = (shape / (shape + expected)) ** shape
    return cells, p_zero, dead


def _em_rounds(
    flat: _Given, dead: np.ndarray, item_product: np.ndarray, rounds: int
) -> tuple[np.ndarray, float, np.ndarray]:
    """(each ring's share of sizes nobody buys, the Gamma's shape, each cell's expectation if
    bought) after at most ``rounds`` EM rounds from ``dead``, each cell weighted by its chance of
    being bought: the sizes' shares, the Gamma's spread (moments) and each ring's share (the mean
    chance of its zeros being sizes nobody buys)."""
    in_ring = np.bincount(flat.ring, minlength=dead.shape[0])
    fitted = in_ring >= 20
    weight = np.where(flat.zero, 1.0 - dead[flat.ring], 1.0)
    shape, expected = 1.0, np.zeros(0)
    for _ in range(rounds):
        expected = _expectations(flat, weight, item_product)
        shape = gamma_shape(flat.units, expected, weight)
        weight = _bought(flat, dead, shape, expected, weight)
        before = dead
        live = np.bincount(flat.ring, weights=weight, minlength=dead.shape[0]) / np.maximum(in_ring, 1)
        dead = np.minimum(np.where(fitted, 1.0 - live, 0.0), DEAD_SHARE_MAX)
        if np.max(np.abs(dead - before), initial=0.0) < ZERO_INFLATION_TOLERANCE:
            break
    return dead, shape, expected


def _expectations(flat: _Given, weight: np.ndarray, item_product: np.ndarray) -> np.ndarray:
    """What each cell would get if its customers buy the size: its store's units of the product
    over the sizes it is likely to buy (``weight``), this one included, by the sizes' shares
    among the stores that buy them."""
    n_items, n_products = item_product.shape[0], int(item_product.max()) + 1
    item_given = np.bincount(flat.items, weights=flat.units, minlength=n_items)
    share = item_given / np.maximum(np.bincount(flat.items, weights=weight, minlength=n_items), 1e-12)
    share = share / np.maximum(
        np.bincount(item_product, weights=share, minlength=n_products)[item_product], 1e-12
    )
    size = share[flat.items]
    bought = np.bincount(flat.group, weights=weight * size)[flat.group]
    return flat.totals * size / np.maximum(bought + (1.0 - weight) * size, 1e-12)


def _bought(
    flat: _Given, dead: np.ndarray, shape: float, expected: np.ndarray, weight: np.ndarray
) -> np.ndarray:
    """Each cell's chance that its customers buy the size: 1 where it was given any, Bayes' rule
    on its zero (Gamma-Poisson) against its ring's share of sizes nobody buys otherwise."""
    p_zero = (shape / (shape + expected[flat.zero])) ** shape
    d = dead[flat.ring[flat.zero]]
    weight = weight.copy()
    weight[flat.zero] = (1.0 - d) * p_zero / np.maximum(d + (1.0 - d) * p_zero, 1e-300)
    return weight
