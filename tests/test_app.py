"""The app as a whole: mounts, health, OpenAPI documents, error dialects, config, CLI."""

from __future__ import annotations

import pytest

from app import create_app
from config import DEV_JWT_SECRET_KEY, DEV_SECRET_KEY, normalize_database_url
from tests.factories import PASSWORD


@pytest.mark.parametrize(("path", "service"), [("/health", "remanejamento"), ("/tracker/health", "tracker")])
def test_health_answers_at_each_mount_point(client, path, service):
    response = client.get(path)
    assert response.status_code == 200
    body = response.get_json()
    assert body["status"] == "ok"
    assert body["service"] == service
    assert body["database"] == "ok"
    assert all(isinstance(v, str) for v in body.values())


@pytest.mark.parametrize("path", ["/health", "/tracker/health"])
def test_a_liveness_probe_skips_the_request_machinery_unless_the_database_fails(
    app, client, monkeypatch, path
):
    from flask import request_started

    from extensions import db

    dispatched = []

    def started(sender, **_extra):
        dispatched.append(sender)

    request_started.connect(started, app)
    try:
        quiet = client.get(path, headers={"X-Request-ID": "probe-1"})
        assert quiet.status_code == 200 and dispatched == []
        assert quiet.headers["X-Request-ID"] == "probe-1"
        assert quiet.headers["Content-Type"] == "application/json"
        assert quiet.headers["X-Frame-Options"] == "DENY"  # the security headers cover it too
        # Any other method, and a probe whose database does not answer, reach the app.
        assert client.post(path).status_code == 405 and len(dispatched) == 1

        def unreachable():
            raise OSError("connection refused")

        monkeypatch.setattr(db.engine, "raw_connection", unreachable)
        failed = client.get(path)
        assert failed.status_code == 503 and len(dispatched) == 2
        assert failed.get_json()["database"] == "unavailable"
        assert failed.headers["X-Frame-Options"] == "DENY"
    finally:
        request_started.disconnect(started, app)


def test_a_service_not_served_has_no_probe():
    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": "sqlite://", "SERVICES": ("stock",)})
    client = app.test_client()
    assert client.get("/health").status_code == 200
    assert client.get("/tracker/health").status_code == 404


def test_each_service_has_its_own_openapi_document(client):
    stock = client.get("/api/v1/openapi.json").get_json()
    tracker = client.get("/tracker/api/v1/openapi.json").get_json()
    assert stock["info"]["title"] == "Giro Remanejamento"
    assert tracker["info"]["title"] == "Giro Tracker"
    assert "/api/v1/auth/login" in stock["paths"]
    assert "/api/v1/estoque/cell" in stock["paths"]
    assert not any(p.startswith("/tracker") for p in stock["paths"])
    assert "/tracker/health" in tracker["paths"]
    assert "/api/v1/estoque" not in tracker["paths"]
    scheme = stock["components"]["securitySchemes"]["OAuth2PasswordBearer"]
    assert scheme["type"] == "oauth2"
    assert scheme["flows"] == {"password": {"tokenUrl": "/api/v1/auth/login", "scopes": {}}}
    assert list(stock["components"]["securitySchemes"]) == ["OAuth2PasswordBearer"]
    me = stock["paths"]["/api/v1/auth/me"]["get"]
    assert me["security"] == [{"OAuth2PasswordBearer": []}]
    assert tracker["components"]["securitySchemes"] == {
        "bearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
    }
    assert tracker["paths"]["/tracker/api/v1/auth/me"]["get"]["security"] == [{"bearerAuth": []}]
    pid = stock["paths"]["/api/v1/produtos/{pid}"]["parameters"][0]
    assert pid["schema"] == {"type": "string", "format": "uuid"}


def test_swagger_ui_is_served_from_local_assets(client):
    for base in ("/api/v1", "/tracker/api/v1"):
        page = client.get(f"{base}/docs")
        assert page.status_code == 200
        html = page.get_data(as_text=True)
        assert "/static/vendor/swagger-ui/swagger-ui-bundle.js" in html
        assert "cdn" not in html.lower()


def test_unknown_routes_under_an_api_answer_json_in_its_dialect(client):
    stock = client.get("/api/v1/no-such-thing")
    assert stock.status_code == 404
    assert stock.is_json and stock.get_json() == {"detail": "Não encontrado"}
    tracker = client.get("/tracker/api/v1/no-such-thing")
    assert tracker.status_code == 404
    assert tracker.get_json() == {"error": "NOT_FOUND", "message": "Resource not found"}


def test_wrong_method_answers_json(client):
    stock = client.delete("/api/v1/auth/login")
    assert stock.status_code == 405
    assert "detail" in stock.get_json()
    tracker = client.post("/tracker/health")
    assert tracker.status_code == 405
    assert tracker.get_json()["error"] == "METHOD_NOT_ALLOWED"


def test_an_unexpected_failure_is_a_logged_json_500(client, ctx, monkeypatch, caplog):
    from services.stock import catalogue
    from tests.factories import auth_headers, make_user

    headers = auth_headers(client, make_user())

    def boom():
        raise RuntimeError("database on fire")

    monkeypatch.setattr(catalogue, "list_lojas", boom)
    response = client.get("/api/v1/lojas", headers=headers)
    assert response.status_code == 500
    # The request id lets the user's report find the logged stack trace.
    assert response.get_json() == {"detail": f"Erro interno (request id {response.headers['X-Request-ID']})"}
    assert "database on fire" not in response.get_data(as_text=True)
    assert any("Unhandled error" in r.getMessage() for r in caplog.records)


def test_pages_errors_are_html_not_json(client):
    response = client.get("/no-such-page")
    assert response.status_code == 404
    assert response.mimetype == "text/html"


def test_production_refuses_development_secrets():
    with pytest.raises(RuntimeError, match="SECRET_KEY"):
        create_app({"ENV_NAME": "production", "SECRET_KEY": DEV_SECRET_KEY, "JWT_SECRET_KEY": "x" * 32})
    with pytest.raises(RuntimeError, match="SECRET_KEY"):
        create_app({"ENV_NAME": "production", "SECRET_KEY": "x" * 32, "JWT_SECRET_KEY": DEV_JWT_SECRET_KEY})
    with pytest.raises(RuntimeError, match="at least 32"):
        create_app({"ENV_NAME": "production", "SECRET_KEY": "short", "JWT_SECRET_KEY": "y" * 32})


def test_an_empty_secret_variable_counts_as_unset(monkeypatch):
    import importlib

    import config

    monkeypatch.setenv("SECRET_KEY", "")
    monkeypatch.setenv("JWT_SECRET_KEY", "")
    try:
        reloaded = importlib.reload(config)
        assert reloaded.Config.SECRET_KEY == DEV_SECRET_KEY
        assert reloaded.Config.JWT_SECRET_KEY == DEV_JWT_SECRET_KEY
    finally:
        monkeypatch.undo()
        importlib.reload(config)


def test_services_cannot_share_a_mount_point():
    with pytest.raises(RuntimeError, match="must differ"):
        create_app({"STOCK_PREFIX": "/x", "TRACKER_PREFIX": "/x"})
    with pytest.raises(RuntimeError, match="unknown services"):
        create_app({"SERVICES": ("stock", "billing")})


def test_database_urls_use_psycopg3():
    assert normalize_database_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_database_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_database_url("sqlite:///x.db") == "sqlite:///x.db"


def test_users_create_command_makes_an_account_for_both_services(runner, client, ctx):
    from tests.factories import make_loja

    loja = make_loja(codigo="SP01")
    result = runner.invoke(
        args=[
            "users",
            "create",
            "--email",
            "Gerente@Giro.test",
            "--password",
            PASSWORD,
            "--name",
            "Gil Gerente",
            "--papel",
            "gerente_loja",
            "--loja",
            "SP01",
        ]
    )
    assert result.exit_code == 0, result.output
    assert "gerente@giro.test" in result.output
    body = client.post(
        "/api/v1/auth/login", json={"email": "gerente@giro.test", "senha": PASSWORD}
    ).get_json()
    assert body["user"]["papel"] == "gerente_loja"
    assert body["user"]["lojaId"] == str(loja.id)

    again = runner.invoke(
        args=["users", "create", "--email", "gerente@giro.test", "--password", PASSWORD, "--name", "Outro"]
    )
    assert again.exit_code != 0
    assert "already exists" in again.output


def test_users_create_rejects_bad_input(runner, ctx):
    short = runner.invoke(
        args=["users", "create", "--email", "a@giro.test", "--password", "curta", "--name", "A"]
    )
    assert short.exit_code != 0 and "8 characters" in short.output
    no_store = runner.invoke(
        args=[
            "users",
            "create",
            "--email",
            "b@giro.test",
            "--password",
            PASSWORD,
            "--name",
            "B",
            "--papel",
            "gerente_loja",
        ]
    )
    assert no_store.exit_code != 0 and "--loja" in no_store.output
    bad_store = runner.invoke(
        args=[
            "users",
            "create",
            "--email",
            "c@giro.test",
            "--password",
            PASSWORD,
            "--name",
            "C",
            "--papel",
            "gerente_loja",
            "--loja",
            "NOPE",
        ]
    )
    assert bad_store.exit_code != 0 and "NOPE" in bad_store.output
