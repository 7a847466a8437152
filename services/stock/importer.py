"""Bulk import of the retailer's data from CSV: stores, products, stock, sales, campaigns.

Every import is validated in full before anything is written: the first bad
row rejects the whole file with its line number (the header is line 1) and the
reason, and the database is left as it was. Re-importing the same rows changes
nothing. Stores and products are upserts by ``codigo`` / ``sku``; stock is a
snapshot that replaces the stock of every store named in the file; sales rows
for a (day, store) pair replace what was stored for that pair; campaigns are
added unless an identical one exists.

Stock and sales files can be large (millions of rows), so they are parsed in
one pass with the ``csv`` module, references are resolved through dicts loaded
once, and rows are written in bulk on the raw DBAPI connection of the
session's own transaction: ``COPY`` into a temporary table followed by
``DELETE ... USING``, ``UPDATE ... FROM`` and ``INSERT ... SELECT`` on
PostgreSQL, ``executemany`` in large chunks on SQLite. Only rows that differ
are written, so an idempotent re-import is cheap. Services never commit; the
caller commits once.

Imports run one at a time: a second import waits until the first commits and
then reads what it wrote, so two imports of the same new rows both succeed (the
second finds them stored) instead of the second failing on a unique key.
"""

from __future__ import annotations

import csv
import math
import re
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, text

from extensions import db
from models.stock import Campanha, Estoque, Loja, Produto, Venda
from services.clock import today

KINDS = ("stores", "products", "stock", "sales", "campaigns")

COLUMNS: dict[str, tuple[str, ...]] = {
    "stores": ("codigo", "nome", "cidade", "lat", "lng", "is_cd", "bloqueada"),
    "products": ("sku", "nome", "marca", "categoria", "colecao", "cor", "tamanhos", "imagem"),
    "stock": ("loja", "sku", "tamanho", "qtd"),
    "sales": ("data", "loja", "sku", "tamanho", "qtd"),
    "campaigns": ("sku", "loja", "inicio", "fim"),
}

# The database column is a 32-bit integer.
MAX_QTD = 2_147_483_647
SIZE_SEPARATOR = "|"
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_BOOLEANS = {"true": True, "false": False}
_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
_COPY_CHUNK = 50_000
_SQLITE_CACHE_KIB = 256 * 1024
# Report parsing progress every this many bytes.
_PROGRESS_STEP = 1 << 20
# PostgreSQL advisory lock held by an import until its transaction ends ("giro-imp").
IMPORT_LOCK_KEY = int.from_bytes(b"giro-imp", "big")

Progress = Callable[[int], None]
Rows = Iterable[tuple[int, Sequence[str]]]


class ImportRejected(Exception):
    """A file that cannot be imported; ``line`` is 1-based, the header being line 1."""

    def __init__(self, line: int, reason: str):
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


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
        if self.dropped_sizes:
            lines.append(
                f"  removed {self.dropped_sizes:,} zero-quantity stock rows of sizes dropped from grids"
            )
        return "\n".join(lines)


# --------------------------------------------------------------------------- reading


def _decoded_lines(handle, progress: Progress | None) -> Iterator[str]:
    """Lines of a binary file decoded as UTF-8, reporting bytes read as it goes."""
    pending = 0
    for number, raw in enumerate(handle, start=1):
        if progress is not None:
            pending += len(raw)
            if pending >= _PROGRESS_STEP:
                progress(pending)
                pending = 0
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ImportRejected(number, "the file is not valid UTF-8") from None
        if number == 1 and line.startswith("\ufeff"):
            line = line[1:]
        yield line
    if progress is not None and pending:
        progress(pending)


def _records(lines: Iterable[str], kind: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields in the documented column order) for every non-blank row."""
    expected = COLUMNS[kind]
    reader = csv.reader(lines, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise ImportRejected(1, f"the file is empty; expected the header {','.join(expected)}")
        names = [h.strip().lower() for h in header]
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise ImportRejected(1, f"column {name!r} appears more than once")
            seen.add(name)
        missing = [c for c in expected if c not in seen]
        unknown = [n for n in names if n not in expected]
        if missing or unknown:
            problems = []
            if missing:
                problems.append("missing column(s): " + ", ".join(missing))
            if unknown:
                problems.append("unknown column(s): " + ", ".join(repr(u) for u in unknown))
            raise ImportRejected(1, "; ".join(problems) + f" (expected: {','.join(expected)})")
        width = len(names)
        order = [names.index(c) for c in expected]
        in_order = order == list(range(width))
        for fields in reader:
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue
            line = reader.line_num
            if len(fields) != width:
                raise ImportRejected(line, f"expected {width} fields, found {len(fields)}")
            if in_order:
                yield line, [f.strip() for f in fields]
            else:
                yield line, [fields[i].strip() for i in order]
    except csv.Error as exc:
        raise ImportRejected(reader.line_num or 1, f"malformed CSV ({exc})") from None


def read_file(
    kind: str, path: str | Path, progress: Progress | None = None
) -> Iterator[tuple[int, list[str]]]:
    """Records of a CSV file on disk, streamed."""
    with open(path, "rb") as handle:
        yield from _records(_decoded_lines(handle, progress), kind)


# --------------------------------------------------------------------------- field parsing


def _text(value: str, line: int, column: str, *, max_len: int, required: bool = True) -> str | None:
    if not value:
        if required:
            raise ImportRejected(line, f"{column} is empty")
        return None
    if len(value) > max_len:
        raise ImportRejected(line, f"{column} is longer than {max_len} characters")
    return value


def _qtd(value: str, line: int, column: str = "qtd") -> int:
    if not (value.isascii() and value.isdigit()):
        raise ImportRejected(line, f"{column} must be a whole number >= 0, got {value!r}")
    qtd = int(value)
    if qtd > MAX_QTD:
        raise ImportRejected(line, f"{column} {value} is too large")
    return qtd


def _date(value: str, line: int, column: str) -> date:
    if not _ISO_DATE.fullmatch(value):
        raise ImportRejected(line, f"{column} must be an ISO date YYYY-MM-DD, got {value!r}")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ImportRejected(line, f"{column} {value!r} is not a calendar date") from None


def _coordinate(value: str, line: int, column: str, limit: float) -> float | None:
    if not value:
        return None
    try:
        number = float(value)
    except ValueError:
        raise ImportRejected(line, f"{column} must be a number, got {value!r}") from None
    if not math.isfinite(number) or not -limit <= number <= limit:
        raise ImportRejected(line, f"{column} {value} is outside [-{limit:g}, {limit:g}]")
    return number


def _boolean(value: str, line: int, column: str) -> bool:
    parsed = _BOOLEANS.get(value.lower())
    if parsed is None:
        raise ImportRejected(line, f"{column} must be true or false, got {value!r}")
    return parsed


def _sizes(value: str, line: int) -> list[str]:
    if not value:
        raise ImportRejected(line, "tamanhos is empty")
    sizes = [s.strip() for s in value.split(SIZE_SEPARATOR)]
    for size in sizes:
        if not size:
            raise ImportRejected(line, f"tamanhos {value!r} has an empty size")
        if len(size) > 20:
            raise ImportRejected(line, f"size {size!r} is longer than 20 characters")
    duplicated = sorted({s for s in sizes if sizes.count(s) > 1})
    if duplicated:
        raise ImportRejected(line, f"tamanhos repeats {', '.join(duplicated)}")
    return sizes


# --------------------------------------------------------------------------- references


def _is_postgres() -> bool:
    return db.session.get_bind().dialect.name == "postgresql"


def _id_literal(value: uuid.UUID, postgres: bool) -> str:
    """How a uuid travels on the raw connection: text for COPY, SQLAlchemy's 32-hex form on SQLite."""
    return str(value) if postgres else value.hex


def _store_ids(postgres: bool) -> dict[str, str]:
    return {
        codigo: _id_literal(i, postgres) for i, codigo in db.session.execute(select(Loja.id, Loja.codigo))
    }


def _copy_escape(value: str) -> str:
    """A value as PostgreSQL's COPY text format needs it."""
    return value.translate(_COPY_ESCAPES)


def _product_refs(postgres: bool) -> dict[str, tuple[str, dict[str, str]]]:
    """sku -> (id literal, {size: size as written}); one shared string per size.

    On PostgreSQL sizes are handed back escaped for COPY (the only free text in
    a stock or sales row; dates and ids never need it).
    """
    return {
        sku: (_id_literal(i, postgres), {s: _copy_escape(s) if postgres else s for s in sizes})
        for i, sku, sizes in db.session.execute(select(Produto.id, Produto.sku, Produto.tamanhos))
    }


def _store(stores: dict[str, str], codigo: str, line: int, column: str = "loja") -> str:
    found = stores.get(codigo)
    if found is None:
        if not codigo:
            raise ImportRejected(line, f"{column} is empty")
        raise ImportRejected(line, f"unknown store {column} {codigo!r}")
    return found


def _product(products: dict, sku: str, line: int) -> tuple[str, dict[str, str]]:
    found = products.get(sku)
    if found is None:
        if not sku:
            raise ImportRejected(line, "sku is empty")
        raise ImportRejected(line, f"unknown sku {sku!r}")
    return found


def _grid_size(grid: dict[str, str], tamanho: str, sku: str, line: int) -> str:
    size = grid.get(tamanho)
    if size is None:
        if not tamanho:
            raise ImportRejected(line, "tamanho is empty")
        raise ImportRejected(
            line, f"size {tamanho!r} is not in the grid of {sku} ({SIZE_SEPARATOR.join(grid)})"
        )
    return size


# --------------------------------------------------------------------------- bulk writing


@dataclass
class _SyncCounts:
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0


def _sync_rows(
    table: str, key: tuple[str, ...], scope_width: int, rows: Sequence[tuple], postgres: bool
) -> _SyncCounts:
    """Make ``table`` hold exactly ``rows`` within every scope they name.

    ``rows`` are ``(*key, qtd)`` tuples with unique keys; a scope is the first
    ``scope_width`` key columns (the store for stock, the day and store for
    sales). Rows of a named scope that the file does not list are removed,
    changed quantities updated, new keys inserted; identical rows are not
    touched, so re-importing a file writes nothing. Runs on the raw DBAPI
    connection of the session's transaction, so it commits or rolls back with
    everything else.
    """
    raw = db.session.connection().connection.driver_connection
    sync = _sync_postgres if postgres else _sync_sqlite
    return sync(raw, table, key, scope_width, rows)


def _sync_postgres(
    raw, table: str, key: tuple[str, ...], scope_width: int, rows: Sequence[tuple]
) -> _SyncCounts:
    """COPY into a staging table, then one set-based statement per change."""
    counts = _SyncCounts()
    cols = ", ".join((*key, "qtd"))
    scope = key[:scope_width]
    staging = f"_import_{table}"
    same_key = " AND ".join(f"t.{c} = s.{c}" for c in key)
    same_scope = " AND ".join(f"t.{c} = p.{c}" for c in scope)
    with raw.cursor() as cur:
        cur.execute(f"DROP TABLE IF EXISTS {staging}")
        cur.execute(f"CREATE TEMPORARY TABLE {staging} (LIKE {table}) ON COMMIT DROP")
        with cur.copy(f"COPY {staging} ({cols}) FROM STDIN") as copy:
            # COPY text format built in large chunks: values arrive already
            # escaped (see _copy_escape), so joining them is all it takes.
            for start in range(0, len(rows), _COPY_CHUNK):
                copy.write(
                    "".join(["\t".join(map(str, row)) + "\n" for row in rows[start : start + _COPY_CHUNK]])
                )
        cur.execute(f"ANALYZE {staging}")
        cur.execute(
            f"DELETE FROM {table} t USING (SELECT DISTINCT {', '.join(scope)} FROM {staging}) p "
            f"WHERE {same_scope} AND NOT EXISTS (SELECT 1 FROM {staging} s WHERE {same_key})"
        )
        counts.removed = cur.rowcount
        cur.execute(f"UPDATE {table} t SET qtd = s.qtd FROM {staging} s WHERE {same_key} AND t.qtd <> s.qtd")
        counts.updated = cur.rowcount
        # What staging holds once the keys already stored are dropped is new:
        # a plain INSERT, much cheaper than an anti-join against the table
        # being written.
        cur.execute(f"DELETE FROM {staging} s USING {table} t WHERE {same_key}")
        present = cur.rowcount
        cur.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {staging}")
        counts.inserted = cur.rowcount
        # ON COMMIT DROP does not fire when the caller's commit only releases a savepoint.
        cur.execute(f"DROP TABLE {staging}")
    counts.unchanged = present - counts.updated
    return counts


def _sync_sqlite(
    raw, table: str, key: tuple[str, ...], scope_width: int, rows: Sequence[tuple]
) -> _SyncCounts:
    """Compare with what the named scopes hold, then executemany the differences."""
    counts = _SyncCounts()
    cols = ", ".join((*key, "qtd"))
    scope = key[:scope_width]
    cur = raw.cursor()
    # A page cache large enough for the table's indexes while they take a
    # million rows (SQLite's default is 2 MB); restored for the pooled connection.
    previous_cache = cur.execute("PRAGMA cache_size").fetchone()[0]
    cur.execute(f"PRAGMA cache_size = {-_SQLITE_CACHE_KIB}")
    try:
        # What the named scopes hold now, read through the primary key's prefix.
        scopes = sorted({row[:scope_width] for row in rows})
        where_scope = " AND ".join(f"{c} = ?" for c in scope)
        select_sql = f"SELECT {cols} FROM {table} WHERE {where_scope}"
        existing: dict[tuple, int] = {}
        for values in scopes:
            for *old_key, qtd in cur.execute(select_sql, values):
                existing[tuple(old_key)] = qtd
        inserts, updates = [], []
        for row in rows:
            old = existing.pop(row[:-1], None)
            if old is None:
                inserts.append(row)
            elif old != row[-1]:
                updates.append((row[-1], *row[:-1]))
            else:
                counts.unchanged += 1
        where_key = " AND ".join(f"{c} = ?" for c in key)
        if existing:
            cur.executemany(f"DELETE FROM {table} WHERE {where_key}", sorted(existing))
            counts.removed = len(existing)
        if updates:
            cur.executemany(f"UPDATE {table} SET qtd = ? WHERE {where_key}", updates)
            counts.updated = len(updates)
        # B-tree inserts in primary key order touch each page once.
        inserts.sort()
        placeholders = ", ".join("?" for _ in range(len(key) + 1))
        chunk = 100_000
        for start in range(0, len(inserts), chunk):
            cur.executemany(
                f"INSERT INTO {table} ({cols}) VALUES ({placeholders})", inserts[start : start + chunk]
            )
        counts.inserted = len(inserts)
    finally:
        cur.execute(f"PRAGMA cache_size = {int(previous_cache)}")
        cur.close()
    return counts


# --------------------------------------------------------------------------- kinds


def _import_stores(records: Rows, summary: ImportSummary) -> None:
    parsed: dict[str, dict[str, Any]] = {}
    first_line: dict[str, int] = {}
    for line, (codigo, nome, cidade, lat, lng, is_cd, bloqueada) in records:
        summary.rows += 1
        _text(codigo, line, "codigo", max_len=40)
        if codigo in first_line:
            raise ImportRejected(line, f"store {codigo!r} already appears on line {first_line[codigo]}")
        first_line[codigo] = line
        position = (_coordinate(lat, line, "lat", 90), _coordinate(lng, line, "lng", 180))
        if (position[0] is None) != (position[1] is None):
            raise ImportRejected(line, "lat and lng must both be given or both be empty")
        parsed[codigo] = {
            "nome": _text(nome, line, "nome", max_len=200),
            "cidade": _text(cidade, line, "cidade", max_len=200),
            "lat": position[0],
            "lng": position[1],
            "is_cd": _boolean(is_cd, line, "is_cd"),
            "bloqueada": _boolean(bloqueada, line, "bloqueada"),
        }
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


def _import_products(records: Rows, summary: ImportSummary) -> None:
    parsed: dict[str, dict[str, Any]] = {}
    first_line: dict[str, int] = {}
    for line, (sku, nome, marca, categoria, colecao, cor, tamanhos, imagem) in records:
        summary.rows += 1
        _text(sku, line, "sku", max_len=60)
        if sku in first_line:
            raise ImportRejected(line, f"sku {sku!r} already appears on line {first_line[sku]}")
        first_line[sku] = line
        parsed[sku] = {
            "nome": _text(nome, line, "nome", max_len=200),
            "marca": _text(marca, line, "marca", max_len=100),
            "categoria": _text(categoria, line, "categoria", max_len=100),
            "colecao": _text(colecao, line, "colecao", max_len=100),
            "cor": _text(cor, line, "cor", max_len=60),
            "tamanhos": _sizes(tamanhos, line),
            "imagem": _text(imagem, line, "imagem", max_len=500, required=False),
        }
    existing = {p.sku: p for p in db.session.scalars(select(Produto).where(Produto.sku.in_(list(parsed))))}
    # A size leaving a grid must not strand units on hand: refuse while any
    # store holds some; rows at zero are just removed with the size.
    shrinking = {
        produto.id: (sku, sorted(set(produto.tamanhos) - set(parsed[sku]["tamanhos"])))
        for sku, produto in existing.items()
        if set(produto.tamanhos) - set(parsed[sku]["tamanhos"])
    }
    stale_zero_rows: list[tuple[uuid.UUID, str]] = []
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
                raise ImportRejected(
                    first_line[sku],
                    f"the new grid of {sku} drops size {tamanho!r}, but stores still hold stock of it; "
                    "import a stock snapshot without that size first",
                )
            stale_zero_rows.append((produto_id, tamanho))
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


def _import_stock(records: Rows, summary: ImportSummary) -> None:
    postgres = _is_postgres()
    stores = _store_ids(postgres)
    products = _product_refs(postgres)
    seen: dict[tuple[str, str, str], int] = {}
    qtds: list[int] = []
    rows = 0
    for line, fields in records:
        rows += 1
        loja, sku, tamanho, qtd = fields
        # The hot path is inline dict lookups; the helpers only run to explain a miss.
        loja_id = stores.get(loja) or _store(stores, loja, line)
        produto_id, grid = products.get(sku) or _product(products, sku, line)
        size = grid.get(tamanho) or _grid_size(grid, tamanho, sku, line)
        quantity = int(qtd) if qtd.isdigit() and len(qtd) < 10 and qtd.isascii() else _qtd(qtd, line)
        key = (loja_id, produto_id, size)
        first = seen.setdefault(key, line)
        if first != line:
            raise ImportRejected(line, f"stock of {loja} / {sku} / {tamanho} already given on line {first}")
        qtds.append(quantity)
    summary.rows = rows
    summary.scopes = len({key[0] for key in seen})
    if not seen:
        return
    counts = _sync_rows(
        Estoque.__tablename__,
        ("loja_id", "produto_id", "tamanho"),
        1,
        [(*key, q) for key, q in zip(seen, qtds, strict=True)],
        postgres,
    )
    _count(summary, counts)


def _import_sales(records: Rows, summary: ImportSummary) -> None:
    postgres = _is_postgres()
    stores = _store_ids(postgres)
    products = _product_refs(postgres)
    last_day = today()
    days: dict[str, str] = {}
    seen: dict[tuple[str, str, str, str], int] = {}
    qtds: list[int] = []
    rows = 0
    for line, fields in records:
        rows += 1
        data, loja, sku, tamanho, qtd = fields
        day = days.get(data)
        if day is None:
            parsed = _date(data, line, "data")
            if parsed > last_day:
                raise ImportRejected(line, f"data {data} is in the future (today is {last_day.isoformat()})")
            day = days[data] = data
        # The hot path is inline dict lookups; the helpers only run to explain a miss.
        loja_id = stores.get(loja) or _store(stores, loja, line)
        produto_id, grid = products.get(sku) or _product(products, sku, line)
        size = grid.get(tamanho) or _grid_size(grid, tamanho, sku, line)
        quantity = int(qtd) if qtd.isdigit() and len(qtd) < 10 and qtd.isascii() else _qtd(qtd, line)
        key = (day, loja_id, produto_id, size)
        first = seen.setdefault(key, line)
        if first != line:
            raise ImportRejected(
                line, f"sales of {data} / {loja} / {sku} / {tamanho} already given on line {first}"
            )
        qtds.append(quantity)
    summary.rows = rows
    summary.scopes = len({key[:2] for key in seen})
    if not seen:
        return
    new_rows = [(*key, q) for key, q in zip(seen, qtds, strict=True)]
    # Only the rows are needed from here on; free the duplicate check's index early.
    seen.clear()
    qtds.clear()
    counts = _sync_rows(
        Venda.__tablename__, ("data", "loja_id", "produto_id", "tamanho"), 2, new_rows, postgres
    )
    _count(summary, counts)


def _import_campaigns(records: Rows, summary: ImportSummary) -> None:
    stores = {codigo: i for i, codigo in db.session.execute(select(Loja.id, Loja.codigo))}
    products = {sku: i for i, sku in db.session.execute(select(Produto.id, Produto.sku))}
    wanted: dict[tuple[uuid.UUID, uuid.UUID | None, date, date], int] = {}
    for line, (sku, loja, inicio, fim) in records:
        summary.rows += 1
        produto_id = products.get(sku)
        if produto_id is None:
            raise ImportRejected(line, "sku is empty" if not sku else f"unknown sku {sku!r}")
        loja_id = None
        if loja:
            loja_id = stores.get(loja)
            if loja_id is None:
                raise ImportRejected(line, f"unknown store loja {loja!r}")
        start = _date(inicio, line, "inicio")
        end = _date(fim, line, "fim")
        if end < start:
            raise ImportRejected(line, f"fim {fim} is before inicio {inicio}")
        key = (produto_id, loja_id, start, end)
        first = wanted.setdefault(key, line)
        if first != line:
            raise ImportRejected(line, f"the same campaign already appears on line {first}")
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


def _count(summary: ImportSummary, counts: _SyncCounts) -> None:
    summary.inserted, summary.updated = counts.inserted, counts.updated
    summary.unchanged, summary.removed = counts.unchanged, counts.removed


_IMPORTERS: dict[str, Callable[[Rows, ImportSummary], None]] = {
    "stores": _import_stores,
    "products": _import_products,
    "stock": _import_stock,
    "sales": _import_sales,
    "campaigns": _import_campaigns,
}


# --------------------------------------------------------------------------- entry points


def _one_import_at_a_time() -> None:
    """Wait for any other import to commit, before this one reads anything."""
    if _is_postgres():
        db.session.execute(select(func.pg_advisory_xact_lock(IMPORT_LOCK_KEY)))
    else:
        # SQLite has one writer at a time. A write that changes nothing takes that lock
        # now, so a second import waits for it (busy timeout) instead of failing later,
        # when its reading transaction would have to become a writer.
        db.session.execute(text("DELETE FROM campanhas WHERE 0 = 1"))


def import_records(kind: str, records: Rows) -> ImportSummary:
    """Validate and write (line number, fields in ``COLUMNS[kind]`` order) records; flushes, never commits."""
    if kind not in _IMPORTERS:
        raise ValueError(f"unknown import kind {kind!r}; expected one of {', '.join(KINDS)}")
    _one_import_at_a_time()
    summary = ImportSummary(kind=kind)
    started = time.perf_counter()
    _IMPORTERS[kind](records, summary)
    summary.seconds = time.perf_counter() - started
    return summary


def import_rows(kind: str, rows: Iterable[Sequence[str]]) -> ImportSummary:
    """Import rows given as strings in ``COLUMNS[kind]`` order, numbered as lines of a file from 2."""
    return import_records(kind, enumerate(rows, start=2))


def import_file(kind: str, path: str | Path, progress: Progress | None = None) -> ImportSummary:
    """Import one CSV file; ``progress`` is called with the number of bytes read since its last call."""
    return import_records(kind, read_file(kind, path, progress))
