"""Writing an import in bulk: the stores and products a file refers to, resolved once, and
``sync_rows``, which makes the stock or sales table hold exactly a file's rows.

Rows go through the raw DBAPI connection of the session's own transaction:
``COPY`` into a temporary table followed by ``DELETE ... USING``, ``UPDATE ...
FROM`` and ``INSERT ... SELECT`` on PostgreSQL, multi-row ``INSERT``s run with
``executemany`` on SQLite. Only rows that differ are written. A load into a
table that holds no more rows than it adds drops the table's indexes (and, on
PostgreSQL, its keys) and builds them once at the end, in the same transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter

from sqlalchemy import select

from extensions import db
from models.stock import Loja, Produto
from services.stock.import_csv import SIZE_SEPARATOR, ImportRejected

_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
_COPY_CHUNK = 50_000
_SQLITE_CACHE_KIB = 256 * 1024
_WORK_MEMORY = "256MB"
# SQLite's limit on parameters per statement before 3.32 (999); newer builds allow more.
_SQLITE_MAX_PARAMETERS = 999
# Rows flattened into one parameter list at a time.
_SQLITE_CHUNK = 100_000


# --------------------------------------------------------------------------- references


def is_postgres() -> bool:
    return db.session.get_bind().dialect.name == "postgresql"


def id_literal(value: uuid.UUID, postgres: bool) -> str:
    """How a uuid travels on the raw connection: text for COPY, SQLAlchemy's 32-hex form on SQLite."""
    return str(value) if postgres else value.hex


def store_ids(postgres: bool) -> dict[str, str]:
    return {codigo: id_literal(i, postgres) for i, codigo in db.session.execute(select(Loja.id, Loja.codigo))}


def copy_escape(value: str) -> str:
    """A value as PostgreSQL's COPY text format needs it."""
    return value.translate(_COPY_ESCAPES)


def product_refs(postgres: bool) -> dict[str, tuple[str, dict[str, str]]]:
    """sku -> (id literal, {size: size as written}); one shared string per size.

    On PostgreSQL sizes are handed back escaped for COPY (the only free text in
    a stock or sales row; dates and ids never need it).
    """
    return {
        sku: (id_literal(i, postgres), {s: copy_escape(s) if postgres else s for s in sizes})
        for i, sku, sizes in db.session.execute(select(Produto.id, Produto.sku, Produto.tamanhos))
    }


def store_ref(stores: dict[str, str], codigo: str, line: int, column: str = "loja") -> str:
    found = stores.get(codigo)
    if found is None:
        if not codigo:
            raise ImportRejected(line, f"{column} is empty")
        raise ImportRejected(line, f"unknown store {column} {codigo!r}")
    return found


def product_ref(products: dict, sku: str, line: int) -> tuple[str, dict[str, str]]:
    found = products.get(sku)
    if found is None:
        if not sku:
            raise ImportRejected(line, "sku is empty")
        raise ImportRejected(line, f"unknown sku {sku!r}")
    return found


def grid_size(grid: dict[str, str], tamanho: str, sku: str, line: int) -> str:
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
class SyncCounts:
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0


def sync_rows(
    table: str, key: tuple[str, ...], scope_width: int, rows: Sequence[tuple], postgres: bool
) -> SyncCounts:
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
) -> SyncCounts:
    """COPY into a staging table, then one set-based statement per change."""
    counts = SyncCounts()
    cols = ", ".join((*key, "qtd"))
    scope = key[:scope_width]
    staging = f"_import_{table}"
    same_key = " AND ".join(f"t.{c} = s.{c}" for c in key)
    same_scope = " AND ".join(f"t.{c} = p.{c}" for c in scope)
    with raw.cursor() as cur:
        # Joins of a million rows against as many, and index builds, done in
        # memory rather than in temporary files (until the import commits).
        cur.execute(f"SET LOCAL work_mem = '{_WORK_MEMORY}'")
        cur.execute(f"SET LOCAL maintenance_work_mem = '{_WORK_MEMORY}'")
        cur.execute(f"DROP TABLE IF EXISTS {staging}")
        cur.execute(f"CREATE TEMPORARY TABLE {staging} (LIKE {table}) ON COMMIT DROP")
        with cur.copy(f"COPY {staging} ({cols}) FROM STDIN") as copy:
            # COPY text format built in large chunks: values arrive already
            # escaped (see copy_escape), so formatting them is all it takes,
            # one C-level % per row.
            line = "\t".join(["%s"] * (len(key) + 1)) + "\n"
            for start in range(0, len(rows), _COPY_CHUNK):
                copy.write("".join(map(line.__mod__, rows[start : start + _COPY_CHUNK])))
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
        adding = len(rows) - present
        rebuild = _drop_postgres_indexes(cur, table) if _is_bulk_load(cur, table, adding, "%s") else []
        # Without indexes the order does not matter; with them, rows in primary
        # key order touch each index page once instead of at random.
        order = "" if rebuild else f" ORDER BY {', '.join(key)}"
        cur.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {staging}{order}")
        counts.inserted = cur.rowcount
        for statement in rebuild:
            cur.execute(statement)
        # ON COMMIT DROP does not fire when the caller's commit only releases a savepoint.
        cur.execute(f"DROP TABLE {staging}")
    counts.unchanged = present - counts.updated
    return counts


def _is_bulk_load(cur, table: str, adding: int, placeholder: str) -> bool:
    """Whether ``table`` holds no more rows than an import is about to add to it.

    Then building its indexes afresh (one sort each) and checking its foreign
    keys in one join costs less than maintaining them row by row, as the
    first load of a history does. Counting stops past ``adding`` rows, so a
    large table is not read in full to find out.
    """
    if adding <= 0:
        return False
    cur.execute(f"SELECT count(*) FROM (SELECT 1 FROM {table} LIMIT {placeholder}) t", (adding + 1,))
    return cur.fetchone()[0] <= adding


def _drop_postgres_indexes(cur, table: str) -> list[str]:
    """Drop ``table``'s indexes, primary key and foreign keys; the statements that restore them.

    DDL is transactional in PostgreSQL: a failure or rollback brings every
    one back. The table stays locked (ACCESS EXCLUSIVE) until the import
    commits, and so do the tables its foreign keys reference, which is why
    this is kept to loads into a table that is empty or nearly so. A table
    other tables reference keeps everything (its keys must stay in place).
    """
    cur.execute("SELECT 1 FROM pg_constraint WHERE confrelid = %s::regclass LIMIT 1", (table,))
    if cur.fetchone():
        return []
    # Foreign keys last, so their checks run once the rows are all in.
    cur.execute(
        "SELECT format('%%I', conname), pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE conrelid = %s::regclass AND contype IN ('p', 'u', 'x', 'f') "
        "ORDER BY contype = 'f', conname",
        (table,),
    )
    constraints = cur.fetchall()
    cur.execute(
        "SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index i "
        "WHERE i.indrelid = %s::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint c "
        "WHERE c.conrelid = i.indrelid AND c.conindid = i.indexrelid) ORDER BY 1",
        (table,),
    )
    indexes = cur.fetchall()
    if constraints:
        cur.execute(f"ALTER TABLE {table} " + ", ".join(f"DROP CONSTRAINT {name}" for name, _ in constraints))
    if indexes:
        cur.execute("DROP INDEX " + ", ".join(name for name, _ in indexes))
    return [
        *(definition for _, definition in indexes),
        *(f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition}" for name, definition in constraints),
    ]


def _sync_sqlite(
    raw, table: str, key: tuple[str, ...], scope_width: int, rows: Sequence[tuple]
) -> SyncCounts:
    """Compare with what the named scopes hold, then executemany the differences."""
    counts = SyncCounts()
    cols = ", ".join((*key, "qtd"))
    scope = key[:scope_width]
    cur = raw.cursor()
    # A page cache large enough for the table's indexes while they take a
    # million rows (SQLite's default is 2 MB); restored for the pooled connection.
    previous_cache = cur.execute("PRAGMA cache_size").fetchone()[0]
    cur.execute(f"PRAGMA cache_size = {-_SQLITE_CACHE_KIB}")
    try:
        # What the named scopes hold now, read through the primary key's prefix.
        scopes = sorted(set(map(itemgetter(*range(scope_width)), rows)))
        if scope_width == 1:
            scopes = [(value,) for value in scopes]
        where_scope = " AND ".join(f"{c} = ?" for c in scope)
        select_sql = f"SELECT {cols} FROM {table} WHERE {where_scope}"
        existing: dict[tuple, int] = {}
        for values in scopes:
            for *old_key, qtd in cur.execute(select_sql, values):
                existing[tuple(old_key)] = qtd
        if existing:
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
        else:
            # The named scopes hold nothing yet: every row is new.
            inserts = sorted(rows)
        rebuild = _drop_sqlite_indexes(cur, table) if _is_bulk_load(cur, table, len(inserts), "?") else []
        _insert_sqlite(cur, f"INSERT INTO {table} ({cols}) VALUES ", len(key) + 1, inserts)
        for statement in rebuild:
            cur.execute(statement)
        counts.inserted = len(inserts)
    finally:
        cur.execute(f"PRAGMA cache_size = {int(previous_cache)}")
        cur.close()
    return counts


def _insert_sqlite(cur, insert: str, width: int, rows: Sequence[tuple]) -> None:
    """``rows`` inserted many to a statement: binding one long VALUES list costs SQLite
    and the driver much less per row than running a one-row statement per row."""
    per_statement = _SQLITE_MAX_PARAMETERS // width
    full = len(rows) - len(rows) % per_statement
    chunk = per_statement * max(1, _SQLITE_CHUNK // per_statement)
    step = per_statement * width
    row_values = "(" + ", ".join("?" * width) + ")"
    many = insert + ", ".join([row_values] * per_statement)
    for start in range(0, full, chunk):
        flat = list(chain.from_iterable(rows[start : min(start + chunk, full)]))
        cur.executemany(many, (flat[i : i + step] for i in range(0, len(flat), step)))
    if full < len(rows):
        rest = rows[full:]
        cur.execute(insert + ", ".join([row_values] * len(rest)), list(chain.from_iterable(rest)))


def _drop_sqlite_indexes(cur, table: str) -> list[str]:
    """Drop ``table``'s secondary indexes; the statements that recreate them.

    Inside the import's transaction: readers keep seeing the indexes of the
    last commit, and a rollback brings them back. The primary key's own
    index cannot be dropped and stays.
    """
    cur.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
        (table,),
    )
    indexes = cur.fetchall()
    for name, _ in indexes:
        cur.execute(f'DROP INDEX "{name}"')
    return [definition for _, definition in indexes]
