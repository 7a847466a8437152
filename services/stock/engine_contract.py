"""The contract between the recommendation engine and the code around it.

``services.stock.generation`` reads the database into an ``EngineInput``
(``snapshot``: dense numpy arrays, indexes instead of ids, with the ``Network``
saying what each index stands for), calls
``services.stock.engine.recommend(inputs, rules)`` and writes the
``EngineOutput`` back as one batch (``storage``). The engine itself never touches the
database, Flask or ids, which keeps it fast, deterministic and testable on
synthetic networks (``benchmarks/simulate_engine.py``).

Shapes: N nodes (stores and CDs), P products (one colour each), K items
(product x size pairs), M recommendations.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# What a moved unit must add, net of what its origin loses and of its share of the trip, in
# expected units sold over the horizon; a minimum lot ships when its units add this much on
# average. The rule ``ganhoMinimo`` sets it (in thousandths: ``services.stock.rules``).
MIN_GAIN_PER_UNIT = 0.15
# Days of sales the demand estimate reads by default, never fewer than the rules' periodo: 13
# weeks, a season (``ENGINE_HISTORY_DAYS``; docs/engine.md §1).
ESTIMATE_HISTORY_DAYS = 91


@dataclass(frozen=True)
class EngineRules:
    qtd_minima: int
    qtd_maxima: int
    priorizar_cd: bool
    peso_distancia: int  # 0-100
    peso_giro: int  # 0-100
    peso_estoque: int  # 0-100
    bloqueio_campanha: bool
    horizon_days: int = 14  # sales horizon the transfers are planned for
    # Shipping, in expected units sold (the engine's only currency): one shipment (an origin ->
    # destination route in a batch, shared by every item on it) costs custo_envio + custo_km x km.
    custo_envio: float = 0.0
    custo_km: float = 0.0
    ganho_minimo: float = MIN_GAIN_PER_UNIT


# ``EngineInput.last_sent_age`` of a cell no transfer took units from
NO_SEND = 32767


@dataclass
class Outcomes:
    """Executed transfers whose window from their arrival is over (``services.stock.outcome``),
    one row each: what the estimate expects of their units is set against what they sold
    (docs/engine.md §9)."""

    dest: np.ndarray  # int32 (T,) destination node
    item: np.ndarray  # int32 (T,)
    # float64 (T,) units of the cell that sell before the transfer's: its own stock left at the
    # arrival and the units of the same batch's earlier transfers into the cell
    before: np.ndarray
    units: np.ndarray  # float64 (T,) units moved
    sold: np.ndarray  # float64 (T,) of those, sold in the window (ASI)
    days: int  # the window


@dataclass
class SalesHistory:
    """What the demand estimate reads when it looks further back than the rules' window
    (``docs/engine.md`` §1): the sales of the ``days`` days before the batch date, read as the
    window's are. Every earlier week's posterior is the prior of the next, and with no
    forgetting that chain is the posterior on these days together: the ledger is its
    sufficient statistic, so it is read again rather than stored."""

    days: int
    sales: np.ndarray  # float32 (N, K) units sold over the ``days`` days
    last_sale_age: np.ndarray  # int16 (N, K) days after each cell's last sale (``days``: none)
    # int16 (N, K) the days of it each cell counts: from its store's first sale of the product
    # (a product launched, or first sent to the store, last month has no quarter of zero sales
    # behind it), never fewer than the window's (``engine_demand.history_spans``)
    span: np.ndarray
    # int16 (N, K) and int32 (N, K) as EngineInput's, over each cell's span
    receipt_out_days: np.ndarray | None = None
    received: np.ndarray | None = None
    sent: np.ndarray | None = None
    # float32 (N, K) the unit whose sale opened a span its store's first sale of the product cut
    # short (``engine_demand.opening_sales``); None: no span was cut
    opening: np.ndarray | None = None


@dataclass
class EngineInput:
    # Nodes (N,)
    node_is_cd: np.ndarray  # bool
    node_lat: np.ndarray  # float64, nan when unknown
    node_lng: np.ndarray  # float64, nan when unknown
    node_blocked: (
        np.ndarray
    )  # bool: store `bloqueada` or listed in lojasBloqueadas; never origin nor destination
    # Products (P,)
    product_blocked: np.ndarray  # bool: brand listed in marcasBloqueadas; never moved
    product_brand: np.ndarray  # int32 codes, 0..B-1
    product_category: np.ndarray  # int32 codes, 0..C-1
    # Items (K,)
    item_product: np.ndarray  # int32 index into products
    item_size_pos: np.ndarray  # int16 position of the size in its product's grid
    # Cells (N, K)
    stock: np.ndarray  # int32 units on hand, >= 0
    sales: np.ndarray  # float32 units sold over the whole history window
    sales_recent: np.ndarray  # float32 units sold over the last 7 days of the window
    history_days: int  # days in the history window (rules' periodo)
    # Campaigns (N, P): product in campaign at that node on the batch date
    campaign: np.ndarray  # bool
    # Learning from past decisions: multipliers in (0, 1], 1.0 = no penalty
    route_factor: np.ndarray  # float32 (N, N), [origin, destination]
    brand_factor: np.ndarray  # float32 (B,)
    category_factor: np.ndarray  # float32 (C,)
    # What moved units sold (ASI): against what the estimate expects of them, per destination
    # store and category, it scales the store's rates (docs/engine.md §9). None: no outcome yet.
    outcomes: Outcomes | None = None
    # Days of the window after each cell's last sale day (0: it sold on the window's last day;
    # ``history_days`` when it sold nothing). None: unknown, every cell counts as in stock all along. With the stock on hand,
    # it tells the stock-out days the rates must leave out (see docs/engine.md, censored demand).
    last_sale_age: np.ndarray | None = None  # int16 (N, K)
    # Days of the window (and of its last 7 days) a cell had nothing on the shelf before its last
    # receipt, read from the transfers' receipts and the daily sales (services.stock.ledger): what
    # the last-sale rule cannot see. None: no receipt in the window.
    receipt_out_days: np.ndarray | None = None  # int16 (N, K)
    receipt_out_recent: np.ndarray | None = None  # int16 (N, K)
    # Units transfers brought each cell in the window (receipts): the allocation did not give
    # them. None: no receipt in the window.
    received: np.ndarray | None = None  # int32 (N, K)
    # Units transfers took from each cell in the window (executed, or approved and taken off its
    # stock as in transit): the allocation gave them. None: none sent.
    sent: np.ndarray | None = None  # int32 (N, K)
    # Days after each cell's last transfer out (a cell that sent its last units away had them on
    # the shelf until then; ``NO_SEND``: none). None: none sent.
    last_sent_age: np.ndarray | None = None  # int16 (N, K)
    # Units on their way to each cell (transfers executed and not received): the destination
    # counts them as stock for the horizon. None: nothing in transit.
    in_transit: np.ndarray | None = None  # int32 (N, K)
    # The longer history the demand estimate reads (figures, justifications and what an origin
    # keeps still read the window). None: the estimate reads the window.
    estimate_history: SalesHistory | None = None


@dataclass
class EngineOutput:
    """M recommendations, sorted by priority (alta, media, baixa) then score descending."""

    origin: np.ndarray  # int32 node index
    dest: np.ndarray  # int32 node index (never a CD)
    item: np.ndarray  # int32 item index
    quantity: np.ndarray  # int32, qtd_minima <= q <= qtd_maxima
    score: np.ndarray  # int32, 0-100
    priority: np.ndarray  # str: "alta" | "media" | "baixa"
    days_to_stockout: np.ndarray  # int32: destination's days of cover before the transfer
    origin_stock: np.ndarray  # int32 stock at the origin before the transfer
    dest_stock: np.ndarray  # int32 stock at the destination before the transfer
    origin_daily_sales: np.ndarray  # float64 observed average units/day at the origin over the window
    dest_daily_sales: np.ndarray  # float64 observed average units/day at the destination
    distance_km: np.ndarray  # float64 haversine distance
    in_campaign: np.ndarray  # bool: product in campaign at origin or destination
    # Portuguese text quoting the figures above: a list, or ``engine.Justifications`` (built on
    # demand, chunk by chunk, as the batch is written)
    justification: Sequence[str]
    # float64: expected extra units sold at the destination over the horizon (the justification's
    # "deve vender cerca de ... a mais"); None from code that predates it.
    expected_gain: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.origin.shape[0])


@dataclass
class Network:
    """What the engine's indexes stand for, to write its output back as rows."""

    node_ids: list[uuid.UUID]
    node_is_cd: np.ndarray
    product_ids: list[uuid.UUID]
    product_cor: list[str]
    item_product: np.ndarray
    item_size: list[str]
    brands: list[str]
    categories: list[str]
