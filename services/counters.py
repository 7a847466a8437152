"""Counter rows moved by deltas: ``INSERT ... ON CONFLICT DO UPDATE SET n = n + delta``.

Writes of issues keep several such counters (title pieces, list counts). Each
call is one statement whose text does not depend on how many rows it moves, so
SQLAlchemy compiles it once: on PostgreSQL the rows travel as one array per
column and ``unnest`` turns them back into rows; SQLite runs the statement once
per row (it is in-process). The rows are written in the order given: callers
sort them, so two transactions take their row locks in the same order.
"""

from __future__ import annotations

from sqlalchemy import Table, bindparam, func, select
from sqlalchemy.dialects.postgresql import ARRAY

from extensions import db
from services import unique


def add(table: Table, keys: tuple[str, ...], count: str, rows: list[tuple]) -> None:
    """Move ``count`` of the rows keyed by ``keys`` by each row's last value (creating the rows)."""
    if not rows:
        return
    names = (*keys, count)
    statement = unique.insert(table)
    parameters = [dict(zip(names, row, strict=True)) for row in rows]
    if db.session.get_bind().dialect.name == "postgresql":
        arrays = [
            bindparam(f"{name}_values", [row[i] for row in rows], type_=ARRAY(table.c[name].type))
            for i, name in enumerate(names)
        ]
        rowset = func.unnest(*arrays).table_valued(*names, with_ordinality="position").render_derived()
        statement = statement.from_select(
            list(names), select(*(rowset.c[name] for name in names)).order_by(rowset.c.position)
        )
        parameters = None
    statement = statement.on_conflict_do_update(
        index_elements=list(keys), set_={count: table.c[count] + statement.excluded[count]}
    )
    db.session.execute(statement, parameters)
