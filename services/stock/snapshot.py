"""The network as the engine sees it on a day: stock, sales, campaigns and learning as dense arrays.

Stores and products become indexes (``Network`` keeps what each index stands
for). On PostgreSQL the stock and sales cells are read through binary ``COPY``
and aggregated by the database (a 300-node network holds 1.8 M stock cells and
millions of sales rows); other databases go through the ORM.
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass
from datetime import date, timedelta
from typing import NamedTuple

import numpy as np
from flask import current_app
from sqlalchemy import func, select

from extensions import db
from models.stock import Campanha, Estoque, Loja, Produto, RegrasRemanejamento, Venda
from services.stock import learning, ledger, transit
from services.stock.engine_contract import ESTIMATE_HISTORY_DAYS, EngineInput, Network, SalesHistory
from services.stock.engine_demand import history_spans, opening_sales
from services.stock.rules import history_days
from services.stock.storage import PG_COPY_HEADER, is_postgres

RECENT_DAYS = 7  # EngineInput.sales_recent: the last week of the window


def estimate_days() -> int:
    """Days of sales the demand estimate reads (never fewer than the rules' periodo)."""
    return int(current_app.config.get("ENGINE_HISTORY_DAYS", ESTIMATE_HISTORY_DAYS))


@dataclass
class _Nodes:
    ids: list[uuid.UUID]
    index: dict[uuid.UUID, int]
    is_cd: np.ndarray
    lat: np.ndarray
    lng: np.ndarray
    blocked: np.ndarray  # the store is `bloqueada` or listed in the rules' lojasBloqueadas


@dataclass
class _Products:
    ids: list[uuid.UUID]
    cor: list[str]
    brands: list[str]
    brand_codes: np.ndarray
    categories: list[str]
    category_codes: np.ndarray
    blocked: np.ndarray  # the brand is listed in the rules' marcasBloqueadas
    # Items: one per (product, size), sizes in grid order
    item_product: list[int]
    item_pos: list[int]
    item_size: list[str]


def _read_nodes(rules: RegrasRemanejamento) -> _Nodes:
    lojas = db.session.execute(
        select(Loja.id, Loja.is_cd, Loja.lat, Loja.lng, Loja.bloqueada).order_by(Loja.codigo)
    ).all()
    blocked_ids = {str(x) for x in rules.lojas_bloqueadas or []}
    ids = [row.id for row in lojas]
    return _Nodes(
        ids=ids,
        index={nid: i for i, nid in enumerate(ids)},
        is_cd=np.array([bool(r.is_cd) for r in lojas], dtype=bool),
        lat=np.array([np.nan if r.lat is None else r.lat for r in lojas], dtype=np.float64),
        lng=np.array([np.nan if r.lng is None else r.lng for r in lojas], dtype=np.float64),
        blocked=np.array([bool(r.bloqueada) or str(r.id) in blocked_ids for r in lojas], dtype=bool),
    )


def _read_products(rules: RegrasRemanejamento) -> _Products:
    produtos = db.session.execute(
        select(Produto.id, Produto.marca, Produto.categoria, Produto.cor, Produto.tamanhos).order_by(
            Produto.sku
        )
    ).all()
    brands, brand_codes = np.unique(np.array([p.marca for p in produtos], dtype=object), return_inverse=True)
    categories, cat_codes = np.unique(
        np.array([p.categoria for p in produtos], dtype=object), return_inverse=True
    )
    marcas_bloqueadas = set(rules.marcas_bloqueadas or [])
    products = _Products(
        ids=[p.id for p in produtos],
        cor=[p.cor for p in produtos],
        brands=[str(b) for b in brands],
        brand_codes=brand_codes,
        categories=[str(c) for c in categories],
        category_codes=cat_codes,
        blocked=np.array([p.marca in marcas_bloqueadas for p in produtos], dtype=bool),
        item_product=[],
        item_pos=[],
        item_size=[],
    )
    for pi, p in enumerate(produtos):
        # A size listed twice in a grid is one item.
        for pos, size in enumerate(dict.fromkeys(p.tamanhos or [])):
            products.item_product.append(pi)
            products.item_pos.append(pos)
            products.item_size.append(size)
    return products


def _read_campaigns(
    on: date, node_index: dict[uuid.UUID, int], product_ids: list[uuid.UUID], node_is_cd: np.ndarray
) -> np.ndarray:
    """(N, P): the product is in a campaign at the node on ``on``.

    A campaign without a store is national: every *store*, never a CD, whose stock the
    campaign's stores are supplied from."""
    campaign = np.zeros((len(node_index), len(product_ids)), dtype=bool)
    product_index = {pid: i for i, pid in enumerate(product_ids)}
    for produto_id, loja_id in db.session.execute(
        select(Campanha.produto_id, Campanha.loja_id).where(Campanha.inicio <= on, Campanha.fim >= on)
    ):
        pi = product_index.get(produto_id)
        if pi is None:
            continue
        if loja_id is None:
            campaign[~node_is_cd, pi] = True
        elif loja_id in node_index:
            campaign[node_index[loja_id], pi] = True
    return campaign


def read_inputs(on: date, rules: RegrasRemanejamento) -> tuple[EngineInput, Network]:
    """The network as the engine sees it on ``on``: stock now, sales of the ``periodo`` days before."""
    nodes = _read_nodes(rules)
    products = _read_products(rules)
    periodo = history_days(rules)
    start, recent = on - timedelta(days=periodo), on - timedelta(days=min(RECENT_DAYS, periodo))
    since = on - timedelta(days=max(estimate_days(), periodo))
    cells = read_cells(
        nodes.ids, products.ids, products.item_product, products.item_size, start, recent, on, since
    )
    stock = cells.stock
    campaign = _read_campaigns(on, nodes.index, products.ids, nodes.is_cd)
    item_index = {
        (products.ids[p], s): k
        for k, (p, s) in enumerate(zip(products.item_product, products.item_size, strict=True))
    }
    days = (on - since).days
    span = history_spans(cells.first_sale_age, np.asarray(products.item_product), periodo, days)
    opening = opening_sales(cells.first_sale_age, np.asarray(products.item_product), periodo, days)
    receipt_out = ledger.receipt_out_days(stock, nodes.index, item_index, start, recent, on, since, span)
    sent = ledger.sent_units(stock.shape, nodes.index, item_index, start, on, since, span)
    stock, in_transit = _apply_transit(stock, nodes.index, item_index)
    route_f, brand_f, cat_f, outcomes = learning.engine_factors(
        on, nodes.index, item_index, products.brands, products.categories
    )
    inputs = EngineInput(
        node_is_cd=nodes.is_cd,
        node_lat=nodes.lat,
        node_lng=nodes.lng,
        node_blocked=nodes.blocked,
        product_blocked=products.blocked,
        product_brand=products.brand_codes.astype(np.int32),
        product_category=products.category_codes.astype(np.int32),
        item_product=np.array(products.item_product, dtype=np.int32),
        item_size_pos=np.array(products.item_pos, dtype=np.int16),
        stock=stock,
        sales=cells.sales,
        sales_recent=cells.sales_recent,
        history_days=periodo,
        campaign=campaign,
        route_factor=route_f,
        brand_factor=brand_f,
        category_factor=cat_f,
        outcomes=outcomes,
        last_sale_age=cells.last_sale_age,
        receipt_out_days=None if receipt_out is None else receipt_out.window,
        receipt_out_recent=None if receipt_out is None else receipt_out.recent,
        received=None if receipt_out is None else receipt_out.units,
        sent=None if sent is None else sent.window,
        last_sent_age=None if sent is None else sent.age,
        in_transit=in_transit,
        estimate_history=None
        if since >= start
        else SalesHistory(
            days=days,
            sales=cells.history_sales,
            last_sale_age=cells.history_age,
            span=span,
            receipt_out_days=None if receipt_out is None else receipt_out.history,
            received=None if receipt_out is None else receipt_out.units_history,
            sent=None if sent is None else sent.history,
            opening=opening if opening.any() else None,
        ),
    )
    network = Network(
        node_ids=nodes.ids,
        node_is_cd=nodes.is_cd,
        product_ids=products.ids,
        product_cor=products.cor,
        item_product=inputs.item_product,
        item_size=products.item_size,
        brands=products.brands,
        categories=products.categories,
    )
    return inputs, network


def _apply_transit(
    stock: np.ndarray, node_index: dict[uuid.UUID, int], item_index: dict[tuple[uuid.UUID, str], int]
) -> tuple[np.ndarray, np.ndarray]:
    """Stock net of the units in transit out of each cell, and the units in transit into each.

    See ``services.stock.transit``: approved and executed transfers not received are gone
    from the origin and held by the destination."""
    in_transit = np.zeros(stock.shape, dtype=np.int32)
    moves = transit.movimentos()
    if not moves:
        return stock, in_transit
    committed = np.zeros(stock.shape, dtype=np.int64)
    for move in moves:
        k = item_index.get((move.produto_id, move.tamanho))
        origin, dest = node_index.get(move.origem_id), node_index.get(move.destino_id)
        if k is None:
            continue
        if origin is not None:
            committed[origin, k] += move.quantidade
        if dest is not None:
            in_transit[dest, k] += move.quantidade
    net = np.maximum(stock.astype(np.int64) - committed, 0).astype(np.int32)
    return net, in_transit


# --- stock and sales cells ------------------------------------------------------------------


class Cells(NamedTuple):
    """(N, K) stock now, and what each cell sold in the window and in the estimate's history."""

    stock: np.ndarray  # int32
    sales: np.ndarray  # float32 units sold in ``[start, on)``
    sales_recent: np.ndarray  # float32 ... in ``[recent, on)``
    last_sale_age: np.ndarray  # int16 days of the window after the last sale (the window: none)
    history_sales: np.ndarray  # float32 ... in ``[since, on)``
    history_age: np.ndarray  # int16 days of the history after the last sale
    first_sale_age: np.ndarray  # int16 days from the first sale of the history to ``on`` (0: none)


def read_cells(
    node_ids: list[uuid.UUID],
    product_ids: list[uuid.UUID],
    item_product: list[int],
    item_size: list[str],
    start: date,
    recent: date,
    on: date,
    since: date | None = None,
) -> Cells:
    """Stock now and the sales of the window ``[start, on)``, of its last days and of the
    estimate's history from ``since`` (at most ``start``; the window without it), with the days
    after each cell's last sale in the window and in the history."""
    since = start if since is None else min(since, start)
    read = _read_cells_postgres if is_postgres() else _read_cells_generic
    return read(node_ids, product_ids, item_product, item_size, (since, start, recent, on))


def _read_cells_generic(node_ids, product_ids, item_product, item_size, dates):
    """Stock and sales through the ORM: fine for SQLite and small networks."""
    since, start, recent, on = dates
    n, k = len(node_ids), len(item_size)
    node_index = {nid: i for i, nid in enumerate(node_ids)}
    item_index = {
        (product_ids[p], s): i for i, (p, s) in enumerate(zip(item_product, item_size, strict=True))
    }
    stock = np.zeros((n, k), dtype=np.int32)
    for loja_id, produto_id, tamanho, qtd in db.session.execute(
        select(Estoque.loja_id, Estoque.produto_id, Estoque.tamanho, Estoque.qtd)
    ):
        ki = item_index.get((produto_id, tamanho))
        ni = node_index.get(loja_id)
        if ki is not None and ni is not None:
            stock[ni, ki] = qtd
    sales, sales_recent, history = (np.zeros((n, k), dtype=np.float32) for _ in range(3))
    age = np.full((n, k), (on - start).days, dtype=np.int16)
    history_age = np.full((n, k), (on - since).days, dtype=np.int16)
    first_age = np.zeros((n, k), dtype=np.int16)
    columns = (
        func.sum(Venda.qtd).filter(Venda.data >= start),
        func.sum(Venda.qtd).filter(Venda.data >= recent),
        func.max(Venda.data).filter(Venda.qtd > 0, Venda.data >= start),
        func.sum(Venda.qtd),
        func.max(Venda.data).filter(Venda.qtd > 0),
        func.min(Venda.data).filter(Venda.qtd > 0),
    )
    for (
        loja_id,
        produto_id,
        tamanho,
        total,
        last,
        last_day,
        older,
        older_day,
        first_day,
    ) in db.session.execute(
        select(Venda.loja_id, Venda.produto_id, Venda.tamanho, *columns)
        .where(Venda.data >= since, Venda.data < on)
        .group_by(Venda.loja_id, Venda.produto_id, Venda.tamanho)
    ):
        ki = item_index.get((produto_id, tamanho))
        ni = node_index.get(loja_id)
        if ki is not None and ni is not None:
            sales[ni, ki] = total or 0
            sales_recent[ni, ki] = last or 0
            history[ni, ki] = older or 0
            if last_day is not None:
                age[ni, ki] = (on - last_day).days - 1
            if older_day is not None:
                history_age[ni, ki] = (on - older_day).days - 1
                first_age[ni, ki] = (on - first_day).days
    return Cells(stock, sales, sales_recent, age, history, history_age, first_age)


def _binary_ints(buf: bytes | bytearray, columns: int) -> np.ndarray:
    """Rows of a ``COPY ... (FORMAT binary)`` of NOT NULL int4 columns, as an (R, columns) array."""
    if not buf.startswith(PG_COPY_HEADER):
        raise ValueError("not a PostgreSQL binary COPY stream")
    (ext_len,) = struct.unpack_from(">i", buf, len(PG_COPY_HEADER) + 4)
    offset = len(PG_COPY_HEADER) + 8 + ext_len
    row = np.dtype([("n", ">i2")] + [(f"x{i}", ">i4") for i in range(2 * columns)])
    count = (len(buf) - offset - 2) // row.itemsize
    rows = np.frombuffer(buf, dtype=row, count=count, offset=offset)
    return np.column_stack([rows[f"x{2 * i + 1}"].astype(np.int32) for i in range(columns)])


def _read_cells_postgres(node_ids, product_ids, item_product, item_size, dates):
    """Stock and sales through binary ``COPY``: PostgreSQL maps ids to indexes and aggregates."""
    since, start, recent, on = dates
    n, k = len(node_ids), len(item_size)
    raw = db.session.connection().connection.driver_connection
    with raw.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS _giro_nodes, _giro_items")
        cur.execute("CREATE TEMP TABLE _giro_nodes (id uuid PRIMARY KEY, i int4 NOT NULL) ON COMMIT DROP")
        cur.execute(
            "CREATE TEMP TABLE _giro_items (produto_id uuid, tamanho text, k int4 NOT NULL, "
            "PRIMARY KEY (produto_id, tamanho)) ON COMMIT DROP"
        )
        with cur.copy("COPY _giro_nodes (id, i) FROM STDIN") as cp:
            for i, nid in enumerate(node_ids):
                cp.write_row((nid, i))
        with cur.copy("COPY _giro_items (produto_id, tamanho, k) FROM STDIN") as cp:
            for i, (p, s) in enumerate(zip(item_product, item_size, strict=True)):
                cp.write_row((product_ids[p], s, i))
        cur.execute("ANALYZE _giro_nodes")
        cur.execute("ANALYZE _giro_items")

        stock = np.zeros((n, k), dtype=np.int32)
        buf = _copy_out(
            cur,
            "COPY (SELECT n.i, it.k, e.qtd FROM estoque e "
            "JOIN _giro_nodes n ON n.id = e.loja_id "
            "JOIN _giro_items it ON it.produto_id = e.produto_id AND it.tamanho = e.tamanho"
            ") TO STDOUT (FORMAT binary)",
        )
        cells = _binary_ints(buf, 3)
        stock[cells[:, 0], cells[:, 1]] = cells[:, 2]
        del buf, cells

        sales, sales_recent, history = (np.zeros((n, k), dtype=np.float32) for _ in range(3))
        window, days = (on - start).days, (on - since).days
        age = np.full((n, k), window, dtype=np.int16)
        history_age = np.full((n, k), days, dtype=np.int16)
        first_age = np.zeros((n, k), dtype=np.int16)
        # Dates are formatted by us from `date` objects, never from user input. A quarter is
        # millions of rows: as few aggregates as will do (the window's last sale is the
        # history's when it falls in the window), grouped in the order of the index that
        # carries them (``ix_vendas_celula_data``: streamed, not hashed), then mapped to
        # indexes. The planner underestimates that join and would probe the nodes' key once
        # per cell: hash joins, for this statement only.
        cur.execute("SET LOCAL enable_nestloop = off")
        buf = _copy_out(
            cur,
            "COPY (SELECT n.i, it.k, s.w, s.r, s.h, s.a, s.f FROM ("
            "SELECT v.produto_id, v.loja_id, v.tamanho, "
            f"COALESCE(SUM(v.qtd) FILTER (WHERE v.data >= DATE '{start.isoformat()}'), 0)::int4 w, "
            f"COALESCE(SUM(v.qtd) FILTER (WHERE v.data >= DATE '{recent.isoformat()}'), 0)::int4 r, "
            "SUM(v.qtd)::int4 h, "
            f"COALESCE(DATE '{on.isoformat()}' - 1 - MAX(v.data) FILTER (WHERE v.qtd > 0), {days})::int4 a, "
            f"COALESCE(DATE '{on.isoformat()}' - MIN(v.data) FILTER (WHERE v.qtd > 0), 0)::int4 f "
            "FROM vendas v "
            f"WHERE v.data >= DATE '{since.isoformat()}' AND v.data < DATE '{on.isoformat()}' "
            "GROUP BY v.produto_id, v.loja_id, v.tamanho) s "
            "JOIN _giro_nodes n ON n.id = s.loja_id "
            "JOIN _giro_items it ON it.produto_id = s.produto_id AND it.tamanho = s.tamanho"
            ") TO STDOUT (FORMAT binary)",
        )
        cur.execute("RESET enable_nestloop")
        cells = _binary_ints(buf, 7)
        at = (cells[:, 0], cells[:, 1])
        sales[at], sales_recent[at], history[at] = cells[:, 2], cells[:, 3], cells[:, 4]
        history_age[at], first_age[at] = cells[:, 5], cells[:, 6]
        age[at] = np.where(cells[:, 5] < window, cells[:, 5], window)
        cur.execute("DROP TABLE IF EXISTS _giro_nodes, _giro_items")
    return Cells(stock, sales, sales_recent, age, history, history_age, first_age)


def _copy_out(cur, statement: str) -> bytearray:
    buf = bytearray()
    with cur.copy(statement) as cp:
        for chunk in cp:
            buf += chunk
    return buf
