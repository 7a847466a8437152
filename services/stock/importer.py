"""Bulk import of the retailer's data from CSV: stores, products, stock, sales, campaigns.

Every import is validated in full before anything is written: a bad row
rejects the whole file, and the database is left as it was. Reading goes on
past a bad row, so the rejection names every bad line with its reason (the
header is line 1), up to ``MAX_REPORTED_ERRORS`` and then how many more; only
a bad header or broken CSV quoting stops it early. Re-importing the same rows changes
nothing. Stores and products are upserts by ``codigo`` / ``sku``; stock is a
snapshot that replaces the stock of every store named in the file; sales rows
for a (day, store) pair replace what was stored for that pair; campaigns are
added unless an identical one exists.

Stock and sales files can be large (millions of rows), so they are parsed in
one pass with the ``csv`` module, references are resolved through dicts loaded
once, and rows are written in bulk on the raw DBAPI connection of the
session's own transaction: ``COPY`` into a temporary table followed by
``DELETE ... USING``, ``UPDATE ... FROM`` and ``INSERT ... SELECT`` on
PostgreSQL, multi-row ``INSERT``s on SQLite (see ``import_sync``). Only rows
that differ are written, so an idempotent re-import is cheap. Services never
commit; the caller commits once.

Imports run one at a time: a second import waits until the first commits and
then reads what it wrote, so two imports of the same new rows both succeed (the
second finds them stored) instead of the second failing on a unique key.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from operator import itemgetter
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, text

from extensions import db
from models.stock import Campanha, Estoque, Loja, Produto, Venda
from services.clock import today
from services.stock import transit
from services.stock.import_csv import (
    COLUMNS,
    KINDS,
    MAX_REPORTED_ERRORS,
    ImportErrors,
    ImportRejected,
    LineError,
    Progress,
    parse_boolean,
    parse_coordinate,
    parse_date,
    parse_qtd,
    parse_sizes,
    parse_text,
    read_file,
)
from services.stock.import_sync import (
    SyncCounts,
    copy_escape,
    grid_size,
    id_literal,
    is_postgres,
    product_ref,
    product_refs,
    store_ids,
    store_ref,
    sync_rows,
)

__all__ = [
    "COLUMNS",
    "KINDS",
    "MAX_REPORTED_ERRORS",
    "ImportRejected",
    "ImportSummary",
    "LineError",
    "import_file",
    "import_records",
    "import_rows",
]

# PostgreSQL advisory lock held by an import until its transaction ends ("giro-imp").
IMPORT_LOCK_KEY = int.from_bytes(b"giro-imp", "big")

Rows = Iterable[tuple[int, Sequence[str]]]


@dataclass
class ImportSummary:
    """What an import did. Counters that do not apply to a kind stay at zero."""

    kind: str
    rows: int = 0
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    # Stock and sales: how many stores / (day, store) pairs the file replaced,
    # and how many stored rows of those it removed because the file omits them.
    scopes: int = 0
    removed: int = 0
    # Products: zero-quantity stock rows of sizes dropped from a grid.
    dropped_sizes: int = 0
    # Stock: executed transfers the snapshot shows arrived, closed as received.
    received: int = 0
    seconds: float = 0.0

    def describe(self) -> str:
        """A short human summary, one line per fact."""
        rate = f" ({self.rows / self.seconds:,.0f} rows/s)" if self.seconds > 0 and self.rows else ""
        lines = [f"{self.kind}: {self.rows:,} rows read in {self.seconds:.2f} s{rate}"]
        if self.kind in ("stores", "products", "campaigns"):
            parts = [f"{self.inserted:,} inserted"]
            if self.kind != "campaigns":
                parts.append(f"{self.updated:,} updated")
            parts.append(f"{self.unchanged:,} unchanged")
            lines.append("  " + ", ".join(parts))
        elif self.kind in ("stock", "sales"):
            scopes = "store(s)" if self.kind == "stock" else "(day, store) pair(s)"
            lines.append(
                f"  {self.scopes:,} {scopes} replaced: {self.inserted:,} inserted, {self.updated:,} updated, "
                f"{self.unchanged:,} unchanged, {self.removed:,} removed"
            )
        if self.received:
            lines.append(f"  {self.received:,} transfer(s) in transit closed as received")
        if self.dropped_sizes:
            lines.append(
                f"  removed {self.dropped_sizes:,} zero-quantity stock rows of sizes dropped from grids"
            )
        return "\n".join(lines)


# --------------------------------------------------------------------------- kinds


def _import_stores(records: Rows, summary: ImportSummary, errors: ImportErrors) -> None:
    parsed: dict[str, dict[str, Any]] = {}
    first_line: dict[str, int] = {}
    for line, (codigo, nome, cidade, lat, lng, is_cd, bloqueada) in records:
        summary.rows += 1
        try:
            parse_text(codigo, line, "codigo", max_len=40)
            if codigo in first_line:
                raise ImportRejected(line, f"store {codigo!r} already appears on line {first_line[codigo]}")
            first_line[codigo] = line
            position = (parse_coordinate(lat, line, "lat", 90), parse_coordinate(lng, line, "lng", 180))
            if (position[0] is None) != (position[1] is None):
                raise ImportRejected(line, "lat and lng must both be given or both be empty")
            parsed[codigo] = {
                "nome": parse_text(nome, line, "nome", max_len=200),
                "cidade": parse_text(cidade, line, "cidade", max_len=200),
                "lat": position[0],
                "lng": position[1],
                "is_cd": parse_boolean(is_cd, line, "is_cd"),
                "bloqueada": parse_boolean(bloqueada, line, "bloqueada"),
            }
        except ImportRejected as exc:
            errors.add(exc)
    errors.raise_if_any()
    existing = {
        loja.codigo: loja for loja in db.session.scalars(select(Loja).where(Loja.codigo.in_(list(parsed))))
    }
    for codigo, values in parsed.items():
        loja = existing.get(codigo)
        if loja is None:
            db.session.add(Loja(codigo=codigo, **values))
            summary.inserted += 1
        elif _assign(loja, values):
            summary.updated += 1
        else:
            summary.unchanged += 1
    db.session.flush()


def _assign(obj: Any, values: dict[str, Any]) -> bool:
    """Set the attributes that differ; True when any did."""
    changed = False
    for name, value in values.items():
        if getattr(obj, name) != value:
            setattr(obj, name, value)
            changed = True
    return changed


def _import_products(records: Rows, summary: ImportSummary, errors: ImportErrors) -> None:
    parsed: dict[str, dict[str, Any]] = {}
    first_line: dict[str, int] = {}
    for line, (sku, nome, marca, categoria, colecao, cor, tamanhos, imagem) in records:
        summary.rows += 1
        try:
            parse_text(sku, line, "sku", max_len=60)
            if sku in first_line:
                raise ImportRejected(line, f"sku {sku!r} already appears on line {first_line[sku]}")
            first_line[sku] = line
            parsed[sku] = {
                "nome": parse_text(nome, line, "nome", max_len=200),
                "marca": parse_text(marca, line, "marca", max_len=100),
                "categoria": parse_text(categoria, line, "categoria", max_len=100),
                "colecao": parse_text(colecao, line, "colecao", max_len=100),
                "cor": parse_text(cor, line, "cor", max_len=60),
                "tamanhos": parse_sizes(tamanhos, line),
                "imagem": parse_text(imagem, line, "imagem", max_len=500, required=False),
            }
        except ImportRejected as exc:
            errors.add(exc)
    existing = {p.sku: p for p in db.session.scalars(select(Produto).where(Produto.sku.in_(list(parsed))))}
    # A size leaving a grid must not strand units on hand: refuse while any
    # store holds some; rows at zero are just removed with the size.
    shrinking = {
        produto.id: (sku, sorted(set(produto.tamanhos) - set(parsed[sku]["tamanhos"])))
        for sku, produto in existing.items()
        if set(produto.tamanhos) - set(parsed[sku]["tamanhos"])
    }
    stale_zero_rows: list[tuple[uuid.UUID, str]] = []
    refused_grids: set[str] = set()
    if shrinking:
        held = db.session.execute(
            select(Estoque.produto_id, Estoque.tamanho, Estoque.qtd).where(
                Estoque.produto_id.in_(list(shrinking))
            )
        )
        for produto_id, tamanho, qtd in held:
            sku, removed = shrinking[produto_id]
            if tamanho not in removed:
                continue
            if qtd > 0:
                if sku not in refused_grids:  # one error per product line, however many sizes
                    refused_grids.add(sku)
                    errors.add(
                        ImportRejected(
                            first_line[sku],
                            f"the new grid of {sku} drops size {tamanho!r}, but stores still hold stock of "
                            "it; import a stock snapshot without that size first",
                        )
                    )
                continue
            stale_zero_rows.append((produto_id, tamanho))
    errors.raise_if_any()
    for produto_id, tamanho in stale_zero_rows:
        db.session.execute(
            Estoque.__table__.delete().where(Estoque.produto_id == produto_id, Estoque.tamanho == tamanho)
        )
    summary.dropped_sizes = len(stale_zero_rows)
    for sku, values in parsed.items():
        produto = existing.get(sku)
        if produto is None:
            db.session.add(Produto(sku=sku, **values))
            summary.inserted += 1
        elif _assign(produto, values):
            summary.updated += 1
        else:
            summary.unchanged += 1
    db.session.flush()


def _import_stock(records: Rows, summary: ImportSummary, errors: ImportErrors) -> None:
    postgres = is_postgres()
    stores = store_ids(postgres)
    products = product_refs(postgres)
    seen: dict[tuple[str, str, str], int] = {}
    qtds: list[int] = []
    rows = 0
    for line, fields in records:
        rows += 1
        loja, sku, tamanho, qtd = fields
        # The hot path is inline dict lookups; the helpers only run to explain a miss.
        # A bad row is collected and skipped (its key never enters ``seen``).
        try:
            loja_id = stores.get(loja) or store_ref(stores, loja, line)
            produto_id, grid = products.get(sku) or product_ref(products, sku, line)
            size = grid.get(tamanho) or grid_size(grid, tamanho, sku, line)
            quantity = int(qtd) if qtd.isdigit() and len(qtd) < 10 and qtd.isascii() else parse_qtd(qtd, line)
            key = (loja_id, produto_id, size)
            first = seen.setdefault(key, line)
            if first != line:
                raise ImportRejected(
                    line, f"stock of {loja} / {sku} / {tamanho} already given on line {first}"
                )
        except ImportRejected as exc:
            errors.add(exc)
            continue
        qtds.append(quantity)
    summary.rows = rows
    errors.raise_if_any()
    summary.scopes = len({key[0] for key in seen})
    if not seen:
        return
    summary.received = _close_arrived(seen, qtds, postgres)
    counts = sync_rows(
        Estoque.__tablename__,
        ("loja_id", "produto_id", "tamanho"),
        1,
        [(*key, q) for key, q in zip(seen, qtds, strict=True)],
        postgres,
    )
    _count(summary, counts)


def _close_arrived(seen: dict[tuple[str, str, str], int], qtds: list[int], postgres: bool) -> int:
    """Transfers in transit the snapshot shows at their destination (``transit.close_arrived``),
    read against the stock stored before the snapshot replaces it."""
    named = {uuid.UUID(key[0]) for key in seen}
    positions: dict[tuple[str, str, str], int] = {}

    def file_qtd(loja_id: uuid.UUID, produto_id: uuid.UUID, tamanho: str) -> int:
        if not positions:  # only when some transfer is in transit to a named store
            positions.update((key, i) for i, key in enumerate(seen))
        size = copy_escape(tamanho) if postgres else tamanho
        i = positions.get((id_literal(loja_id, postgres), id_literal(produto_id, postgres), size))
        return 0 if i is None else qtds[i]

    return transit.close_arrived(named, file_qtd)


_DAY_AND_STORE = itemgetter(0, 1)


def _import_sales(records: Rows, summary: ImportSummary, errors: ImportErrors) -> None:
    postgres = is_postgres()
    stores = store_ids(postgres)
    products = product_refs(postgres)
    last_day = today()
    days: dict[str, str] = {}
    seen: dict[tuple[str, str, str, str], int] = {}
    qtds: list[int] = []
    rows = 0
    for line, fields in records:
        rows += 1
        data, loja, sku, tamanho, qtd = fields
        # The hot path is inline dict lookups; the helpers only run to explain a miss.
        # A bad row is collected and skipped (its key never enters ``seen``).
        try:
            day = days.get(data)
            if day is None:
                parsed = parse_date(data, line, "data")
                if parsed > last_day:
                    raise ImportRejected(
                        line, f"data {data} is in the future (today is {last_day.isoformat()})"
                    )
                day = days[data] = data
            loja_id = stores.get(loja) or store_ref(stores, loja, line)
            produto_id, grid = products.get(sku) or product_ref(products, sku, line)
            size = grid.get(tamanho) or grid_size(grid, tamanho, sku, line)
            quantity = int(qtd) if qtd.isdigit() and len(qtd) < 10 and qtd.isascii() else parse_qtd(qtd, line)
            key = (day, loja_id, produto_id, size)
            first = seen.setdefault(key, line)
            if first != line:
                raise ImportRejected(
                    line, f"sales of {data} / {loja} / {sku} / {tamanho} already given on line {first}"
                )
        except ImportRejected as exc:
            errors.add(exc)
            continue
        qtds.append(quantity)
    summary.rows = rows
    errors.raise_if_any()
    summary.scopes = len(set(map(_DAY_AND_STORE, seen)))
    if not seen:
        return
    # (*key, qtd) tuples, built by C-level map rather than a Python loop.
    new_rows = list(map(tuple.__add__, seen, zip(qtds)))
    # Only the rows are needed from here on; free the duplicate check's index early.
    seen.clear()
    qtds.clear()
    counts = sync_rows(
        Venda.__tablename__, ("data", "loja_id", "produto_id", "tamanho"), 2, new_rows, postgres
    )
    _count(summary, counts)


def _import_campaigns(records: Rows, summary: ImportSummary, errors: ImportErrors) -> None:
    stores = {codigo: i for i, codigo in db.session.execute(select(Loja.id, Loja.codigo))}
    products = {sku: i for i, sku in db.session.execute(select(Produto.id, Produto.sku))}
    wanted: dict[tuple[uuid.UUID, uuid.UUID | None, date, date], int] = {}
    for line, (sku, loja, inicio, fim) in records:
        summary.rows += 1
        try:
            produto_id = products.get(sku)
            if produto_id is None:
                raise ImportRejected(line, "sku is empty" if not sku else f"unknown sku {sku!r}")
            loja_id = None
            if loja:
                loja_id = stores.get(loja)
                if loja_id is None:
                    raise ImportRejected(line, f"unknown store loja {loja!r}")
            start = parse_date(inicio, line, "inicio")
            end = parse_date(fim, line, "fim")
            if end < start:
                raise ImportRejected(line, f"fim {fim} is before inicio {inicio}")
            key = (produto_id, loja_id, start, end)
            first = wanted.setdefault(key, line)
            if first != line:
                raise ImportRejected(line, f"the same campaign already appears on line {first}")
        except ImportRejected as exc:
            errors.add(exc)
    errors.raise_if_any()
    existing = {
        tuple(row)
        for row in db.session.execute(
            select(Campanha.produto_id, Campanha.loja_id, Campanha.inicio, Campanha.fim)
        )
    }
    for produto_id, loja_id, start, end in wanted:
        if (produto_id, loja_id, start, end) in existing:
            summary.unchanged += 1
            continue
        db.session.add(Campanha(produto_id=produto_id, loja_id=loja_id, inicio=start, fim=end))
        summary.inserted += 1
    db.session.flush()


def _count(summary: ImportSummary, counts: SyncCounts) -> None:
    summary.inserted, summary.updated = counts.inserted, counts.updated
    summary.unchanged, summary.removed = counts.unchanged, counts.removed


_IMPORTERS: dict[str, Callable[[Rows, ImportSummary, ImportErrors], None]] = {
    "stores": _import_stores,
    "products": _import_products,
    "stock": _import_stock,
    "sales": _import_sales,
    "campaigns": _import_campaigns,
}


# --------------------------------------------------------------------------- entry points


def _one_import_at_a_time() -> None:
    """Wait for any other import to commit, before this one reads anything."""
    if is_postgres():
        db.session.execute(select(func.pg_advisory_xact_lock(IMPORT_LOCK_KEY)))
    else:
        # SQLite has one writer at a time. A write that changes nothing takes that lock
        # now, so a second import waits for it (busy timeout) instead of failing later,
        # when its reading transaction would have to become a writer.
        db.session.execute(text("DELETE FROM campanhas WHERE 0 = 1"))


def import_records(kind: str, records: Rows, errors: ImportErrors | None = None) -> ImportSummary:
    """Validate and write (line number, fields in ``COLUMNS[kind]`` order) records; flushes, never commits.

    Raises ``ImportRejected`` with every bad line (``errors`` holds those the reader of the
    records met) before writing anything."""
    if kind not in _IMPORTERS:
        raise ValueError(f"unknown import kind {kind!r}; expected one of {', '.join(KINDS)}")
    _one_import_at_a_time()
    errors = ImportErrors() if errors is None else errors
    summary = ImportSummary(kind=kind)
    started = time.perf_counter()
    _IMPORTERS[kind](records, summary, errors)
    summary.seconds = time.perf_counter() - started
    return summary


def import_rows(kind: str, rows: Iterable[Sequence[str]]) -> ImportSummary:
    """Import rows given as strings in ``COLUMNS[kind]`` order, numbered as lines of a file from 2."""
    return import_records(kind, enumerate(rows, start=2))


def import_file(kind: str, path: str | Path, progress: Progress | None = None) -> ImportSummary:
    """Import one CSV file; ``progress`` is called with the number of bytes read since its last call."""
    errors = ImportErrors()
    return import_records(kind, read_file(kind, path, errors, progress), errors)
