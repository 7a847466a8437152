"""Request ids, JSON log lines, /metrics, /health/ready, and the request id of an unexpected error."""

from __future__ import annotations

import io
import json
import logging
import re
import uuid

import pytest

from extensions import db
from observability import ContextFilter, JsonFormatter
from tests.factories import auth_headers, make_user
from tests.prometheus import sample

REMOTE = {"REMOTE_ADDR": "10.1.2.3"}


def test_every_response_carries_a_request_id(client):
    given = client.get("/health", headers={"X-Request-ID": "lb-42.abc"})
    assert given.headers["X-Request-ID"] == "lb-42.abc"
    made = client.get("/api/v1/nothing-here")
    assert made.status_code == 404 and re.fullmatch(r"[0-9a-f]{32}", made.headers["X-Request-ID"])
    # A value that could forge log lines or headers is replaced, not echoed.
    forged = client.get("/health", headers={"X-Request-ID": 'x" y\tz' + "a" * 200})
    assert re.fullmatch(r"[0-9a-f]{32}", forged.headers["X-Request-ID"])


def test_metrics_count_a_request_by_endpoint_and_status(client):
    before = client.get("/metrics").get_data(as_text=True)
    labels = {"method": "GET", "endpoint": "/api/v1/remanejamento/lotes/<uuid:lid>", "status": "401"}
    assert client.get(f"/api/v1/remanejamento/lotes/{uuid.uuid4()}").status_code == 401
    scraped = client.get("/metrics")
    assert scraped.status_code == 200 and scraped.content_type.startswith("text/plain")
    after = scraped.get_data(as_text=True)
    assert (
        sample(after, "giro_http_requests_total", **labels)
        == sample(before, "giro_http_requests_total", **labels) + 1
    )
    latency = {"method": "GET", "endpoint": "/api/v1/remanejamento/lotes/<uuid:lid>", "le": "+Inf"}
    assert sample(after, "giro_http_request_duration_seconds_bucket", **latency) >= 1
    for state in ("queued", "running", "done", "failed"):
        assert f'giro_jobs{{state="{state}"}}' in after
    assert "giro_db_pool_checked_out" in after and "giro_batch_generation_seconds_count" in after


def test_metrics_are_open_on_loopback_only_or_with_the_token(app, client, monkeypatch):
    refused = client.get("/metrics", environ_base=REMOTE)
    assert refused.status_code == 403 and "METRICS_TOKEN" in refused.get_data(as_text=True)
    monkeypatch.setitem(app.config, "METRICS_TOKEN", "s3cret-token")
    assert client.get("/metrics", environ_base=REMOTE).status_code == 401
    wrong = client.get("/metrics", environ_base=REMOTE, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.headers["WWW-Authenticate"] == "Bearer"
    ok = client.get("/metrics", environ_base=REMOTE, headers={"Authorization": "Bearer s3cret-token"})
    assert ok.status_code == 200 and "giro_http_requests_total" in ok.get_data(as_text=True)


def test_in_production_metrics_need_the_token_even_from_loopback(app, client, monkeypatch):
    # A reverse proxy on the same host makes every request come from loopback.
    monkeypatch.setitem(app.config, "ENV_NAME", "production")
    refused = client.get("/metrics")
    assert refused.status_code == 403 and "METRICS_TOKEN" in refused.get_data(as_text=True)
    monkeypatch.setitem(app.config, "METRICS_TOKEN", "s3cret-token")
    assert client.get("/metrics").status_code == 401
    ok = client.get("/metrics", headers={"Authorization": "Bearer s3cret-token"})
    assert ok.status_code == 200 and "giro_http_requests_total" in ok.get_data(as_text=True)


def test_readiness_checks_the_database_and_redis_when_configured(app, client, monkeypatch):
    ready = client.get("/health/ready")
    assert ready.status_code == 200
    assert ready.get_json() == {"status": "ok", "database": "ok", "redis": "not configured"}
    monkeypatch.setitem(app.config, "REDIS_URL", "redis://127.0.0.1:1/0")  # nothing listens there
    down = client.get("/health/ready")
    assert down.status_code == 503 and down.get_json()["redis"] == "unavailable"
    # /health stays the cheap liveness check: Redis is not its business.
    assert client.get("/health").status_code == 200


def test_redis_down_keeps_the_api_answering(app, client, ctx, monkeypatch):
    from tests.factories import bearer, login

    user = make_user(papel="planejador")
    tokens = login(client, user)
    headers = bearer(tokens["accessToken"])
    monkeypatch.setitem(app.config, "REDIS_URL", "redis://127.0.0.1:1/0")
    assert client.get("/api/v1/remanejamento/lotes", headers=headers).status_code == 200
    out = client.post("/api/v1/auth/logout", headers=headers, json={"refreshToken": tokens["refreshToken"]})
    assert out.status_code == 204
    # The logout went to the database meanwhile: the token is refused.
    assert client.get("/api/v1/remanejamento/lotes", headers=headers).status_code == 401


def test_sign_in_fails_closed_only_when_configured(app, client, ctx, monkeypatch):
    user = make_user(papel="planejador")
    monkeypatch.setitem(app.config, "REDIS_URL", "redis://127.0.0.1:1/0")
    body = {"email": user.email, "senha": "senha-forte-123"}
    assert client.post("/api/v1/auth/login", json=body).status_code == 200
    monkeypatch.setitem(app.config, "LOGIN_THROTTLE_FAIL_CLOSED", True)
    closed = client.post("/api/v1/auth/login", json=body)
    assert closed.status_code == 503 and "indisponível" in closed.get_json()["detail"]


def _request_log_of(client, path: str, headers: dict | None = None) -> tuple[list[dict], int]:
    """The request log lines written while ``path`` was asked for, and its answer's status."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(ContextFilter())
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("giro.request")
    logger.addHandler(handler)
    previous = logger.level
    logger.setLevel(logging.INFO)
    try:
        status = client.get(path, headers=headers or {}).status_code
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
    return [json.loads(line) for line in stream.getvalue().splitlines()], status


def test_log_lines_are_json_with_the_request_id_user_and_duration(client, ctx):
    user = make_user(papel="planejador")
    headers = {**auth_headers(client, user), "X-Request-ID": "trace-1"}
    lines, _ = _request_log_of(client, "/api/v1/remanejamento/lotes", headers)
    entry = lines[-1]
    assert entry["request_id"] == "trace-1" and entry["user_id"] == str(user.id)
    assert entry["status"] == 200 and entry["path"] == "/api/v1/remanejamento/lotes"
    assert entry["duration_ms"] >= 0 and entry["level"] == "INFO" and entry["ts"]


@pytest.mark.parametrize("path", ["/health", "/tracker/health"])
def test_liveness_probes_are_logged_and_counted_only_when_they_fail(app, client, monkeypatch, path):
    from extensions import db

    def counted() -> float:
        text = client.get("/metrics").get_data(as_text=True)
        return sum(
            sample(text, "giro_http_requests_total", method="GET", endpoint=path, status=status)
            for status in ("200", "503")
        )

    before = counted()
    lines, status = _request_log_of(client, path)
    assert status == 200 and lines == []
    assert counted() == before

    def unreachable():
        raise OSError("connection refused")

    monkeypatch.setattr(db.engine, "raw_connection", unreachable)
    failed = client.get(path)
    assert failed.status_code == 503 and failed.get_json()["database"] == "unavailable"
    assert failed.get_json()["status"] == "degraded"
    lines, status = _request_log_of(client, path)
    assert status == 503 and [(line["path"], line["status"]) for line in lines] == [(path, 503)]
    assert counted() == before + 2


@pytest.mark.parametrize("prefix", ["/api/v1", "/tracker/api/v1"])
def test_an_unexpected_error_quotes_the_request_id(client, ctx, monkeypatch, prefix):
    from services import job_access

    def broken(*_args, **_kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(job_access, "get_job", broken)
    user = make_user(papel="admin")
    headers = auth_headers(client, user)
    answer = client.get(f"{prefix}/jobs/{uuid.uuid4()}", headers={**headers, "X-Request-ID": "rid-500"})
    assert answer.status_code == 500 and answer.headers["X-Request-ID"] == "rid-500"
    body = answer.get_json()
    if prefix == "/api/v1":
        assert body == {"detail": "Erro interno (request id rid-500)"}
    else:
        assert body == {
            "error": "INTERNAL_ERROR",
            "message": "Internal server error",
            "request_id": "rid-500",
        }
    assert "boom" not in answer.get_data(as_text=True)


@pytest.mark.committing
@pytest.mark.parametrize("ping_after_idle", [0.0, 3600.0])
def test_a_pooled_connection_the_server_dropped_is_replaced_once_it_sat_idle(app, ping_after_idle):
    """A pooled connection idle longer than ``DATABASE_PING_AFTER_IDLE`` is pinged before use
    and replaced if the server dropped it; one used within that window goes out unchecked."""
    from sqlalchemy import create_engine, text

    from app import create_app

    if not app.config["SQLALCHEMY_DATABASE_URI"].startswith("postgresql"):
        pytest.skip("a server that drops a connection: PostgreSQL's pg_terminate_backend")
    other = create_app(
        {
            "TESTING": True,
            "SQLALCHEMY_DATABASE_URI": app.config["SQLALCHEMY_DATABASE_URI"],
            "DATABASE_PING_AFTER_IDLE": ping_after_idle,
        }
    )
    client = other.test_client()
    assert client.get("/health/ready").get_json()["database"] == "ok"
    with other.app_context():
        with db.engine.connect() as conn:  # the one connection the pool holds, the request's
            backend = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
        admin = create_engine(app.config["SQLALCHEMY_DATABASE_URI"])
        with admin.begin() as conn:
            assert conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": backend}).scalar_one()
        admin.dispose()
        after = client.get("/health/ready")
        if ping_after_idle == 0:
            assert after.status_code == 200 and after.get_json()["database"] == "ok"
        else:
            # Used a moment ago, so not pinged: the request meets the dropped connection, which
            # is then replaced for the next one.
            assert after.status_code == 503 and after.get_json()["database"] == "unavailable"
            assert client.get("/health/ready").get_json()["database"] == "ok"
        db.engine.dispose()
