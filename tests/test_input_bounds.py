"""Every input both APIs document is bounded: the OpenAPI documents show each limit."""

from __future__ import annotations

import pytest

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
