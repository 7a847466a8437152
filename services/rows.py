"""Statements of plain columns, read through the session's connection."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import inspect
from sqlalchemy.engine import CursorResult, Dialect
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
    context and a result for each call. Meant for a statement run on every request (the bearer
    token's account), where that machinery cost more than the statement.

    Listeners of the engine's cursor events (statement tracing, counting) still see the statement:
    while any is attached it runs through the connection's ``execute`` instead."""

    def __init__(self, statement: Select):
        self.statement = statement
        self._compiled: dict[str, _Compiled] = {}

    def first(self, params: dict[str, Any]) -> tuple | None:
        session = db.session()
        if session.autoflush:
            session.flush()
        connection = session.connection()
        if connection.dispatch.before_cursor_execute or connection.dispatch.after_cursor_execute:
            row = connection.execute(self.statement, params).first()
            return None if row is None else tuple(row)
        compiled = self._compiled.get(connection.dialect.name) or self._compile(connection.dialect)
        cursor = connection.connection.cursor()
        try:
            cursor.execute(compiled.sql, compiled.arguments(params))
            row = cursor.fetchone()
        finally:
            cursor.close()
        if row is None:
            return None
        values = list(row)
        for index, process in compiled.results:
            values[index] = process(values[index])
        return tuple(values)

    def _compile(self, dialect: Dialect) -> _Compiled:
        compiled = self.statement.compile(dialect=dialect)
        if compiled.post_compile_params or compiled.literal_execute_params:
            raise ValueError("DriverRead runs statements of plain bound parameters only")
        names = compiled.positiontup if compiled.positional else list(compiled.binds)
        entry = _Compiled(
            sql=compiled.string,
            positional=bool(compiled.positional),
            binds=tuple(
                (name, compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect))
                for name in names or ()
            ),
            results=tuple(
                (index, process)
                for index, column in enumerate(self.statement.selected_columns)
                if (process := column.type.dialect_impl(dialect).result_processor(dialect, None)) is not None
            ),
        )
        self._compiled[dialect.name] = entry
        return entry


@dataclass(frozen=True, slots=True)
class _Compiled:
    sql: str
    positional: bool  # qmark/format drivers take a tuple in the statement's order, others a mapping
    binds: tuple[tuple[str, Callable | None], ...]
    results: tuple[tuple[int, Callable], ...]  # the columns whose values the types convert

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
