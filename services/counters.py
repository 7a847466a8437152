"""Counter rows moved by deltas: ``INSERT ... ON CONFLICT DO UPDATE SET n = n + delta``.

Writes of issues keep several such counters (title pieces, list counts). Each
call is one statement whose text does not depend on how many rows it moves, so
SQLAlchemy compiles it once: on PostgreSQL the rows travel as one array per
column and ``unnest`` turns them back into rows; SQLite runs the statement once
per row (it is in-process). The rows are written in the order given: callers
sort them, so two transactions take their row locks in the same order.
"""

from __future__ import annotations

import functools

from sqlalchemy import Table, bindparam, func, select
from sqlalchemy.dialects.postgresql import ARRAY

from extensions import db
from services import unique


def add(table: Table, keys: tuple[str, ...], count: str, rows: list[tuple]) -> None:
    """Move ``count`` of the rows keyed by ``keys`` by each row's last value (creating the rows)."""
    if not rows:
        return
    names = (*keys, count)
    dialect = db.session.get_bind().dialect.name
    statement = _statement(table, keys, count, dialect)
    if dialect == "postgresql":
        db.session.execute(
            statement, {f"{name}_values": [row[i] for row in rows] for i, name in enumerate(names)}
        )
    else:
        db.session.execute(statement, [dict(zip(names, row, strict=True)) for row in rows])


@functools.cache
def _statement(table: Table, keys: tuple[str, ...], count: str, dialect: str):
    """Built once per table: building the statement cost more than running it."""
    names = (*keys, count)
    statement = unique.insert_for(dialect, table)
    if dialect == "postgresql":
        arrays = [bindparam(f"{name}_values", type_=ARRAY(table.c[name].type)) for name in names]
        rowset = func.unnest(*arrays).table_valued(*names, with_ordinality="position").render_derived()
        statement = statement.from_select(
            list(names), select(*(rowset.c[name] for name in names)).order_by(rowset.c.position)
        )
    return statement.on_conflict_do_update(
        index_elements=list(keys), set_={count: table.c[count] + statement.excluded[count]}
    )
