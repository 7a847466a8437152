"""Check a real response body against the schema its OpenAPI document declares.

The hot lists write their bodies without marshmallow (``schemas.fast``); these
checks keep what they write and what the document promises from drifting.
OpenAPI 3.0 schemas become JSON Schema here (``nullable`` → a ``null`` type).
"""

from __future__ import annotations

import copy
from typing import Any

import jsonschema_rs

DOCUMENTS = {"stock": "/api/v1/openapi.json", "tracker": "/tracker/api/v1/openapi.json"}


def _json_schema(node: Any) -> Any:
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _json_schema(value) for key, value in node.items() if key not in ("nullable", "example")}
    if node.get("nullable"):
        if "type" in out:
            kinds = out["type"] if isinstance(out["type"], list) else [out["type"]]
            out["type"] = [*kinds, "null"]
            if "enum" in out and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def response_schema(document: dict, path: str, method: str, status: int) -> dict:
    """The JSON Schema of one operation's response, its ``$ref``s resolvable."""
    operation = document["paths"][path][method]
    response = operation["responses"][str(status)]
    while "$ref" in response:
        response = document["components"]["responses"][response["$ref"].rsplit("/", 1)[-1]]
    schema = copy.deepcopy(response["content"]["application/json"]["schema"])
    return {**_json_schema(schema), "components": _json_schema(document["components"])}


def assert_documented(client, service: str, path: str, response, method: str = "get") -> None:
    """``response`` (a test client response of ``path``, the full path template of the document) matches its schema."""
    document = client.get(DOCUMENTS[service]).get_json()
    schema = response_schema(document, path, method, response.status_code)
    errors = [
        f"{'/'.join(map(str, e.instance_path))}: {e.message}"
        for e in jsonschema_rs.validator_for(schema).iter_errors(response.get_json())
    ]
    assert not errors, f"{method.upper()} {path} {response.status_code} breaks its schema: {errors[:5]}"
