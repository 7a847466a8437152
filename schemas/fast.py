"""Dump many rows in the shape a marshmallow schema documents, at the cost of a dict per row.

A schema stays the one definition of a body (its OpenAPI document, its field
names, its types); ``RowDumper`` reads that definition once and turns each row
into the same dict ``Schema().dump(row)`` would give, without marshmallow's
per-field machinery. The hot lists (thousands of rows per response) read plain
SQL rows (``Row`` objects: attribute access by label) and dump them here; an
ORM object works too.

Simple fields (strings, numbers, booleans, UUIDs, dates, timestamps) are
converted inline, to what the JSON encoder writes exactly as marshmallow would;
a ``Nested`` schema (or a ``List`` of one) is dumped by a ``RowDumper`` of its
own, and a plain ``Dict`` is copied; any other field (``Method``, ``Raw``, a ``List`` of scalars...) is serialised
by the field itself, so the result never differs from marshmallow's.
``tests/test_fast_dump.py`` compares both on every schema that uses this.

``sql_json_object`` goes further for a whole batch on PostgreSQL: from the same schema it
builds the SQL expression that writes a row's JSON object in the database, so the worker
handles one string per row instead of each value; fields it cannot write exactly are refused.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

import marshmallow as ma
import orjson
import sqlalchemy as sa
from marshmallow import fields


def _uuid(value: Any) -> Any:
    # orjson writes a UUID in the canonical form str() gives; a string passes as it is.
    return value if value is None or isinstance(value, uuid.UUID | str) else str(value)


def _float(value: Any) -> Any:
    return None if value is None else float(value)


def _int(value: Any) -> Any:
    return None if value is None else int(value)


def _bool(value: Any) -> Any:
    return None if value is None else bool(value)


def _str(value: Any) -> Any:
    return None if value is None else str(value)


def _date(value: Any) -> Any:
    if value is None:
        return None
    return (value.date() if isinstance(value, datetime) else value).isoformat()


def _datetime(value: Any) -> Any:
    return None if value is None else value.isoformat()


# A value already of this exact type converts to itself: the generated code skips the call.
_NATIVE: dict[Callable[[Any], Any], type] = {
    _uuid: uuid.UUID,
    _float: float,
    _int: int,
    _bool: bool,
    _str: str,
}

# Exact classes only: a subclass may serialise differently (``UtcTimestamp`` is a String).
_CONVERTERS: dict[type, Callable[[Any], Any]] = {
    fields.UUID: _uuid,
    fields.Float: _float,
    fields.Integer: _int,
    fields.Boolean: _bool,
    fields.String: _str,
    fields.Email: _str,
    fields.Date: _date,
}


def _dict(value: Any) -> Any:
    return None if value is None else dict(value)


def _nested(field: fields.Field) -> Callable[[Any], Any] | None:
    """A ``Nested`` schema, or a ``List`` of one, dumped by a ``RowDumper`` of that schema."""
    inner = field.inner if type(field) is fields.List else field
    if type(inner) is not fields.Nested or not isinstance(inner.schema, ma.Schema):
        return None
    if inner.schema._hooks.get("post_dump") or inner.schema._hooks.get("pre_dump"):
        return None  # the field serialises itself
    made: list[RowDumper] = []

    def nested() -> RowDumper:
        # Made on first use: a schema may nest itself.
        if not made:
            made.append(RowDumper(inner.schema))
        return made[0]

    schema = inner.schema
    # How a value of each class is dumped: a mapping through the schema itself (marshmallow
    # reads dicts by key), anything else by attribute. Decided once per class: the ABC check
    # cost more than a small nested object's dump.
    by_class: dict[type, Callable[[Any], Any]] = {}

    def learn(value: Any) -> Callable[[Any], Any]:
        dump = by_class[type(value)] = schema.dump if isinstance(value, Mapping) else nested().dump
        return dump

    def many(value: Any) -> Any:
        if value is None:
            return None
        items = value if isinstance(value, list | tuple) else list(value)
        if not items:
            return []
        if isinstance(items[0], Mapping):
            return schema.dump(items, many=True)
        return nested().dump_many(items)

    def one(value: Any) -> Any:
        if value is None:
            return None
        dump = by_class.get(type(value))
        return (dump or learn(value))(value)

    return many if inner is not field or inner.many else one


def _converter(field: fields.Field) -> Callable[[Any], Any] | None:
    kind = type(field)
    if kind in (fields.List, fields.Nested):
        return _nested(field)
    if kind is fields.Dict and field.key_field is None and field.value_field is None:
        return _dict
    # A custom field may name the plain function its ``_serialize`` amounts to.
    if "fast_convert" in kind.__dict__:
        return kind.__dict__["fast_convert"].__func__
    if kind is fields.DateTime and field.format in (None, "iso", "iso8601"):
        return _datetime
    for base, convert in _CONVERTERS.items():
        if kind is base:
            return convert
    # The project's bounded input fields (schemas/fields.py) dump like their marshmallow base.
    if kind.__module__ == "schemas.fields" and kind.__mro__[1] in _CONVERTERS and not _overrides_dump(kind):
        return _CONVERTERS[kind.__mro__[1]]
    return None


def _overrides_dump(kind: type) -> bool:
    return "_serialize" in kind.__dict__


class RowDumper:
    """``RowDumper(Schema).dump(row)`` equals ``Schema().dump(row)``, built much faster.

    The schema's fields become one generated function whose body is a dict
    display (``{"produtoId": _uuid(row.produto_id), ...}``): no loop, no
    per-field call beyond the value's own conversion. ``dump_many`` on SQL rows
    goes further: a function made for the rows' columns unpacks each row by
    position (a ``Row``'s attribute access costs more than the rest of its dump)
    and converts only the values not already of their wire type.
    """

    def __init__(self, schema: type[ma.Schema] | ma.Schema):
        self.schema = schema() if isinstance(schema, type) else schema
        if self.schema._hooks.get("post_dump") or self.schema._hooks.get("pre_dump"):
            raise TypeError(f"{type(self.schema).__name__} has dump hooks; RowDumper cannot honour them")
        # (data key, attribute, converter or None for the field's own serialize, field)
        self._plan = []
        for name, field in self.schema.dump_fields.items():
            attribute = field.attribute or name
            convert = _converter(field)
            if convert is None or not attribute.isidentifier() or callable(field.dump_default):
                convert = None
            self._plan.append((field.data_key or name, attribute, convert, field))
        self.dump: Callable[[Any], dict[str, Any]] = self._compile(None)
        self._by_columns: dict[tuple[str, ...], Callable[[Any], dict[str, Any]]] = {}

    def _compile(self, columns: tuple[str, ...] | None) -> Callable[[Any], dict[str, Any]]:
        """The dump function: by attribute, or (``columns``) unpacking rows of those columns."""
        namespace: dict[str, Any] = {"_missing": ma.missing, "_get": self.schema.get_attribute}
        position = {column: j for j, column in enumerate(columns or ())}
        inline, slow = [], []
        for i, (key, attribute, convert, field) in enumerate(self._plan):
            default = field.dump_default
            if convert is None:
                namespace[f"_f{i}"] = field
                slow.append(
                    f"    value = _f{i}.serialize({attribute!r}, row, _get)\n"
                    f"    if value is not _missing:\n"
                    f"        out[{key!r}] = value"
                )
                continue
            namespace[f"_c{i}"] = convert
            if attribute in position:
                value = f"v{position[attribute]}"
                native = _NATIVE.get(convert)
                if native is None:
                    inline.append(f"    {key!r}: _c{i}({value}),")
                else:
                    namespace[f"_t{i}"] = native
                    inline.append(
                        f"    {key!r}: {value} if {value} is None or type({value}) is _t{i} else _c{i}({value}),"
                    )
            elif default is ma.missing:
                native = _NATIVE.get(convert)
                if native is None:
                    inline.append(f"    {key!r}: _c{i}(row.{attribute}),")
                else:
                    # The condition runs first: ``v`` is this field's value in either branch.
                    namespace[f"_t{i}"] = native
                    inline.append(
                        f"    {key!r}: v if (v := row.{attribute}) is None or type(v) is _t{i} else _c{i}(v),"
                    )
            else:
                namespace[f"_d{i}"] = default
                inline.append(f"    {key!r}: _c{i}(getattr(row, {attribute!r}, _d{i})),")
        source = "def dump(row):\n"
        if columns:
            source += "    " + ", ".join(f"v{j}" for j in range(len(columns))) + ", = row\n"
        source += "    out = {\n" + "\n".join(inline) + "\n    }\n"
        source += "".join(line + "\n" for line in slow) + "    return out\n"
        exec(compile(source, f"<RowDumper {type(self.schema).__name__}>", "exec"), namespace)
        return namespace["dump"]

    def dump_many(self, rows: Iterable[Any]) -> list[dict[str, Any]]:
        rows = rows if isinstance(rows, list | tuple) else list(rows)
        if not rows:
            return []
        columns = getattr(rows[0], "_fields", None)
        if columns is None:
            dump = self.dump
        else:
            dump = self._by_columns.get(columns)
            if dump is None:
                dump = self._by_columns[columns] = self._compile(tuple(columns))
        return [dump(row) for row in rows]


# --- the same objects written by PostgreSQL ---------------------------------------------------


def sql_text(text: str) -> Any:
    """A SQL string constant, written into the statement (no bind parameter)."""
    return sa.literal_column("'" + text.replace("'", "''") + "'", sa.Text)


def sql_quoted(value: Any) -> Any:
    # Only for text that holds no character JSON escapes (UUIDs, ISO dates): no escaping pass.
    return sql_text('"').concat(value).concat(sql_text('"'))


def _sql_float(value: Any) -> Any:
    """A double's JSON text that parses to the Python float the reference path gives.

    With ``extra_float_digits > 0`` (the reader sets it) PostgreSQL writes the shortest text
    that reads back as the same double; an integral value below 1e15 comes without a point
    (``3``), which would parse as an int, so ``.0`` is added. Infinities and NaN, which orjson
    writes as ``null``, become NULL (``x - x`` is NaN for them).
    """
    text = sa.cast(value, sa.Text)
    return sa.case(
        (
            sa.and_(value == sa.func.trunc(value), sa.func.abs(value) < sa.literal_column("1e15")),
            text.concat(sql_text(".0")),
        ),
        (value - value == sa.literal_column("0"), text),
    )


def _sql_value(name: str, field: fields.Field, column: Any) -> Any:
    """The JSON text of one field's value on PostgreSQL (NULL for null), or TypeError."""
    kind = type(field)
    if kind.__module__ == "schemas.fields" and kind.__mro__[1] in _CONVERTERS and not _overrides_dump(kind):
        kind = kind.__mro__[1]
    column_type = column.type
    if "sql_json" in kind.__dict__:
        return kind.__dict__["sql_json"].__func__(column)
    if kind is fields.UUID and isinstance(column_type, sa.Uuid):
        return sql_quoted(sa.cast(column, sa.Text))
    if kind is fields.Integer and isinstance(column_type, sa.Integer):
        return sa.cast(column, sa.Text)
    if kind is fields.Boolean and isinstance(column_type, sa.Boolean):
        return sa.cast(column, sa.Text)  # true / false
    if kind in (fields.String, fields.Email) and isinstance(column_type, sa.String):
        return sa.cast(sa.func.to_json(column), sa.Text)
    if kind is fields.Date and isinstance(column_type, sa.Date):
        return sql_quoted(sa.func.to_char(column, sql_text("YYYY-MM-DD")))
    if kind is fields.Float and isinstance(column_type, sa.Float | sa.Numeric):
        if isinstance(column_type, sa.Float) and not column_type.asdecimal:
            if column_type.precision is not None and column_type.precision <= 24:
                # A real's shortest text is not its double's: the two paths would differ.
                raise TypeError(f"field {name!r}: a single-precision column has no exact JSON here")
            return _sql_float(column)
        return _sql_float(sa.cast(column, sa.Double))  # numeric: to the double float() gives
    raise TypeError(
        f"field {name!r} ({type(field).__name__} over {column_type!r}) has no PostgreSQL JSON expression"
    )


def sql_json_object(schema: type[ma.Schema] | ma.Schema, columns: Iterable[Any]) -> Any:
    """A PostgreSQL text expression writing each row of ``columns`` as the JSON object
    ``Schema().dump(row)`` gives, with compact separators and the schema's key order.

    ``columns`` are model attributes (or table columns), matched to fields by name as
    ``RowDumper`` matches a row's attributes. Each field's value has a fixed SQL form chosen
    from the field's class and the column's type; a custom field may name its own
    (``sql_json(column)``, as ``UtcTimestamp`` does). A field with no exact form (a ``Nested``,
    a ``Method``, a ``DateTime`` with its session-dependent offset, a string field over a
    non-string column...) or without a column raises ``TypeError``: such a schema keeps the
    Python path. Floats need ``extra_float_digits > 0`` in the reading session.
    """
    schema = schema() if isinstance(schema, type) else schema
    if schema._hooks.get("post_dump") or schema._hooks.get("pre_dump"):
        raise TypeError(f"{type(schema).__name__} has dump hooks; SQL cannot honour them")
    by_name = {column.key: column for column in columns}
    expression = None
    for name, field in schema.dump_fields.items():
        attribute = field.attribute or name
        column = by_name.get(attribute)
        if column is None:
            raise TypeError(f"field {name!r} has no column {attribute!r}")
        value = sa.func.coalesce(_sql_value(name, field, column), sql_text("null"))
        key = orjson.dumps(field.data_key or name).decode()
        part = sql_text(("{" if expression is None else ",") + key + ":").concat(value)
        expression = part if expression is None else expression.concat(part)
    if expression is None:
        return sql_text("{}")
    return expression.concat(sql_text("}"))
