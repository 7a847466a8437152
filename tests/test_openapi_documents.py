"""What the OpenAPI documents declare: security schemes, and on every operation the
errors it can answer, each with its dialect's body."""

from __future__ import annotations

import pytest

from tests.tracker.support import API, make_project, register

DOCUMENTS = {
    # document, validation status, error schema, validation error schema, security scheme
    "stock": ("/api/v1/openapi.json", "422", "StockError", "StockValidationError", "OAuth2PasswordBearer"),
    "tracker": (f"{API}/openapi.json", "400", "TrackerError", "TrackerError", "bearerAuth"),
}
METHODS = {"get", "put", "post", "patch", "delete"}


def _operations(document: dict):
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield path, method, operation, item.get("parameters", []) + operation.get("parameters", [])


def _resolve(document: dict, node: dict) -> dict:
    while "$ref" in node:
        section, name = node["$ref"].split("/")[-2:]
        node = document["components"][section][name]
    return node


def _error_schema(document: dict, response: dict) -> str:
    schema = _resolve(document, response)["content"]["application/json"]["schema"]
    return schema["$ref"].rsplit("/", 1)[-1]


@pytest.mark.parametrize("service", sorted(DOCUMENTS))
def test_every_operation_declares_the_errors_it_can_answer(client, service):
    url, validation, error, validation_error, scheme = DOCUMENTS[service]
    document = client.get(url).get_json()
    checked = 0
    for path, method, operation, parameters in _operations(document):
        responses = operation["responses"]
        label = f"{method.upper()} {path}"
        expected = {}
        if operation.get("security"):
            assert operation["security"] == [{scheme: []}], label
            expected |= {"401": error, "403": error}
            unauthorized = _resolve(document, responses["401"])
            assert "WWW-Authenticate" in unauthorized["headers"], label
        if any(p["in"] == "path" for p in parameters):
            expected["404"] = error
            if service == "stock":
                expected[validation] = validation_error
        if "requestBody" in operation or any(p["in"] == "query" for p in parameters):
            expected[validation] = validation_error
        for status, schema in expected.items():
            assert status in responses, f"{label} does not declare {status}"
            assert _error_schema(document, responses[status]) == schema, f"{label} {status}"
        # /health answers 503 with its own body: the database state, not an error.
        for status, response in responses.items():
            if status.isdigit() and int(status) >= 400 and status != validation and status != "503":
                assert _error_schema(document, response) == error, f"{label} {status}"
        checked += 1
    assert checked > 30


def test_the_security_schemes_follow_each_spec(client):
    stock = client.get("/api/v1/openapi.json").get_json()["components"]["securitySchemes"]
    assert stock == {
        "OAuth2PasswordBearer": {
            "type": "oauth2",
            "description": stock["OAuth2PasswordBearer"]["description"],
            "flows": {"password": {"tokenUrl": "/api/v1/auth/login", "scopes": {}}},
        }
    }
    assert "JSON" in stock["OAuth2PasswordBearer"]["description"]
    tracker = client.get(f"{API}/openapi.json").get_json()["components"]["securitySchemes"]
    assert tracker == {"bearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}}


def test_public_operations_declare_no_security(client):
    stock = client.get("/api/v1/openapi.json").get_json()
    for path in ("/api/v1/auth/login", "/api/v1/auth/refresh", "/api/v1/auth/logout"):
        assert "security" not in stock["paths"][path]["post"]
        assert "401" in stock["paths"][path]["post"]["responses"] or path == "/api/v1/auth/logout"
    assert "security" not in stock["paths"]["/health"]["get"]


def test_tracker_error_extras_are_documented_and_sent(client):
    document = client.get(f"{API}/openapi.json").get_json()
    properties = document["components"]["schemas"]["TrackerError"]["properties"]
    assert {"error", "message", "details", "field", "resource", "limit", "current", "plan"} <= set(properties)
    tenant = register(client)
    make_project(client, tenant, key="DUP")
    again = client.post(
        f"{API}/workspaces/{tenant.slug}/projects",
        json={"name": "Outro", "key": "DUP"},
        headers=tenant.headers,
    )
    assert again.status_code == 409
    body = again.get_json()
    assert body["field"] == "key"
    assert set(body) <= set(properties)


def test_my_organizations_are_a_wrapped_list_like_every_other(client):
    tenant = register(client)
    response = client.get(f"{API}/organizations", headers=tenant.headers)
    assert response.status_code == 200
    body = response.get_json()
    assert list(body) == ["organizations"]
    assert [(o["id"], o["role"]) for o in body["organizations"]] == [(tenant.org_id, "owner")]
    document = client.get(f"{API}/openapi.json").get_json()
    schema = document["paths"][f"{API}/organizations"]["get"]["responses"]["200"]["content"][
        "application/json"
    ]
    assert schema["schema"] == {"$ref": "#/components/schemas/MyOrganizationList"}
