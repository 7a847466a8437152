"""Weekly batches: read the network into the engine's arrays, run it, write the batch; rules and cadence.

One batch per ISO week. Generating again for a week that already has a batch
refreshes it in place: every recommendation somebody acted on (approved,
executed, refused, vetoed or restored) is kept exactly as it is, the untouched
pending ones are replaced by the new engine output, and a new proposal for the
same origin, destination, product and size as a kept one is dropped. No
decision is ever lost.

Generation runs in the caller's transaction and only flushes: the CLI commits
once at the end, so a failure half way leaves nothing behind. The rules row is
locked for the whole run, which serialises concurrent generations and keeps
the rules from changing under one.
"""

from __future__ import annotations

import itertools
import os
import struct
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np
from psycopg.copy import QueuedLibpqWriter
from sqlalchemy import case, delete, false, func, insert, select

from extensions import db
from models.auth import User
from models.base import utcnow
from models.remanejamento import PRIORIDADE_RANK, Lote, Recomendacao
from models.stock import Campanha, Estoque, Loja, Produto, RegrasRemanejamento, Venda
from services.clock import today
from services.errors import FieldError, ValidationFailed
from services.stock import learning
from services.stock.decisions import (
    active_condition,
    get_lote,
    lote_recomendacoes,
    newest_lote,
    visible_condition,
)
from services.stock.engine_contract import EngineInput, EngineOutput, EngineRules
from services.stock.metrics import risk_figures
from services.stock.rules import get_rules, history_days

Progress = Callable[[str, float], None]
RECENT_DAYS = 7  # EngineInput.sales_recent: the last week of the window
NEW_FOR = timedelta(days=7)  # a batch is `novo` for this long


# --- reading ---------------------------------------------------------------------------------


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


def iso_week(on: date) -> tuple[str, date, date]:
    """``("2026-W47", monday, sunday)`` of the ISO week holding ``on``."""
    year, week, weekday = on.isocalendar()
    monday = on - timedelta(days=weekday - 1)
    return f"{year}-W{week:02d}", monday, monday + timedelta(days=6)


def engine_rules(rules: RegrasRemanejamento) -> EngineRules:
    return EngineRules(
        qtd_minima=rules.qtd_minima,
        qtd_maxima=rules.qtd_maxima,
        priorizar_cd=rules.priorizar_cd,
        peso_distancia=rules.peso_distancia,
        peso_giro=rules.peso_giro,
        peso_estoque=rules.peso_estoque,
        bloqueio_campanha=rules.bloqueio_campanha,
    )


def read_inputs(on: date, rules: RegrasRemanejamento) -> tuple[EngineInput, Network]:
    """The network as the engine sees it on ``on``: stock now, sales of the ``periodo`` days before."""
    lojas = db.session.execute(
        select(Loja.id, Loja.is_cd, Loja.lat, Loja.lng, Loja.bloqueada).order_by(Loja.codigo)
    ).all()
    blocked_ids = {str(x) for x in rules.lojas_bloqueadas or []}
    node_ids = [row.id for row in lojas]
    node_index = {nid: i for i, nid in enumerate(node_ids)}
    node_is_cd = np.array([bool(r.is_cd) for r in lojas], dtype=bool)
    node_lat = np.array([np.nan if r.lat is None else r.lat for r in lojas], dtype=np.float64)
    node_lng = np.array([np.nan if r.lng is None else r.lng for r in lojas], dtype=np.float64)
    node_blocked = np.array([bool(r.bloqueada) or str(r.id) in blocked_ids for r in lojas], dtype=bool)

    produtos = db.session.execute(
        select(Produto.id, Produto.marca, Produto.categoria, Produto.cor, Produto.tamanhos).order_by(
            Produto.sku
        )
    ).all()
    product_ids = [p.id for p in produtos]
    brands, brand_codes = np.unique(np.array([p.marca for p in produtos], dtype=object), return_inverse=True)
    categories, cat_codes = np.unique(
        np.array([p.categoria for p in produtos], dtype=object), return_inverse=True
    )
    marcas_bloqueadas = set(rules.marcas_bloqueadas or [])
    product_blocked = np.array([p.marca in marcas_bloqueadas for p in produtos], dtype=bool)
    item_product: list[int] = []
    item_pos: list[int] = []
    item_size: list[str] = []
    for pi, p in enumerate(produtos):
        # A size listed twice in a grid is one item.
        for pos, size in enumerate(dict.fromkeys(p.tamanhos or [])):
            item_product.append(pi)
            item_pos.append(pos)
            item_size.append(size)
    n = len(node_ids)
    periodo = history_days(rules)
    start, recent = on - timedelta(days=periodo), on - timedelta(days=min(RECENT_DAYS, periodo))

    if db.session.get_bind().dialect.name == "postgresql":
        stock, sales, sales_recent = _read_cells_postgres(
            node_ids, product_ids, item_product, item_size, start, recent, on
        )
    else:
        stock, sales, sales_recent = _read_cells_generic(
            node_index, product_ids, item_product, item_size, start, recent, on
        )

    campaign = np.zeros((n, len(produtos)), dtype=bool)
    product_index = {pid: i for i, pid in enumerate(product_ids)}
    for produto_id, loja_id in db.session.execute(
        select(Campanha.produto_id, Campanha.loja_id).where(Campanha.inicio <= on, Campanha.fim >= on)
    ):
        pi = product_index.get(produto_id)
        if pi is None:
            continue
        if loja_id is None:
            campaign[:, pi] = True
        elif loja_id in node_index:
            campaign[node_index[loja_id], pi] = True

    brand_list = [str(b) for b in brands]
    category_list = [str(c) for c in categories]
    route_f, brand_f, cat_f = learning.engine_factors(on, node_index, brand_list, category_list)
    inputs = EngineInput(
        node_is_cd=node_is_cd,
        node_lat=node_lat,
        node_lng=node_lng,
        node_blocked=node_blocked,
        product_blocked=product_blocked,
        product_brand=brand_codes.astype(np.int32),
        product_category=cat_codes.astype(np.int32),
        item_product=np.array(item_product, dtype=np.int32),
        item_size_pos=np.array(item_pos, dtype=np.int16),
        stock=stock,
        sales=sales,
        sales_recent=sales_recent,
        history_days=periodo,
        campaign=campaign,
        route_factor=route_f,
        brand_factor=brand_f,
        category_factor=cat_f,
    )
    network = Network(
        node_ids=node_ids,
        node_is_cd=node_is_cd,
        product_ids=product_ids,
        product_cor=[p.cor for p in produtos],
        item_product=inputs.item_product,
        item_size=item_size,
        brands=brand_list,
        categories=category_list,
    )
    return inputs, network


def _read_cells_generic(node_index, product_ids, item_product, item_size, start, recent, on):
    """Stock and sales through the ORM: fine for SQLite and small networks."""
    n, k = len(node_index), len(item_size)
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
    sales = np.zeros((n, k), dtype=np.float32)
    sales_recent = np.zeros((n, k), dtype=np.float32)
    recent_sum = func.sum(Venda.qtd).filter(Venda.data >= recent)
    for loja_id, produto_id, tamanho, total, last in db.session.execute(
        select(Venda.loja_id, Venda.produto_id, Venda.tamanho, func.sum(Venda.qtd), recent_sum)
        .where(Venda.data >= start, Venda.data < on)
        .group_by(Venda.loja_id, Venda.produto_id, Venda.tamanho)
    ):
        ki = item_index.get((produto_id, tamanho))
        ni = node_index.get(loja_id)
        if ki is not None and ni is not None:
            sales[ni, ki] = total or 0
            sales_recent[ni, ki] = last or 0
    return stock, sales, sales_recent


_PG_HEADER = b"PGCOPY\n\xff\r\n\x00"


def _binary_ints(buf: bytes | bytearray, columns: int) -> np.ndarray:
    """Rows of a ``COPY ... (FORMAT binary)`` of NOT NULL int4 columns, as an (R, columns) array."""
    if not buf.startswith(_PG_HEADER):
        raise ValueError("not a PostgreSQL binary COPY stream")
    (ext_len,) = struct.unpack_from(">i", buf, len(_PG_HEADER) + 4)
    offset = len(_PG_HEADER) + 8 + ext_len
    row = np.dtype([("n", ">i2")] + [(f"x{i}", ">i4") for i in range(2 * columns)])
    count = (len(buf) - offset - 2) // row.itemsize
    rows = np.frombuffer(buf, dtype=row, count=count, offset=offset)
    return np.column_stack([rows[f"x{2 * i + 1}"].astype(np.int32) for i in range(columns)])


def _read_cells_postgres(node_ids, product_ids, item_product, item_size, start, recent, on):
    """Stock and sales through binary ``COPY``: PostgreSQL maps ids to indexes and aggregates."""
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

        sales = np.zeros((n, k), dtype=np.float32)
        sales_recent = np.zeros((n, k), dtype=np.float32)
        # Dates are formatted by us from `date` objects, never from user input.
        buf = _copy_out(
            cur,
            "COPY (SELECT n.i, it.k, SUM(v.qtd)::int4, "
            f"COALESCE(SUM(v.qtd) FILTER (WHERE v.data >= DATE '{recent.isoformat()}'), 0)::int4 "
            "FROM vendas v "
            "JOIN _giro_nodes n ON n.id = v.loja_id "
            "JOIN _giro_items it ON it.produto_id = v.produto_id AND it.tamanho = v.tamanho "
            f"WHERE v.data >= DATE '{start.isoformat()}' AND v.data < DATE '{on.isoformat()}' "
            "GROUP BY n.i, it.k) TO STDOUT (FORMAT binary)",
        )
        cells = _binary_ints(buf, 4)
        sales[cells[:, 0], cells[:, 1]] = cells[:, 2]
        sales_recent[cells[:, 0], cells[:, 1]] = cells[:, 3]
        cur.execute("DROP TABLE IF EXISTS _giro_nodes, _giro_items")
    return stock, sales, sales_recent


def _copy_out(cur, statement: str) -> bytearray:
    buf = bytearray()
    with cur.copy(statement) as cp:
        for chunk in cp:
            buf += chunk
    return buf


# --- writing ---------------------------------------------------------------------------------

REC_COLUMNS = (
    "id",
    "lote_id",
    "produto_id",
    "tamanho",
    "cor",
    "origem_id",
    "destino_id",
    "tipo_origem",
    "quantidade",
    "estoque_destino",
    "venda_media_destino",
    "estoque_origem",
    "venda_media_origem",
    "distancia_km",
    "justificativa",
    "prioridade",
    "prioridade_rank",
    "score",
    "posicao",
    "dias_ate_ruptura",
    "em_campanha",
    "data",
    "status",
    "vetado",
)


def _kept_mask(out: EngineOutput, net: Network, skip: set[tuple]) -> np.ndarray:
    """Which output rows to write: those not colliding with a kept (decided) recommendation."""
    keep = np.ones(len(out), dtype=bool)
    if not skip:
        return keep
    products = net.item_product[out.item]
    for m, (o, d, p, k) in enumerate(
        zip(out.origin.tolist(), out.dest.tolist(), products.tolist(), out.item.tolist(), strict=True)
    ):
        if (net.node_ids[o], net.node_ids[d], net.product_ids[p], net.item_size[k]) in skip:
            keep[m] = False
    return keep


def _ordered_uuid_bytes(count: int) -> np.ndarray:
    """``count`` time-ordered UUIDs (version 7 layout) as a (count, 16) byte array.

    Millisecond timestamp, a per-call random value, a row counter, then 32 random bits:
    the ids of a batch sort in list order and after every earlier batch, so the primary
    key index of a table holding many weeks grows at its right edge instead of at
    random pages.
    """
    raw = np.frombuffer(os.urandom(16 * count), dtype=np.uint8).reshape(count, 16).copy()
    raw[:, 0:6] = np.frombuffer(int(time.time() * 1000).to_bytes(6, "big"), dtype=np.uint8)
    raw[:, 6:8] = raw[0, 6:8]
    raw[:, 6] = (raw[:, 6] & 0x0F) | 0x70
    counter = np.arange(count, dtype=">u4").view(np.uint8).reshape(count, 4)
    raw[:, 8:12] = counter
    raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80
    return raw


def _columns(out: EngineOutput, net: Network, keep: np.ndarray) -> dict[str, list]:
    """The varying columns of the rows to write, as Python lists in ``REC_COLUMNS`` terms."""
    idx = np.flatnonzero(keep)
    origin, dest, item = out.origin[idx], out.dest[idx], out.item[idx]
    products = net.item_product[item]
    prio = np.asarray(out.priority, dtype=object)[idx]
    return {
        "produto": products.tolist(),
        "tamanho": [net.item_size[k] for k in item.tolist()],
        "origem": origin.tolist(),
        "destino": dest.tolist(),
        "tipo_origem": np.where(net.node_is_cd[origin], "cd", "loja").tolist(),
        "quantidade": out.quantity[idx].tolist(),
        "estoque_destino": out.dest_stock[idx].tolist(),
        "venda_media_destino": np.round(out.dest_daily_sales[idx].astype(np.float64), 3).tolist(),
        "estoque_origem": out.origin_stock[idx].tolist(),
        "venda_media_origem": np.round(out.origin_daily_sales[idx].astype(np.float64), 3).tolist(),
        "distancia_km": np.round(out.distance_km[idx].astype(np.float64), 1).tolist(),
        "justificativa": [out.justification[m] for m in idx.tolist()],
        "prioridade": [str(p) for p in prio],
        "prioridade_rank": [PRIORIDADE_RANK[str(p)] for p in prio],
        "score": out.score[idx].tolist(),
        "posicao": idx.tolist(),
        "dias_ate_ruptura": out.days_to_stockout[idx].tolist(),
        "em_campanha": out.in_campaign[idx].tolist(),
    }


# PostgreSQL binary COPY: every fixed-width column first, so that part of each row is one
# numpy record; the text columns follow, joined per row from pre-encoded pieces.
_FIXED = (
    ("id", "V16"),
    ("lote_id", "V16"),
    ("produto_id", "V16"),
    ("origem_id", "V16"),
    ("destino_id", "V16"),
    ("quantidade", ">i4"),
    ("estoque_destino", ">i4"),
    ("venda_media_destino", ">f8"),
    ("estoque_origem", ">i4"),
    ("venda_media_origem", ">f8"),
    ("distancia_km", ">f8"),
    ("prioridade_rank", ">i2"),
    ("score", ">i4"),
    ("posicao", ">i4"),
    ("dias_ate_ruptura", ">i4"),
    ("em_campanha", "u1"),
    ("data", ">i4"),  # days since 2000-01-01
    ("status", "S8"),
    ("vetado", "u1"),
)
_VARIABLE = ("tamanho", "cor", "tipo_origem", "prioridade", "justificativa")
_PG_EPOCH = date(2000, 1, 1)
_COPY_CHUNK_ROWS = 10_000


def _field(text: str) -> bytes:
    """One text field of a binary COPY row: big-endian length, then the UTF-8 bytes."""
    data = text.encode()
    return len(data).to_bytes(4, "big") + data


def _uuid_array(ids: list[uuid.UUID]) -> np.ndarray:
    return np.frombuffer(b"".join(i.bytes for i in ids), dtype="V16") if ids else np.empty(0, "V16")


def _write_postgres(out: EngineOutput, net: Network, idx: np.ndarray, lote_id: uuid.UUID, on: date) -> None:
    """The output rows ``idx`` through one binary ``COPY``, built with numpy in bulk.

    Per-value adaptation (``write_row``) or text formatting would dominate the write of
    a 150 k-row batch; binary also spares PostgreSQL the parsing.
    """
    count = len(idx)
    layout = [("ncols", ">i2")]
    for name, kind in _FIXED:
        layout += [(f"{name}_len", ">i4"), (name, kind)]
    fixed = np.zeros(count, dtype=np.dtype(layout))
    fixed["ncols"] = len(_FIXED) + len(_VARIABLE)
    for name, kind in _FIXED:
        fixed[f"{name}_len"] = np.dtype(kind).itemsize
    origin, dest, item = out.origin[idx], out.dest[idx], out.item[idx]
    products = net.item_product[item]
    nodes = _uuid_array(net.node_ids)
    prio = [str(p) for p in np.asarray(out.priority, dtype=object)[idx]]
    fixed["id"] = _ordered_uuid_bytes(count).view("V16").ravel()
    fixed["lote_id"] = np.frombuffer(lote_id.bytes, dtype="V16")[0]
    fixed["produto_id"] = _uuid_array(net.product_ids)[products]
    fixed["origem_id"] = nodes[origin]
    fixed["destino_id"] = nodes[dest]
    fixed["quantidade"] = out.quantity[idx]
    fixed["estoque_destino"] = out.dest_stock[idx]
    fixed["venda_media_destino"] = np.round(out.dest_daily_sales[idx].astype(np.float64), 3)
    fixed["estoque_origem"] = out.origin_stock[idx]
    fixed["venda_media_origem"] = np.round(out.origin_daily_sales[idx].astype(np.float64), 3)
    fixed["distancia_km"] = np.round(out.distance_km[idx].astype(np.float64), 1)
    fixed["prioridade_rank"] = [PRIORIDADE_RANK[p] for p in prio]
    fixed["score"] = out.score[idx]
    fixed["posicao"] = idx
    fixed["dias_ate_ruptura"] = out.days_to_stockout[idx]
    fixed["em_campanha"] = out.in_campaign[idx]
    fixed["data"] = (on - _PG_EPOCH).days
    fixed["status"] = b"pendente"

    size_field = [_field(s) for s in net.item_size]
    cor_field = [_field(c) for c in net.product_cor]
    tipo_field = {True: _field("cd"), False: _field("loja")}
    prio_field = {p: _field(p) for p in PRIORIDADE_RANK}
    justification = out.justification
    record = fixed.dtype.itemsize
    blob = fixed.tobytes()
    rows = (
        blob[i * record : (i + 1) * record]
        + size_field[k]
        + cor_field[p]
        + tipo_field[c]
        + prio_field[r]
        + _field(justification[m])
        for i, (k, p, c, r, m) in enumerate(
            zip(
                item.tolist(),
                products.tolist(),
                net.node_is_cd[origin].tolist(),
                prio,
                idx.tolist(),
                strict=True,
            )
        )
    )
    columns = ", ".join([name for name, _ in _FIXED] + list(_VARIABLE))
    raw = db.session.connection().connection.driver_connection
    statement = f"COPY recomendacoes ({columns}) FROM STDIN (FORMAT binary)"
    # Chunks go out from a writer thread, so PostgreSQL stores one chunk on the
    # second core while this one encodes the next.
    with raw.cursor() as cur, cur.copy(statement, writer=QueuedLibpqWriter(cur)) as cp:
        cp.write(_PG_HEADER + b"\x00" * 8)
        while chunk := b"".join(itertools.islice(rows, _COPY_CHUNK_ROWS)):
            cp.write(chunk)
        cp.write(b"\xff\xff")


def _write_generic(cols: dict[str, list], net: Network, lote_id: uuid.UUID, on: date) -> None:
    rows = [
        {
            "id": uuid.uuid4(),
            "lote_id": lote_id,
            "produto_id": net.product_ids[cols["produto"][i]],
            "tamanho": cols["tamanho"][i],
            "cor": net.product_cor[cols["produto"][i]],
            "origem_id": net.node_ids[cols["origem"][i]],
            "destino_id": net.node_ids[cols["destino"][i]],
            **{c: cols[c][i] for c in REC_COLUMNS if c in cols and c != "tamanho"},
            "data": on,
            "status": "pendente",
            "vetado": False,
        }
        for i in range(len(cols["posicao"]))
    ]
    if rows:
        db.session.execute(insert(Recomendacao), rows)


def _bulk_insert(out: EngineOutput, net: Network, keep: np.ndarray, lote_id: uuid.UUID, on: date) -> int:
    """Insert the output rows marked in ``keep`` in one statement; returns how many."""
    idx = np.flatnonzero(keep)
    if len(idx) == 0:
        return 0
    if db.session.get_bind().dialect.name == "postgresql":
        _write_postgres(out, net, idx, lote_id, on)
    else:
        _write_generic(_columns(out, net, keep), net, lote_id, on)
    return len(idx)


# --- generation ------------------------------------------------------------------------------


@dataclass
class GenerationResult:
    lote: Lote
    novas: int  # recommendations written by this run
    mantidas: int  # recommendations somebody acted on, kept as they were
    substituidas: int  # untouched pending ones replaced by this run
    regenerado: bool  # the week already had a batch
    timings: dict[str, float] = field(default_factory=dict)  # seconds per phase: read, compute, write


def generate(on: date, *, user: User | None = None, progress: Progress | None = None) -> GenerationResult:
    """Generate (or refresh) the batch of the ISO week of ``on``. Flushes; the caller commits."""
    from services.stock import engine  # imported late: the engine is a separate, heavy module

    report = progress or (lambda _step, _fraction: None)
    timings: dict[str, float] = {}
    rules = get_rules(for_update=True)

    report("leitura", 0.0)
    t0 = time.perf_counter()
    inputs, net = read_inputs(on, rules)
    timings["read"] = time.perf_counter() - t0

    report("calculo", 0.4)
    t0 = time.perf_counter()
    out = engine.recommend(inputs, engine_rules(rules))
    timings["compute"] = time.perf_counter() - t0
    risk = risk_figures(inputs)
    del inputs

    report("gravacao", 0.8)
    t0 = time.perf_counter()
    semana, inicio, fim = iso_week(on)
    lote = db.session.scalar(select(Lote).where(Lote.semana == semana).with_for_update())
    regenerado = lote is not None
    substituidas = mantidas = 0
    kept: set[tuple] = set()
    now = utcnow()
    if lote is None:
        lote = Lote(semana=semana, inicio=inicio, fim=fim, data=on, gerado_em=now, geracoes=1)
        lote.criado_por_id = user.id if user is not None else None
        db.session.add(lote)
        db.session.flush()
    else:
        # The status check re-runs on rows a concurrent decision locked (READ COMMITTED),
        # so a recommendation approved meanwhile is never deleted.
        result = db.session.execute(
            delete(Recomendacao)
            .where(
                Recomendacao.lote_id == lote.id,
                Recomendacao.status == "pendente",
                Recomendacao.vetado == false(),
                Recomendacao.ultima_acao_em.is_(None),
            )
            .execution_options(synchronize_session=False)
        )
        substituidas = result.rowcount or 0
        kept_rows = [
            tuple(r)
            for r in db.session.execute(
                select(
                    Recomendacao.origem_id,
                    Recomendacao.destino_id,
                    Recomendacao.produto_id,
                    Recomendacao.tamanho,
                ).where(Recomendacao.lote_id == lote.id)
            )
        ]
        mantidas = len(kept_rows)
        kept = set(kept_rows)
        lote.data = on
        lote.gerado_em = now
        lote.geracoes += 1
    lote.tamanhos_em_risco, lote.lojas_em_risco, lote.rupturas = risk
    db.session.flush()
    written = _bulk_insert(out, net, _kept_mask(out, net, kept), lote.id, on)
    db.session.flush()
    timings["write"] = time.perf_counter() - t0
    report("concluido", 1.0)
    return GenerationResult(
        lote=lote,
        novas=written,
        mantidas=mantidas,
        substituidas=substituidas,
        regenerado=regenerado,
        timings=timings,
    )


def generate_batch(on: date, *, user: User | None = None, progress: Progress | None = None) -> Lote:
    """Generate (or refresh) the batch of the ISO week of ``on`` and return it. The caller commits."""
    return generate(on, user=user, progress=progress).lote


# --- cadence ---------------------------------------------------------------------------------


def next_due(cadence: str, last: Lote | None, ref: date) -> date:
    """First day on which a batch is due under ``cadence``, given the newest batch."""
    if last is None:
        return ref
    if cadence == "diaria":
        return last.data + timedelta(days=1)
    if cadence == "semanal":
        return last.inicio + timedelta(days=7)
    if cadence == "quinzenal":
        return last.inicio + timedelta(days=14)
    # mensal: the first day of the month after the last generation
    first = last.data.replace(day=1)
    return (first + timedelta(days=32)).replace(day=1)


def run_due(
    ref: date | None = None, *, user: User | None = None, progress: Progress | None = None
) -> GenerationResult | None:
    """Generate a batch only when the cadence says one is due; None otherwise. Safe to repeat."""
    ref = ref or today()
    rules = get_rules(for_update=True)  # two cron runs at once: the second waits, then sees it done
    if ref < next_due(rules.cadence, newest_lote(), ref):
        return None
    return generate(ref, user=user, progress=progress)


def cadence_out(ref: date | None = None) -> dict:
    rules = get_rules()
    ref = ref or today()
    return {"cadence": rules.cadence, "proximoLote": max(ref, next_due(rules.cadence, newest_lote(), ref))}


def set_cadence(cadence: str, user: User) -> dict:
    rules = get_rules(for_update=True)
    rules.cadence = cadence
    rules.updated_by_id = user.id
    db.session.flush()
    return cadence_out()


# --- rules -----------------------------------------------------------------------------------


def rules_out(rules: RegrasRemanejamento | None = None) -> dict:
    rules = rules or get_rules()
    return {
        "priorizarCd": rules.priorizar_cd,
        "qtdMinima": rules.qtd_minima,
        "periodo": rules.periodo,
        "pesoDistancia": rules.peso_distancia,
        "pesoGiro": rules.peso_giro,
        "pesoEstoque": rules.peso_estoque,
        "bloqueioCampanha": rules.bloqueio_campanha,
        "qtdMaxima": rules.qtd_maxima,
        "lojasBloqueadas": list(rules.lojas_bloqueadas or []),
        "marcasBloqueadas": list(rules.marcas_bloqueadas or []),
    }


def update_rules(body: dict[str, Any], user: User) -> dict:
    """Replace the rules (fields left out take their defaults); checks that need the database."""
    errors: list[FieldError] = []
    if body["qtdMinima"] > body["qtdMaxima"]:
        errors.append(FieldError(("body", "qtdMinima"), "qtdMinima deve ser menor ou igual a qtdMaxima"))
    if body["pesoDistancia"] + body["pesoGiro"] + body["pesoEstoque"] == 0:
        errors.append(FieldError(("body", "pesoDistancia"), "Pelo menos um peso deve ser maior que zero"))
    lojas: list[str] = []
    parsed: dict[int, uuid.UUID] = {}
    for i, raw in enumerate(body["lojasBloqueadas"]):
        try:
            parsed[i] = uuid.UUID(str(raw))
        except ValueError:
            errors.append(
                FieldError(("body", "lojasBloqueadas", i), "Input should be a valid UUID", "uuid_parsing")
            )
    existing = (
        set(db.session.scalars(select(Loja.id).where(Loja.id.in_(set(parsed.values()))))) if parsed else set()
    )
    for i, loja_id in parsed.items():
        if loja_id not in existing:
            errors.append(FieldError(("body", "lojasBloqueadas", i), f"Loja {loja_id} não existe"))
        elif str(loja_id) not in lojas:
            lojas.append(str(loja_id))
    if errors:
        raise ValidationFailed(errors)
    marcas: list[str] = []
    for marca in body["marcasBloqueadas"]:
        if marca.strip() and marca.strip() not in marcas:
            marcas.append(marca.strip())
    rules = get_rules(for_update=True)
    rules.priorizar_cd = body["priorizarCd"]
    rules.qtd_minima = body["qtdMinima"]
    rules.qtd_maxima = body["qtdMaxima"]
    rules.periodo = body["periodo"]
    rules.peso_distancia = body["pesoDistancia"]
    rules.peso_giro = body["pesoGiro"]
    rules.peso_estoque = body["pesoEstoque"]
    rules.bloqueio_campanha = body["bloqueioCampanha"]
    rules.lojas_bloqueadas = lojas
    rules.marcas_bloqueadas = marcas
    rules.updated_by_id = user.id
    db.session.flush()
    return rules_out(rules)


# --- batches read side -----------------------------------------------------------------------


def _iso_utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _pending_counts(lote_ids: list[uuid.UUID]) -> dict[uuid.UUID, int]:
    if not lote_ids:
        return {}
    stmt = (
        select(Recomendacao.lote_id, func.count())
        .where(Recomendacao.lote_id.in_(lote_ids), Recomendacao.status == "pendente", active_condition())
        .group_by(Recomendacao.lote_id)
    )
    return {lid: int(c) for lid, c in db.session.execute(stmt)}


def lote_out(
    lote: Lote, *, pending: int | None = None, newest_id: uuid.UUID | None = None, recs=None
) -> dict:
    """LoteOut: status derived from the active pending ones, `novo` for the newest until 7 days old."""
    if pending is None:
        pending = _pending_counts([lote.id]).get(lote.id, 0)
    if newest_id is None:
        last = newest_lote()
        newest_id = last.id if last else None
    return {
        "id": lote.id,
        "semana": lote.semana,
        "periodo": f"{lote.inicio.isoformat()}/{lote.fim.isoformat()}",
        "criadoEm": _iso_utc(lote.created_at),
        "status": "aberto" if pending else "concluido",
        "novo": lote.id == newest_id and utcnow() - lote.created_at < NEW_FOR,
        "recomendacoes": recs or [],
    }


def list_lotes() -> list[dict]:
    """Every batch, newest week first, without their recommendations."""
    lotes = list(db.session.scalars(select(Lote).order_by(Lote.inicio.desc())))
    counts = _pending_counts([lote.id for lote in lotes])
    newest_id = lotes[0].id if lotes else None
    return [lote_out(lote, pending=counts.get(lote.id, 0), newest_id=newest_id) for lote in lotes]


def _active_where(lote_id: uuid.UUID, user: User) -> list:
    where = [Recomendacao.lote_id == lote_id, active_condition()]
    cond = visible_condition(user)
    if cond is not None:
        where.append(cond)
    return where


def fluxo(lote_id: uuid.UUID, user: User) -> list[dict]:
    """Units and recommendations leaving and arriving at each node of the batch's active ones.

    Only nodes that send or receive appear; CDs first, then stores, each by name.
    Aggregated by the database: a batch can hold hundreds of thousands of rows.
    """
    get_lote(lote_id)
    where = _active_where(lote_id, user)
    flows: dict[uuid.UUID, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for column, units, items in ((Recomendacao.origem_id, 0, 2), (Recomendacao.destino_id, 1, 3)):
        for node, total, count in db.session.execute(
            select(column, func.sum(Recomendacao.quantidade), func.count()).where(*where).group_by(column)
        ):
            flows[node][units] = int(total)
            flows[node][items] = int(count)
    if not flows:
        return []
    lojas = db.session.execute(select(Loja.id, Loja.nome, Loja.is_cd).where(Loja.id.in_(flows.keys()))).all()
    lojas.sort(key=lambda r: (not r.is_cd, r.nome, str(r.id)))
    return [
        {
            "id": r.id,
            "nome": r.nome,
            "isCd": bool(r.is_cd),
            "totalEnviado": flows[r.id][0],
            "totalRecebido": flows[r.id][1],
            "itensEnviados": flows[r.id][2],
            "itensRecebidos": flows[r.id][3],
        }
        for r in lojas
    ]


def totais(lote_id: uuid.UUID, user: User) -> dict:
    """Totals of the batch's active recommendations, aggregated by the database."""
    get_lote(lote_id)

    def count_if(cond):
        return func.coalesce(func.sum(case((cond, 1), else_=0)), 0)

    row = db.session.execute(
        select(
            func.count(),
            func.coalesce(func.sum(Recomendacao.quantidade), 0),
            func.count(func.distinct(Recomendacao.origem_id)),
            func.count(func.distinct(Recomendacao.destino_id)),
            count_if(Recomendacao.prioridade == "alta"),
            count_if(Recomendacao.tipo_origem == "cd"),
            count_if(Recomendacao.tipo_origem == "loja"),
        ).where(*_active_where(lote_id, user))
    ).one()
    keys = ("totalItens", "totalUnidades", "origens", "destinos", "altaPrioridade", "viaCd", "viaLoja")
    return {k: int(v) for k, v in zip(keys, row, strict=True)}


def lote_detail(lote_id: uuid.UUID, user: User) -> dict:
    lote = get_lote(lote_id)
    return lote_out(lote, recs=lote_recomendacoes(lote_id, user))
