"""HTTP-level behaviour: security headers, the Content-Security-Policy the templates
live under, methods, media types, request bodies and oversized requests."""

from __future__ import annotations

import json
import os
import re
import socket
from pathlib import Path

import pytest

from app import create_app
from security import MAX_HEADER_BYTES, MAX_URL_BYTES
from tests.factories import PASSWORD, auth_headers, make_user
from tests.servers import free_port, start_gunicorn, stop

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
STATIC_JS = Path(__file__).resolve().parents[1] / "static" / "js"
# Reads the code, or talks to a server of its own with no query that tells the databases apart:
# run once when `make test` runs both.
code_only = pytest.mark.any_database(on="sqlite")


def _directives(response) -> dict[str, str]:
    policy = response.headers["Content-Security-Policy"]
    return dict(part.strip().split(" ", 1) for part in policy.split(";"))


@pytest.mark.parametrize(
    "path", ["/login", "/lotes", "/no-such-page", "/api/v1/docs", "/tracker/api/v1/docs", "/api/v1/lojas"]
)
def test_every_response_carries_the_security_headers(client, path):
    response = client.get(path)
    directives = _directives(response)
    assert directives["default-src"] == "'self'"
    assert directives["script-src"] == "'self'"
    assert directives["style-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"
    assert "unsafe" not in response.headers["Content-Security-Policy"]
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Referrer-Policy"] == "strict-origin-when-cross-origin"
    assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_a_signed_in_page_cannot_be_framed(client, ctx):
    user = make_user(papel="planejador")
    signed_in = client.post("/login", data={"email": user.email, "senha": PASSWORD})
    assert signed_in.status_code == 302
    response = client.get("/lotes")
    assert response.status_code == 200
    assert response.headers["X-Frame-Options"] == "DENY"
    assert _directives(response)["frame-ancestors"] == "'none'"


# What the policy refuses in a template: script blocks (JSON data blocks are not run),
# event handler attributes, htmx's evaluated attributes, javascript: URLs and inline styles.
INLINE_CODE = {
    "script block": re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I),
    "event handler attribute": re.compile(r"\son[a-z]+\s*=", re.I),
    "hx-on attribute": re.compile(r"\bhx-on\b", re.I),
    "javascript: URL": re.compile(r"javascript:", re.I),
    "style attribute": re.compile(r"\sstyle\s*=", re.I),
    "style block": re.compile(r"<style\b", re.I),
}


@code_only
def test_no_template_has_inline_script_or_style():
    found = [
        f"{path.relative_to(TEMPLATES)}: {what}"
        for path in sorted(TEMPLATES.rglob("*.html"))
        for what, pattern in INLINE_CODE.items()
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert found == []


@code_only
def test_the_inline_code_check_catches_what_it_looks_for():
    samples = {
        "script block": "<script>alert(1)</script>",
        "event handler attribute": '<button onclick="go()">',
        "hx-on attribute": '<form hx-on::after-request="x()">',
        "javascript: URL": '<a href="javascript:void(0)">',
        "style attribute": '<span style="color: red">',
        "style block": "<style>p {}</style>",
    }
    for what, sample in samples.items():
        assert INLINE_CODE[what].search(sample), what
    allowed = (
        '<script src="/static/js/giro.js"></script><script type="application/json" data-chart="x">{}</script>'
    )
    assert not any(pattern.search(allowed) for pattern in INLINE_CODE.values())


@code_only
def test_templates_load_only_scripts_that_exist():
    sources = {
        match
        for path in TEMPLATES.rglob("*.html")
        for match in re.findall(r"filename='js/([^']+)'", path.read_text(encoding="utf-8"))
    }
    assert sources >= {"giro.js", "board.js", "lote.js", "charts.js", "swagger-ui.js"}
    assert all((STATIC_JS / name).is_file() for name in sources)


def test_htmx_is_told_not_to_inject_styles_or_evaluate_code(client):
    html = client.get("/login").get_data(as_text=True)
    config = re.search(r"<meta name=\"htmx-config\" content='([^']+)'", html).group(1)
    assert '"includeIndicatorStyles":false' in config
    assert '"allowEval":false' in config
    # htmx copies `style` while settling a swap, which the policy refuses.
    assert '"attributesToSettle":["class","width","height"]' in config


def test_swagger_ui_starts_from_a_static_script(client):
    html = client.get("/api/v1/docs").get_data(as_text=True)
    assert "/static/js/swagger-ui.js" in html
    assert '"url": "/api/v1/openapi.json"' in html or '"url":"/api/v1/openapi.json"' in html


def test_wrong_method_names_the_allowed_ones_in_each_dialect(client):
    stock = client.delete("/api/v1/auth/login")
    assert stock.status_code == 405
    assert stock.get_json() == {"detail": "Método não permitido"}
    assert stock.headers["Allow"] == "OPTIONS, POST"
    tracker = client.put("/tracker/api/v1/workspaces")
    assert tracker.status_code == 405
    assert tracker.get_json()["error"] == "METHOD_NOT_ALLOWED"
    assert tracker.headers["Allow"] == "GET, HEAD, OPTIONS, POST"
    page = client.delete("/login")
    assert page.status_code == 405
    assert page.mimetype == "text/html"
    assert "POST" in page.headers["Allow"]


def test_a_body_in_another_media_type_is_415_in_each_dialect(client):
    stock = client.post("/api/v1/auth/login", data="email=a@b.c&senha=x", content_type="text/plain")
    assert stock.status_code == 415
    assert stock.get_json() == {"detail": "O corpo deve ser application/json"}
    tracker = client.post(
        "/tracker/api/v1/auth/login",
        data="email=a@b.c&password=x",
        content_type="application/x-www-form-urlencoded",
    )
    assert tracker.status_code == 415
    assert tracker.get_json()["error"] == "UNSUPPORTED_MEDIA_TYPE"


def test_a_missing_body_fails_validation_even_when_every_field_is_optional(client, ctx):
    headers = auth_headers(client, make_user(papel="admin"))
    stock = client.patch("/api/v1/users/me", headers=headers)
    assert stock.status_code == 422
    assert stock.get_json() == {
        "detail": [{"loc": ["body"], "msg": "A JSON body is required", "type": "missing"}]
    }
    empty = client.put(
        "/api/v1/remanejamento/regras", data="", content_type="application/json", headers=headers
    )
    assert empty.status_code == 422
    assert empty.get_json()["detail"][0]["loc"] == ["body"]
    # An empty object is a body: every field keeps its default.
    assert client.put("/api/v1/remanejamento/regras", json={}, headers=headers).status_code == 200
    tracker = client.patch(
        f"/tracker/api/v1/admin/users/{make_user().id}",
        headers={"Authorization": headers["Authorization"]},
    )
    # A stock admin is no tracker superadmin: refused before the body is read.
    assert tracker.status_code == 403


def test_a_missing_tracker_body_is_a_validation_error(client):
    from tests.tracker.support import API, register

    tenant = register(client)
    response = client.post(f"{API}/workspaces/{tenant.slug}/projects", headers=tenant.headers)
    assert response.status_code == 400
    assert response.get_json() == {
        "error": "VALIDATION_ERROR",
        "message": "Validation failed",
        "details": [{"field": "body", "message": "A JSON body is required"}],
    }


def test_an_overlong_url_is_414_in_the_dialect_of_its_service(client):
    query = "q=" + "a" * MAX_URL_BYTES
    stock = client.get(f"/api/v1/remanejamento/historico?{query}")
    assert stock.status_code == 414
    assert stock.get_json() == {"detail": "URL longa demais"}
    tracker = client.get(f"/tracker/api/v1/admin/users?{query}")
    assert tracker.status_code == 414
    assert tracker.get_json()["error"] == "URI_TOO_LONG"
    page = client.get(f"/lotes?{query}")
    assert page.status_code == 414
    assert page.mimetype == "text/html"
    # Just under the limit the request goes through (and meets authentication).
    fits = "q=" + "a" * (MAX_URL_BYTES - len("/api/v1/remanejamento/historico?q=") - 1)
    assert client.get(f"/api/v1/remanejamento/historico?{fits}").status_code == 401


def test_oversized_headers_are_431_in_the_dialect_of_its_service(client):
    big = {"X-Padding": "p" * MAX_HEADER_BYTES}
    stock = client.get("/api/v1/lojas", headers=big)
    assert stock.status_code == 431
    assert stock.get_json() == {"detail": "Cabeçalhos grandes demais"}
    tracker = client.get("/tracker/api/v1/workspaces", headers=big)
    assert tracker.status_code == 431
    assert tracker.get_json()["error"] == "HEADERS_TOO_LARGE"
    assert client.get("/api/v1/lojas", headers={"X-Padding": "p" * 1000}).status_code == 401


@code_only
def test_gunicorn_refuses_only_what_the_app_would_refuse_anyway():
    settings: dict = {}
    exec(Path(__file__).resolve().parents[1].joinpath("gunicorn.conf.py").read_text(), settings)
    assert settings["limit_request_line"] > MAX_URL_BYTES + len("DELETE  HTTP/1.1")
    # A single header field the app would refuse as a whole reaches the app.
    assert settings["limit_request_field_size"] > MAX_HEADER_BYTES
    assert settings["limit_request_fields"] >= 100


def _raw(port: int, request: bytes) -> tuple[str, dict[str, str], bytes]:
    """Send bytes as they are (no client would send these) and read the whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    return status, {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}, body


@pytest.mark.committing
@code_only
def test_what_gunicorn_refuses_itself_is_answered_in_json(app, tmp_path):
    env = {
        **os.environ,
        "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "prometheus"),
    }
    port = free_port()
    server = start_gunicorn(env, port)
    try:
        line_status, line_headers, line_body = _raw(
            port, b"GET /tracker/api/v1/workspaces?q=" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
        )
        field_status, field_headers, field_body = _raw(
            port, b"GET /api/v1/lojas HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"p" * 17000 + b"\r\n\r\n"
        )
    finally:
        stop(server)
    assert line_status.startswith("HTTP/1.1 414") and line_headers["content-type"] == "application/json"
    line = json.loads(line_body)
    assert line["detail"] == "URL longa demais" and line["error"] == "URI_TOO_LONG"
    assert "too large" in line["message"]
    assert field_status.startswith("HTTP/1.1 431") and field_headers["content-type"] == "application/json"
    refused = json.loads(field_body)
    assert refused["detail"] == "Cabeçalhos grandes demais" and refused["error"] == "HEADERS_TOO_LARGE"


def test_production_sends_cookies_over_https_only(tmp_path):
    production = create_app(
        {
            "ENV_NAME": "production",
            "SECRET_KEY": "s" * 32,
            "JWT_SECRET_KEY": "j" * 32,
            "JWT_COOKIE_SECURE": False,
            "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'production.db'}",
        }
    )
    assert production.config["JWT_COOKIE_SECURE"] is True
    assert production.config["SESSION_COOKIE_SECURE"] is True


def test_development_cookies_follow_the_setting(app):
    assert app.config["ENV_NAME"] != "production"
    assert app.config["JWT_COOKIE_SECURE"] is False
