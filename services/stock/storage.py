"""Writing a batch's recommendations in bulk, with time-ordered ids.

On PostgreSQL the rows go through one binary ``COPY`` built with numpy (a batch
holds ~150 k recommendations); other databases get one ``INSERT`` through the
ORM. The columns written and their binary layout come from the ``Recomendacao``
model: a column added to the model must get a value in ``_row_values`` (or be
listed in ``DECISION_COLUMNS``), or every write fails.
"""

from __future__ import annotations

import itertools
import os
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np
from psycopg.copy import QueuedLibpqWriter
from sqlalchemy import BigInteger, Boolean, Date, Float, Integer, SmallInteger, String, Uuid, insert

from extensions import db
from models.stock_batches import PRIORIDADE_RANK, PRIORIDADES, TIPOS_ORIGEM, Recomendacao
from services.stock.engine_contract import EngineOutput, Network

PG_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00"  # the signature of a binary COPY stream


def is_postgres() -> bool:
    return db.session.get_bind().dialect.name == "postgresql"


# --- ids -------------------------------------------------------------------------------------


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


def _uuid_array(ids: Sequence[uuid.UUID]) -> np.ndarray:
    return np.frombuffer(b"".join(i.bytes for i in ids), dtype="V16") if ids else np.empty(0, "V16")


# --- writing ---------------------------------------------------------------------------------

# Set by decisions and receipts only: a generation leaves them NULL.
DECISION_COLUMNS = frozenset(
    {
        "motivo_veto",
        "motivo_recusa",
        "motivo_recusa_texto",
        "ultima_acao_em",
        "ultima_acao_por_id",
        "ultima_acao_por_nome",
        "executada_em",
        "executada_data",
        "quantidade_recebida",
        "recebida_em",
        "recebida_data",
    }
)
# What a generation writes: every other column of the model, in the model's order.
REC_COLUMNS = tuple(c.name for c in Recomendacao.__table__.columns if c.name not in DECISION_COLUMNS)


@dataclass(frozen=True)
class Coded:
    """A column whose value in row i is ``values[codes[i]]``.

    Ids and texts repeat across a batch (a few hundred stores, a few sizes), so
    each distinct value is converted once rather than once per row.
    """

    values: Sequence[Any]
    codes: np.ndarray


def _row_values(out: EngineOutput, net: Network, idx: np.ndarray, lote_id: uuid.UUID, on: date) -> dict:
    """Every written column but ``id`` for the output rows ``idx``: an array, a ``Coded`` or one value."""
    origin, dest, item = out.origin[idx], out.dest[idx], out.item[idx]
    products = net.item_product[item]
    rank = np.array(
        [PRIORIDADE_RANK[str(p)] for p in np.asarray(out.priority, dtype=object)[idx]], dtype=np.int16
    )
    values = {
        "lote_id": lote_id,
        "produto_id": Coded(net.product_ids, products),
        "tamanho": Coded(net.item_size, item),
        "cor": Coded(net.product_cor, products),
        "origem_id": Coded(net.node_ids, origin),
        "destino_id": Coded(net.node_ids, dest),
        "tipo_origem": Coded(TIPOS_ORIGEM, np.where(net.node_is_cd[origin], 0, 1)),
        "quantidade": out.quantity[idx],
        "estoque_destino": out.dest_stock[idx],
        "venda_media_destino": np.round(out.dest_daily_sales[idx].astype(np.float64), 3),
        "estoque_origem": out.origin_stock[idx],
        "venda_media_origem": np.round(out.origin_daily_sales[idx].astype(np.float64), 3),
        "distancia_km": np.round(out.distance_km[idx].astype(np.float64), 1),
        "justificativa": Coded(out.justification, idx),
        "prioridade": Coded(PRIORIDADES, rank),
        "prioridade_rank": rank,
        "score": out.score[idx],
        "posicao": idx,
        "dias_ate_ruptura": out.days_to_stockout[idx],
        "em_campanha": out.in_campaign[idx],
        "venda_extra_esperada": np.round(np.asarray(out.expected_gain, dtype=np.float64)[idx], 3),
        "data": on,
        "status": "pendente",
        "vetado": False,
    }
    expected = set(REC_COLUMNS) - {"id"}
    if values.keys() != expected:
        raise RuntimeError(
            "recomendacoes columns without a value in a new batch: "
            f"{sorted(expected - values.keys())}; unknown: {sorted(values.keys() - expected)}"
        )
    return values


def insert_recommendations(
    out: EngineOutput, net: Network, keep: np.ndarray, lote_id: uuid.UUID, on: date
) -> int:
    """Insert the output rows marked in ``keep`` in one statement; returns how many."""
    idx = np.flatnonzero(keep)
    if len(idx) == 0:
        return 0
    values = _row_values(out, net, idx, lote_id, on)
    if is_postgres():
        _write_postgres(values, len(idx))
    else:
        _write_generic(values, len(idx))
    return len(idx)


def _write_generic(values: dict[str, Any], count: int) -> None:
    columns = {"id": [uuid.uuid4() for _ in range(count)]}
    for name, value in values.items():
        if isinstance(value, Coded):
            columns[name] = [value.values[c] for c in value.codes.tolist()]
        elif isinstance(value, np.ndarray):
            columns[name] = value.tolist()
        else:
            columns[name] = [value] * count
    names = list(columns)
    db.session.execute(
        insert(Recomendacao),
        [dict(zip(names, row, strict=True)) for row in zip(*columns.values(), strict=True)],
    )


# PostgreSQL binary COPY: every fixed-width column first, so that part of each row is one
# numpy record; the text columns follow, each row joined from pre-encoded pieces.
_PG_EPOCH = date(2000, 1, 1)
_COPY_CHUNK_ROWS = 10_000


# Each SQL type's value in a binary COPY row, as a big-endian numpy type; None for text.
_KIND_OF_TYPE = {
    Uuid: "V16",
    Boolean: "u1",
    Date: ">i4",  # days since 2000-01-01
    SmallInteger: ">i2",
    Integer: ">i4",
    BigInteger: ">i8",
    Float: ">f8",
    String: None,  # Text too
}


def _binary_kind(column) -> str | None:
    for sql_type in type(column.type).__mro__:  # the most specific type first
        if sql_type in _KIND_OF_TYPE:
            return _KIND_OF_TYPE[sql_type]
    raise TypeError(f"recomendacoes.{column.name}: no binary COPY layout for {column.type!r}")


_BINARY_KINDS = {c.name: _binary_kind(c) for c in Recomendacao.__table__.columns if c.name in REC_COLUMNS}


def _binary(value: Any) -> Any:
    """A column's value as numpy assigns it into the fixed-width record."""
    if isinstance(value, Coded):
        if value.values and isinstance(value.values[0], uuid.UUID):
            return _uuid_array(value.values)[value.codes]
        return np.asarray(value.values)[value.codes]
    if isinstance(value, uuid.UUID):
        return np.frombuffer(value.bytes, dtype="V16")[0]
    if isinstance(value, date):
        return (value - _PG_EPOCH).days
    if isinstance(value, str):
        return value.encode()
    return value


def _field(text: str) -> bytes:
    """One text field of a binary COPY row: big-endian length, then the UTF-8 bytes."""
    data = text.encode()
    return len(data).to_bytes(4, "big") + data


def _text_fields(column: Coded) -> Iterator[bytes]:
    """The encoded field of each row; a small vocabulary is encoded once, a large one per row."""
    codes = column.codes.tolist()
    if len(column.values) < len(codes):
        encoded = [_field(v) for v in column.values]
        return map(encoded.__getitem__, codes)
    if len(codes) == len(column.values) and np.array_equal(column.codes, np.arange(len(codes))):
        # every value once, in order (a batch's justifications, built on demand): no lookups
        return map(_field, column.values)
    return map(_field, map(column.values.__getitem__, codes))


def _write_postgres(values: dict[str, Any], count: int) -> None:
    """The rows through one binary ``COPY``, built with numpy in bulk.

    Per-value adaptation (``write_row``) or text formatting would dominate the write of
    a 150 k-row batch; binary also spares PostgreSQL the parsing. A text column with
    one value for every row (``status``) travels in the fixed-width part.
    """
    values = {"id": _ordered_uuid_bytes(count).view("V16").ravel(), **values}
    fixed: list[tuple[str, str]] = []
    texts: list[str] = []
    for name in REC_COLUMNS:
        kind, value = _BINARY_KINDS[name], values[name]
        if kind is not None:
            fixed.append((name, kind))
        elif isinstance(value, str) and value:
            fixed.append((name, f"S{len(value.encode())}"))
        elif isinstance(value, Coded):
            texts.append(name)
        else:
            raise TypeError(f"recomendacoes.{name}: a text column takes one string or a Coded column")
    layout = [("ncols", ">i2")]
    for name, kind in fixed:
        layout += [(f"{name}_len", ">i4"), (name, kind)]
    record = np.zeros(count, dtype=np.dtype(layout))
    record["ncols"] = len(fixed) + len(texts)
    for name, kind in fixed:
        record[f"{name}_len"] = np.dtype(kind).itemsize
        record[name] = _binary(values[name])

    size = record.dtype.itemsize
    blob = record.tobytes()
    del record
    # Bytes slices: joining memoryviews of a few dozen bytes costs more than copying them.
    records = (blob[i : i + size] for i in range(0, count * size, size))
    rows = map(b"".join, zip(records, *(_text_fields(values[name]) for name in texts), strict=True))
    columns = ", ".join([name for name, _ in fixed] + texts)
    raw = db.session.connection().connection.driver_connection
    statement = f"COPY recomendacoes ({columns}) FROM STDIN (FORMAT binary)"
    # Chunks go out from a writer thread, so PostgreSQL stores one chunk on the
    # second core while this one encodes the next.
    with raw.cursor() as cur, cur.copy(statement, writer=QueuedLibpqWriter(cur)) as cp:
        cp.write(PG_COPY_HEADER + b"\x00" * 8)
        while chunk := b"".join(itertools.islice(rows, _COPY_CHUNK_ROWS)):
            cp.write(chunk)
        cp.write(b"\xff\xff")
