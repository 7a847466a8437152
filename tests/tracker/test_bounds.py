"""Hostile input on the tracker API: bounded work, a 400 (or 413 or 404), never a 500."""

from __future__ import annotations

import json

import pytest

from tests.tracker.support import (
    API,
    assert_error,
    issues_url,
    make_issue,
    make_project,
    register,
    superadmin,
)

DEEP = "[" * 1000 + "]" * 1000
ACCOUNT_BODIES = {
    "login": '{{"email": {email}, "password": "x"}}',
    "register": '{{"name": "N", "email": {email}, "password": "long-enough-1"}}',
}


def fields_of(response) -> list[str]:
    return [d["field"] for d in assert_error(response, 400, "VALIDATION_ERROR")["details"]]


@pytest.fixture
def setup(client):
    tenant = register(client)
    return tenant, make_project(client, tenant, key="LST", name="Lista")


@pytest.mark.parametrize("route", ["login", "register"])
@pytest.mark.parametrize(
    "email",
    [DEEP, "1" * 5000, '"a\\udfffb@x.com"'],
    ids=["nested-1000-deep", "5000-digit-number", "lone-surrogate"],
)
def test_hostile_json_on_login_and_register_is_a_malformed_body(client, route, email):
    body = ACCOUNT_BODIES[route].format(email=email)
    response = client.post(f"{API}/auth/{route}", data=body, content_type="application/json")
    details = assert_error(response, 400, "VALIDATION_ERROR")["details"]
    assert details == [{"field": "body", "message": details[0]["message"]}]
    assert details[0]["message"].startswith("Invalid JSON body")


def test_an_address_longer_than_a_mail_path_is_refused_and_the_longest_signs_up(client):
    # RFC 5321: a mail path is at most 256 octets with its angle brackets, so 254 characters.
    domain = "a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 50 + ".com.br"
    longest = "nina@" + domain
    assert len(longest) == 254
    body = {"name": "Nina", "email": "x" + longest, "password": "long-enough-1"}
    assert fields_of(client.post(f"{API}/auth/register", json=body)) == ["email"]
    created = client.post(f"{API}/auth/register", json={**body, "email": longest})
    assert created.status_code == 201, created.get_json()
    assert created.get_json()["user"]["email"] == longest


def test_oversized_body_is_a_413_in_the_tracker_dialect(client, setup):
    tenant, project = setup
    body = json.dumps({"title": "x", "description": "d" * (3 * 1024 * 1024)})
    response = client.post(
        issues_url(tenant, project), data=body, content_type="application/json", headers=tenant.headers
    )
    assert response.is_json
    assert_error(response, 413, "PAYLOAD_TOO_LARGE")
    # Refused before authentication, from the declared length alone.
    anonymous = client.post(f"{API}/auth/login", data=body, content_type="application/json")
    assert_error(anonymous, 413, "PAYLOAD_TOO_LARGE")


def test_pages_answer_an_oversized_body_with_a_page(client):
    response = client.post("/login", data={"email": "a@x.com", "senha": "s" * (3 * 1024 * 1024)})
    assert response.status_code == 413
    assert response.mimetype == "text/html"


def test_a_million_label_ids_answer_small(app, client, setup, monkeypatch):
    tenant, project = setup
    url = issues_url(tenant, project)
    body = json.dumps({"title": "x", "label_ids": ["a"] * 1_000_000})
    refused = client.post(url, data=body, content_type="application/json", headers=tenant.headers)
    assert_error(refused, 413, "PAYLOAD_TOO_LARGE")
    assert len(refused.data) < 200
    # Even past the size limit, the list is refused by its length before any item is read.
    monkeypatch.setitem(app.config, "MAX_CONTENT_LENGTH", 16 * 1024 * 1024)
    response = client.post(url, data=body, content_type="application/json", headers=tenant.headers)
    assert assert_error(response, 400, "VALIDATION_ERROR")["details"] == [
        {"field": "label_ids", "message": "Must have at most 50 items."}
    ]
    assert len(response.data) < 300
    assert client.get(url, headers=tenant.headers).get_json()["total"] == 0


def test_error_bodies_are_bounded(client, setup):
    tenant, project = setup
    url = issues_url(tenant, project)
    unknown = {f"field_{i}": 1 for i in range(30)}
    details = assert_error(
        client.post(url, json={"title": "x", **unknown}, headers=tenant.headers), 400, "VALIDATION_ERROR"
    )["details"]
    assert len(details) == 20
    long_key = assert_error(
        client.post(url, json={"title": "x", "k" * 5000: 1}, headers=tenant.headers), 400, "VALIDATION_ERROR"
    )["details"]
    assert len(long_key[0]["field"]) <= 100
    crowded = client.post(
        url,
        data="{" + ", ".join(f'"k{i}": 0' for i in range(1001)) + "}",
        content_type="application/json",
        headers=tenant.headers,
    )
    assert fields_of(crowded) == ["body"]


def test_nul_and_control_characters_are_refused_everywhere(client, setup):
    tenant, project = setup
    url = issues_url(tenant, project)
    make_issue(client, tenant, project, title="Original")
    for body, field in [
        ({"title": "a\x00b"}, "title"),
        ({"title": "a\x1bb"}, "title"),
        ({"title": "a\nb"}, "title"),
        ({"title": "ok", "description": "nul \x00 here"}, "description"),
    ]:
        assert fields_of(client.post(url, json=body, headers=tenant.headers)) == [field]
    assert fields_of(client.patch(f"{url}/LST-1", json={"title": "x\x00"}, headers=tenant.headers)) == [
        "title"
    ]
    assert fields_of(client.get(url, query_string={"q": "a\x00"}, headers=tenant.headers)) == ["q"]
    assert_error(client.get(f"{API}/workspaces/{tenant.slug}%01", headers=tenant.headers), 404, "NOT_FOUND")
    # Multi-line text keeps its tabs and line breaks.
    created = make_issue(client, tenant, project, description="line 1\n\tline 2\r\n")
    assert created["description"] == "line 1\n\tline 2\r\n"
    assert client.get(f"{url}/LST-1", headers=tenant.headers).get_json()["title"] == "Original"


def test_admin_query_text_is_clean(client):
    root = superadmin(client)
    assert fields_of(
        client.get(f"{API}/admin/users", query_string={"q": "ana\x00"}, headers=root.headers)
    ) == ["q"]
    assert fields_of(
        client.get(f"{API}/admin/users", query_string={"per_page": str(2**64)}, headers=root.headers)
    ) == ["per_page"]


def test_issue_keys_that_cannot_exist_are_404(client, setup):
    tenant, project = setup
    url = issues_url(tenant, project)
    make_issue(client, tenant, project)
    for key in ("LST-2147483648", "LST-9999999999", "LST-" + "9" * 3000):
        assert_error(client.get(f"{url}/{key}", headers=tenant.headers), 404, "NOT_FOUND")
        assert_error(
            client.patch(f"{url}/{key}", json={"title": "t"}, headers=tenant.headers), 404, "NOT_FOUND"
        )
    assert client.get(f"{url}/LST-1", headers=tenant.headers).status_code == 200


def test_blank_names_and_titles_are_refused_and_wipe_nothing(client, setup):
    tenant, project = setup
    url = issues_url(tenant, project)
    issue = make_issue(client, tenant, project, title="Keep me")
    assert fields_of(client.post(url, json={"title": "   "}, headers=tenant.headers)) == ["title"]
    refused = client.patch(f"{url}/{issue['key']}", json={"title": " \u3000 "}, headers=tenant.headers)
    assert assert_error(refused, 400, "VALIDATION_ERROR")["details"] == [
        {"field": "title", "message": "Must not be blank."}
    ]
    assert client.get(f"{url}/{issue['key']}", headers=tenant.headers).get_json()["title"] == "Keep me"
    renamed = client.patch(f"{API}/workspaces/{tenant.slug}", json={"name": "   "}, headers=tenant.headers)
    assert fields_of(renamed) == ["name"]
    body = {"name": "   ", "email": "blank@tracker.test", "password": "long-enough-1"}
    assert fields_of(client.post(f"{API}/auth/register", json=body)) == ["name"]
    trimmed = client.post(url, json={"title": "  Trimmed  "}, headers=tenant.headers)
    assert trimmed.get_json()["title"] == "Trimmed"


@pytest.mark.parametrize("estimate", [1.5, "3", True, 2**31, -1])
def test_estimate_is_a_strict_bounded_integer(client, setup, estimate):
    tenant, project = setup
    url = issues_url(tenant, project)
    assert fields_of(client.post(url, json={"title": "t", "estimate": estimate}, headers=tenant.headers)) == [
        "estimate"
    ]
    assert client.get(url, headers=tenant.headers).get_json()["total"] == 0


def test_integers_in_query_strings_still_parse(client, setup):
    tenant, project = setup
    url = issues_url(tenant, project)
    make_issue(client, tenant, project, estimate=3)
    listed = client.get(url, query_string={"page": "1", "per_page": "10"}, headers=tenant.headers)
    assert listed.status_code == 200 and listed.get_json()["per_page"] == 10
    for query in ({"page": str(2**64)}, {"page": "1" * 5000}, {"per_page": "1.5"}, {"page": "1_0"}):
        assert fields_of(client.get(url, query_string=query, headers=tenant.headers)) == list(query)


def test_booleans_in_bodies_are_strict(client):
    root = superadmin(client)
    other = register(client)
    path = f"{API}/admin/users/{other.user_id}"
    for value in ("yes", "true", 1):
        assert fields_of(client.patch(path, json={"banned": value}, headers=root.headers)) == ["banned"]
    assert client.get(f"{API}/auth/me", headers=other.headers).status_code == 200


def test_plan_numbers_are_strict(client):
    root = superadmin(client)
    limits = {"members": 1, "projects": 1, "issues": 1, "storage_bytes": 1}
    body = {"id": "strict", "name": "Strict", "price_brl": "10", "limits": {**limits, "issues": 2.5}}
    assert sorted(fields_of(client.post(f"{API}/admin/plans", json=body, headers=root.headers))) == [
        "limits.issues",
        "price_brl",
    ]
