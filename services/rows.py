"""Statements of plain columns, read through the session's connection."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import inspect
from sqlalchemy.engine import Connection, CursorResult, Dialect, Engine
from sqlalchemy.orm import make_transient_to_detached
from sqlalchemy.orm.attributes import instance_dict
from sqlalchemy.sql import Select

from extensions import db


def read_columns(statement: Any, params: dict | None = None) -> CursorResult:
    """Rows of a statement of columns, as the connection gives them: the session's ORM result
    (a tuple built per row, and its setup per statement) adds nothing to plain columns. Pending
    changes are flushed first, as the session would."""
    session = db.session()
    if session.autoflush:
        session.flush()
    return session.connection().execute(statement, params)


class DriverRead:
    """One fixed statement of plain columns and named parameters, compiled once per dialect and
    run on the driver's cursor of the session's connection, with its columns' types applied to
    the values both ways: what the connection's ``execute`` does, without building an execution
    context and a result for each call. Meant for statements built once and run on every
    request (the bearer token's account, the issue reads), where that machinery cost about as
    much as the statement. Rows are tuples that also name their columns, as SQLAlchemy's do.

    Listeners of the engine's cursor events (statement tracing, counting) still see the statement:
    while any is attached it runs through the connection's ``execute`` instead; so does a
    statement whose SQL depends on its values (an expanding ``IN``)."""

    def __init__(self, statement: Select):
        self.statement = statement
        self._compiled: dict[str, _Compiled | None] = {}

    def first(self, params: dict[str, Any]) -> tuple | None:
        connection, compiled = self._connection()
        return self._first_on(connection, compiled, params)

    def first_alone(self, params: dict[str, Any]) -> tuple | None:
        """``first`` for a request that reads nothing else: its one statement on a connection
        of the pool, without the session or a transaction (autocommit on PostgreSQL; SQLite's
        connections read without one, ``app.register_database_hooks``), so that it is the
        request's one round trip, with no BEGIN and no COMMIT. A session bound to a
        connection (the test suite's, inside its transaction) reads through that."""
        if isinstance(db.session.session_factory.kw.get("bind"), Connection):
            return self.first(params)
        engine = db.engine
        postgres = engine.dialect.name == "postgresql"
        compiled = None if _listened(engine) else self._prepared_for(engine.dialect)
        if compiled is None:
            with engine.connect() as connection:
                if postgres:
                    connection.execution_options(isolation_level="AUTOCOMMIT")
                return connection.execute(self.statement, params).first()
        # The pool's connection as it is, without a ``Connection`` and its isolation level
        # set and reset: the driver's autocommit, put back before the pool takes it again.
        pooled = engine.raw_connection()
        try:
            if postgres:
                pooled.driver_connection.autocommit = True
            try:
                return self._fetch_one(pooled, compiled, params, engine.dialect)
            finally:
                if postgres:
                    pooled.driver_connection.autocommit = False
        finally:
            pooled.close()

    def _first_on(self, connection: Connection, compiled: _Compiled | None, params: dict[str, Any]):
        if compiled is None:
            return connection.execute(self.statement, params).first()
        return self._fetch_one(connection.connection, compiled, params, connection.dialect)

    @staticmethod
    def _fetch_one(dbapi_connection: Any, compiled: _Compiled, params: dict[str, Any], dialect: Dialect):
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(compiled.sql, compiled.arguments(params))
            row = cursor.fetchone()
            if compiled.results is None:
                compiled.learn(cursor.description, dialect)
        finally:
            cursor.close()
        return None if row is None else compiled.shaped(row)

    def all(self, params: dict[str, Any] | None = None) -> list[tuple]:
        connection, compiled = self._connection()
        if compiled is None:
            return connection.execute(self.statement, params).all()
        cursor = connection.connection.cursor()
        try:
            cursor.execute(compiled.sql, compiled.arguments(params or {}))
            rows = cursor.fetchall()
            if compiled.results is None:
                compiled.learn(cursor.description, connection.dialect)
        finally:
            cursor.close()
        shaped = compiled.shaped
        return [shaped(row) for row in rows]

    def _connection(self):
        session = db.session()
        if session.autoflush:
            session.flush()
        connection = session.connection()
        return connection, self._prepared(connection)

    def _prepared(self, connection: Connection) -> _Compiled | None:
        return None if _listened(connection) else self._prepared_for(connection.dialect)

    def _prepared_for(self, dialect: Dialect) -> _Compiled | None:
        name = dialect.name
        return self._compiled[name] if name in self._compiled else self._compile(dialect)

    def _compile(self, dialect: Dialect) -> _Compiled | None:
        compiled = self.statement.compile(dialect=dialect)
        entry = None
        if not (compiled.post_compile_params or compiled.literal_execute_params):
            names = compiled.positiontup if compiled.positional else list(compiled.binds)
            columns = self.statement.selected_columns
            entry = _Compiled(
                sql=compiled.string,
                positional=bool(compiled.positional),
                binds=tuple(
                    (name, compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect))
                    for name in names or ()
                ),
                types=tuple(column.type.dialect_impl(dialect) for column in columns),
                row=namedtuple(
                    "Row", [column.key or f"_{i}" for i, column in enumerate(columns)], rename=True
                ),
            )
        self._compiled[dialect.name] = entry
        return entry


def _listened(target: Connection | Engine) -> bool:
    """Whether a listener of the cursor events (statement tracing, counting) wants to see them."""
    return bool(target.dispatch.before_cursor_execute or target.dispatch.after_cursor_execute)


@dataclass(slots=True)
class _Compiled:
    sql: str
    positional: bool  # qmark/format drivers take a tuple in the statement's order, others a mapping
    binds: tuple[tuple[str, Callable | None], ...]
    types: tuple  # each column's type, as the dialect implements it
    row: type  # a named tuple of the statement's columns
    # The columns whose values the types convert, learnt at the first run: a type's conversion
    # may depend on what the driver says it returns (PostgreSQL's numeric or float).
    results: tuple[tuple[int, Callable], ...] | None = None

    def learn(self, description, dialect: Dialect) -> None:
        self.results = tuple(
            (index, process)
            for index, (kind, column) in enumerate(zip(self.types, description, strict=True))
            if (process := kind.result_processor(dialect, column[1])) is not None
        )

    def shaped(self, row: tuple) -> tuple:
        if not self.results:
            return self.row._make(row)
        values = list(row)
        for index, process in self.results:
            values[index] = process(values[index])
        return self.row._make(values)

    def arguments(self, params: dict[str, Any]) -> tuple | dict:
        values = (
            (name, params[name] if process is None else process(params[name])) for name, process in self.binds
        )
        return tuple(value for _, value in values) if self.positional else dict(values)


def loaded_instance(model: type, values: dict[str, Any]) -> Any:
    """An instance of ``model`` in the session as if a query had loaded it from ``values`` (its
    primary key and any other columns; columns not given load when first read). The caller
    makes sure the session does not hold that row already."""
    instance = inspect(model).class_manager.new_instance()
    # Written as a query's loading writes them; the next call makes them its committed state.
    instance_dict(instance).update(values)
    make_transient_to_detached(instance)
    db.session.add(instance)
    return instance
