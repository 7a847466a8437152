"""Every input both APIs document is bounded: the OpenAPI documents show each limit."""

from __future__ import annotations

import marshmallow as ma
import pytest

import schemas.auth
import schemas.stock.batches
import schemas.stock.catalogue
import schemas.tracker.accounts
import schemas.tracker.admin
import schemas.tracker.collab
import schemas.tracker.issues
import schemas.tracker.tenancy
from schemas.common import QuerySchema
from schemas.fields import Text

SCHEMA_MODULES = (
    schemas.auth,
    schemas.stock.catalogue,
    schemas.stock.batches,
    schemas.tracker.accounts,
    schemas.tracker.admin,
    schemas.tracker.collab,
    schemas.tracker.issues,
    schemas.tracker.tenancy,
)

UNBOUNDED_STRING_FORMATS = {"uuid", "date", "date-time"}  # fixed-size by their format


def _resolve(doc: dict, schema: dict) -> dict:
    while "$ref" in schema or len(schema.get("allOf", ())) == 1:
        if "allOf" in schema:  # a nested schema with its own description
            schema = schema["allOf"][0]
            continue
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = doc["components"]["schemas"][name]
    return schema


def _unbounded(doc: dict, schema: dict, where: str) -> list[str]:
    """The places under ``schema`` that accept input of unbounded size."""
    schema = _resolve(doc, schema)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        found = []
        for name, sub in schema.get("properties", {}).items():
            if not sub.get("readOnly"):
                found += _unbounded(doc, sub, f"{where}.{name}")
        return found
    if kind == "array":
        own = [] if "maxItems" in schema else [f"{where}: array without maxItems"]
        return own + _unbounded(doc, schema["items"], f"{where}[]")
    if kind == "string":
        bounded = "maxLength" in schema or schema.get("format") in UNBOUNDED_STRING_FORMATS
        return [] if bounded else [f"{where}: string without maxLength"]
    if kind in ("integer", "number"):
        bounded = "minimum" in schema and "maximum" in schema
        return [] if bounded else [f"{where}: {kind} without minimum and maximum"]
    if kind == "boolean":
        return []
    return [f"{where}: unexpected schema {schema}"]


def _inputs(doc: dict):
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            if not isinstance(operation, dict):
                continue
            where = f"{method.upper()} {path}"
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body:
                yield f"{where} body", body["schema"]
            for parameter in operation.get("parameters", []):
                # Path segments are matched by the URL rules, not by schemas.
                if parameter["in"] == "query":
                    yield f"{where} ?{parameter['name']}", parameter["schema"]


@pytest.mark.parametrize("url", ["/api/v1/openapi.json", "/tracker/api/v1/openapi.json"])
def test_every_documented_input_is_bounded(client, url):
    doc = client.get(url).get_json()
    inputs = list(_inputs(doc))
    assert len(inputs) > 10
    problems = [problem for where, schema in inputs for problem in _unbounded(doc, schema, where)]
    assert problems == []


def test_the_checker_finds_unbounded_inputs():
    doc = {"components": {"schemas": {}}}
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "ids": {"type": "array", "items": {"type": "string", "format": "uuid"}},
            "n": {"type": "integer", "minimum": 0},
            "ok": {"type": "string", "maxLength": 3},
        },
    }
    assert _unbounded(doc, schema, "b") == [
        "b.name: string without maxLength",
        "b.ids: array without maxItems",
        "b.n: integer without minimum and maximum",
    ]


def _body_schema_names(doc: dict) -> set[str]:
    """Components a request body uses, nested ones included."""
    names: set[str] = set()

    def visit(schema: dict) -> None:
        for sub in schema.get("allOf", []):
            visit(sub)
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            if name not in names:
                names.add(name)
                visit(doc["components"]["schemas"][name])
        for sub in schema.get("properties", {}).values():
            visit(sub)
        if "items" in schema:
            visit(schema["items"])

    for where, schema in _inputs(doc):
        if where.endswith(" body"):
            visit(schema)
    return names


def _plain_strings(field: ma.fields.Field, where: str) -> list[str]:
    if isinstance(field, ma.fields.List):
        return _plain_strings(field.inner, f"{where}[]")
    if isinstance(field, ma.fields.Nested):
        return [
            p for name, sub in field.schema.fields.items() for p in _plain_strings(sub, f"{where}.{name}")
        ]
    if isinstance(field, ma.fields.String) and not isinstance(field, Text):
        return [where]
    return []


def test_every_input_string_goes_through_the_text_rules(client):
    """Control characters, trimming and lengths live in ``Text``: no input string bypasses it."""
    names = set()
    for url in ("/api/v1/openapi.json", "/tracker/api/v1/openapi.json"):
        names |= _body_schema_names(client.get(url).get_json())
    classes = {
        obj
        for module in SCHEMA_MODULES
        for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, ma.Schema)
    }
    inputs = {cls for cls in classes if cls.__name__ in names or issubclass(cls, QuerySchema)}
    assert len(inputs) > 20
    plain = [
        problem
        for cls in inputs
        for name, field in cls().fields.items()
        if not field.dump_only
        for problem in _plain_strings(field, f"{cls.__name__}.{name}")
    ]
    assert plain == []


def test_every_api_blueprint_parses_with_the_bounded_parser(app):
    from flask_smorest import Blueprint as SmorestBlueprint

    from blueprints.parsing import Blueprint, Parser

    api_blueprints = [bp for bp in app.blueprints.values() if isinstance(bp, SmorestBlueprint)]
    assert len(api_blueprints) > 5
    assert [bp.name for bp in api_blueprints if not isinstance(bp, Blueprint)] == []
    assert isinstance(Blueprint.ARGUMENTS_PARSER, Parser)
