"""Dump many rows in the shape a marshmallow schema documents, at the cost of a dict per row.

A schema stays the one definition of a body (its OpenAPI document, its field
names, its types); ``RowDumper`` reads that definition once and turns each row
into the same dict ``Schema().dump(row)`` would give, without marshmallow's
per-field machinery. The hot lists (thousands of rows per response) read plain
SQL rows (``Row`` objects: attribute access by label) and dump them here; an
ORM object works too.

Simple fields (strings, numbers, booleans, UUIDs, dates, timestamps) are
converted inline, to what the JSON encoder writes exactly as marshmallow would;
a ``Nested`` field (or a ``List`` of one) gets a ``RowDumper`` of its own schema,
and a plain ``Dict`` is copied; any other field (``Method``...) is serialised by
the field itself, so the result never differs from marshmallow's.
``tests/test_fast_dump.py`` compares both on every schema that uses this.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

import marshmallow as ma
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


def _nested(field: fields.Nested) -> Callable[[Any], Any] | None:
    """The nested schema's own generated dump; a mapping (no attributes to read) goes to marshmallow."""
    schema = field.schema
    if schema._hooks.get("post_dump") or schema._hooks.get("pre_dump"):
        return None
    dump = RowDumper(schema).dump
    slow = schema.dump

    def one(value: Any) -> Any:
        if value is None:
            return None
        return slow(value) if isinstance(value, Mapping) else dump(value)

    if schema.many or field.many:
        return lambda value: None if value is None else [one(item) for item in value]
    return one


def _converter(field: fields.Field) -> Callable[[Any], Any] | None:
    kind = type(field)
    if kind is fields.Nested:
        return _nested(field)
    if kind is fields.List and type(field.inner) is fields.Nested:
        each = _nested(field.inner)
        return None if each is None else (lambda value: None if value is None else [each(v) for v in value])
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
    per-field call beyond the value's own conversion.
    """

    def __init__(self, schema: type[ma.Schema] | ma.Schema):
        self.schema = schema() if isinstance(schema, type) else schema
        if self.schema._hooks.get("post_dump") or self.schema._hooks.get("pre_dump"):
            raise TypeError(f"{type(self.schema).__name__} has dump hooks; RowDumper cannot honour them")
        namespace: dict[str, Any] = {"_missing": ma.missing, "_get": self.schema.get_attribute}
        inline, slow = [], []
        for i, (name, field) in enumerate(self.schema.dump_fields.items()):
            key = field.data_key or name
            attribute = field.attribute or name
            convert = _converter(field)
            default = field.dump_default
            if convert is not None and attribute.isidentifier() and not callable(default):
                namespace[f"_c{i}"] = convert
                if default is ma.missing:
                    inline.append(f"    {key!r}: _c{i}(row.{attribute}),")
                else:
                    namespace[f"_d{i}"] = default
                    inline.append(f"    {key!r}: _c{i}(getattr(row, {attribute!r}, _d{i})),")
            else:
                namespace[f"_f{i}"] = field
                slow.append(
                    f"    value = _f{i}.serialize({attribute!r}, row, _get)\n"
                    f"    if value is not _missing:\n"
                    f"        out[{key!r}] = value"
                )
        source = "def dump(row):\n    out = {\n" + "\n".join(inline) + "\n    }\n"
        source += "".join(line + "\n" for line in slow) + "    return out\n"
        exec(compile(source, f"<RowDumper {type(self.schema).__name__}>", "exec"), namespace)
        self.dump: Callable[[Any], dict[str, Any]] = namespace["dump"]

    def dump_many(self, rows: Iterable[Any]) -> list[dict[str, Any]]:
        dump = self.dump
        return [dump(row) for row in rows]
