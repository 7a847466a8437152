"""Application factory: ``flask --app app ...`` and ``gunicorn "app:create_app()"``."""

from __future__ import annotations

import os
import sqlite3
import uuid
from functools import partial
from pathlib import Path
from typing import Any

from flask import Flask
from flask.sessions import NullSession, SessionInterface
from sqlalchemy import event
from sqlalchemy.exc import DBAPIError

import errors
import security
from blueprints.converters import LenientUUIDConverter, uuid_converter_doc
from blueprints.parsing import Request
from blueprints.responses import OrjsonProvider
from config import Config
from database import StaleReadSnapshot, is_write_request, ping_connections_left_idle
from extensions import babel, db, htmx, jwt, limiter, migrate, stock_api, tracker_api
from services.transactions import writer

API_VERSION_PATH = "/api/v1"


class NoCookieSession(NullSession):
    """What ``flask.session`` holds: nothing, and writing to it says why."""

    def _fail(self, *args, **kwargs):
        raise RuntimeError(
            "Giro keeps no Flask cookie session: pages sign in with JWT cookies and their CSRF "
            "token (flask-jwt-extended, blueprints/pages/common.py), the APIs with bearer tokens."
        )

    __setitem__ = __delitem__ = clear = pop = popitem = update = setdefault = _fail


class StatelessSessionInterface(SessionInterface):
    """Flask's cookie session is not used: opening and saving it on every request (reading the
    cookie header, building and checking the session) cost as much as the security headers."""

    null_session_class = NoCookieSession

    def open_session(self, app: Flask, request) -> NoCookieSession:
        return NoCookieSession()

    def save_session(self, app: Flask, session, response) -> None:
        return None


class Giro(Flask):
    """Flask, remembering which callables are plain functions: Flask asks for every hook, view and
    handler on every request (``inspect.iscoroutinefunction``), and the answer never changes."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._sync: dict[Any, Any] = {}
        self.session_interface = StatelessSessionInterface()

    # Hooks, views and handlers are a fixed set; callbacks made per request (``after_this_request``)
    # are not kept once the set is this large.
    SYNC_MEMO_SIZE = 1024

    def full_dispatch_request(self):
        """A request whose read snapshot went stale before it wrote (SQLite) runs once more,
        taking the write lock as its transaction begins (``errors.handle_database_error``)."""
        try:
            return super().full_dispatch_request()
        except StaleReadSnapshot:
            db.session.rollback()
            with writer():
                return super().full_dispatch_request()

    def ensure_sync(self, func):
        try:
            return self._sync[func]
        except KeyError:
            synced = super().ensure_sync(func)
            if len(self._sync) < self.SYNC_MEMO_SIZE:
                self._sync[func] = synced
            return synced
        except TypeError:  # an unhashable callable: asked every time, as Flask does
            return super().ensure_sync(func)


def create_app(overrides: dict[str, Any] | None = None) -> Flask:
    app = Giro(__name__, instance_relative_config=True)
    app.request_class = Request
    app.config.from_object(Config)
    app.config.update(overrides or {})
    if app.testing and "JOBS_EAGER" not in (overrides or {}):
        app.config["JOBS_EAGER"] = True  # the suite runs jobs inline, inside its own transaction
    Config.check(app.config)
    security.harden_cookies(app.config)
    app.url_map.converters["uuid"] = LenientUUIDConverter
    app.json = OrjsonProvider(app)

    register_logging(app)
    register_extensions(app)
    register_database_hooks(app)
    register_jwt_callbacks(app)
    errors.register_error_handlers(app)
    register_liveness_probes(app)  # inside the security headers' middleware, which wraps last
    register_request_lifecycle(app)
    register_apis(app)
    register_pages(app)
    register_cli(app)
    return app


def register_logging(app: Flask) -> None:
    import observability

    if not app.debug and not app.testing:
        observability.configure_logging(app.config["LOG_FORMAT"], app.config["LOG_LEVEL"])


def register_extensions(app: Flask) -> None:
    if app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite:///"):
        os.makedirs(app.instance_path, exist_ok=True)
    db.init_app(app)
    migrate.init_app(app, db, directory=str(Path(__file__).parent / "migrations"))
    jwt.init_app(app)
    babel.init_app(app, locale_selector=_select_locale)
    htmx.init_app(app)
    if app.config["RATELIMIT_STORAGE_URI"].startswith("giro+database"):
        import services.rate_limits  # noqa: F401 (registers the storage's scheme with the limits library)

        app.config.setdefault("RATELIMIT_STORAGE_OPTIONS", {})["database_url"] = app.config[
            "SQLALCHEMY_DATABASE_URI"
        ]
    limiter.init_app(app)
    _run_limiter_hooks_only_where_limits_apply(app)
    if app.config["TRUSTED_PROXIES"]:
        from werkzeug.middleware.proxy_fix import ProxyFix

        proxies = app.config["TRUSTED_PROXIES"]
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies, x_host=proxies)


def _run_limiter_hooks_only_where_limits_apply(app: Flask) -> None:
    """flask-limiter checks limits before every request and writes its headers after it, though
    only the sign-in and password-reset views have limits (``blueprints.common``, which marks
    them ``THROTTLED``); its hooks keep their place but run for those endpoints alone."""
    from flask import request

    from blueprints.common import THROTTLED

    throttled: frozenset[str] | None = None

    def applies() -> bool:
        nonlocal throttled
        if throttled is None:  # every view is registered by the first request
            throttled = frozenset(
                endpoint for endpoint, view in app.view_functions.items() if getattr(view, THROTTLED, False)
            )
        return request.endpoint in throttled

    def of_limiter(hook) -> bool:
        owner = getattr(hook, "__self__", None)
        if owner is None and isinstance(hook, partial):
            owner = hook.args[0] if hook.args else None
        return owner is limiter

    def before(hook):
        return lambda: hook() if applies() else None

    def after(hook):
        return lambda response: hook(response) if applies() else response

    def teardown(hook):
        return lambda error=None: hook(error) if applies() else None

    for hooks, gate in (
        (app.before_request_funcs, before),
        (app.after_request_funcs, after),
        (app.teardown_request_funcs, teardown),
    ):
        functions = hooks.get(None, [])
        functions[:] = [gate(hook) if of_limiter(hook) else hook for hook in functions]


# Endpoints that take files larger than MAX_CONTENT_LENGTH (IMPORT_MAX_CONTENT_LENGTH).
LARGE_BODY_ENDPOINTS = frozenset({"stock_admin.upload_import"})
# Files attached to tracker issues: up to MAX_ATTACHMENT_BYTES and the multipart envelope.
ATTACHMENT_ENDPOINTS = frozenset({"tracker_attachments.upload_attachment", "attachment_pages.upload"})


def _select_locale() -> str:
    """pt-BR for everyone: the pages' text is Portuguese, so numbers and dates follow it
    whatever the browser's Accept-Language says, unless the account chose a language
    (``preferencias.idioma``)."""
    from flask_jwt_extended import get_current_user

    try:
        user = get_current_user()
    except RuntimeError:
        user = None
    idioma = getattr(user, "idioma", None)
    return idioma.replace("-", "_") if idioma else "pt_BR"


def register_database_hooks(app: Flask) -> None:
    """PostgreSQL: plan each query for its values. SQLite: enforce foreign keys, let
    SQLAlchemy own transactions (SAVEPOINT works) and let writing requests take the
    write lock when their transaction begins."""
    with app.app_context():
        engine = db.engine
    ping_connections_left_idle(engine, app.config["DATABASE_PING_AFTER_IDLE"])
    if engine.dialect.name == "postgresql":
        _plan_every_query_for_its_values(engine)
    if engine.dialect.name != "sqlite":
        return

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):
        if isinstance(dbapi_connection, sqlite3.Connection):
            # pysqlite's own transaction handling breaks SAVEPOINT; take it over.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA busy_timeout={int(app.config['SQLITE_BUSY_TIMEOUT'] * 1000)}")
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection):
        # A deferred transaction that reads and then writes fails at once when
        # another writer committed in between (the busy timeout cannot help), so
        # writing requests take the write lock up front and queue instead.
        connection.exec_driver_sql("BEGIN IMMEDIATE" if is_write_request() else "BEGIN")


def _plan_every_query_for_its_values(engine) -> None:
    """psycopg prepares a statement run five times, and PostgreSQL may then reuse one
    generic plan for every value. The best plan for a title search depends on its
    words (a rare word goes through the trigram index, a common one reads the first
    page in sort order), so each execution is planned for its own values."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):
        with dbapi_connection.cursor() as cursor:
            cursor.execute("SET plan_cache_mode = force_custom_plan")
        dbapi_connection.commit()


def register_jwt_callbacks(app: Flask) -> None:
    from flask import g

    from models.auth import User
    from models.base import utcnow
    from services import token_denylist
    from services.errors import AuthenticationError, ForbiddenError

    @jwt.user_lookup_loader
    def load_user(_header, claims):
        try:
            account_id = uuid.UUID(claims["sub"])
        except (ValueError, KeyError):
            return None
        # The deny-list check, made just before, read the account in its statement.
        user = g.pop("token_account", None)
        if user is None or user.id != account_id:
            user = db.session.get(User, account_id)
        if user is None or user.banned:
            return None
        issued = claims.get("ts", claims.get("iat", 0))
        if user.sessions_valid_after and issued < user.sessions_valid_after.timestamp():
            return None
        now = utcnow()
        # Activity for the admin statistics: sign-in and refresh record it, and so
        # does any change, at most every 15 minutes. Reads never write.
        stale = user.last_seen_at is None or (now - user.last_seen_at).total_seconds() > 900
        if stale and is_write_request():
            user.last_seen_at = now
        return user

    @jwt.user_lookup_error_loader
    def user_lookup_error(_header, claims):
        try:
            user = db.session.get(User, uuid.UUID(claims["sub"]))
        except (ValueError, KeyError):
            user = None
        if user is not None and user.banned:
            return errors.handle_domain_error(ForbiddenError("This account is banned", code="USER_BANNED"))
        return errors.handle_domain_error(
            AuthenticationError("Session is no longer valid, log in again", code="UNAUTHORIZED")
        )

    @jwt.expired_token_loader
    def expired(_header, _claims):
        return errors.handle_domain_error(AuthenticationError("Access token expired", code="TOKEN_EXPIRED"))

    @jwt.invalid_token_loader
    def invalid(reason):
        return errors.handle_domain_error(
            AuthenticationError(f"Invalid access token: {reason}", code="UNAUTHORIZED")
        )

    @jwt.unauthorized_loader
    def missing(reason):
        return errors.handle_domain_error(
            AuthenticationError("Missing bearer access token", code="UNAUTHORIZED")
        )

    @jwt.token_in_blocklist_loader
    def ended_by_logout(_header, claims):
        if claims.get("type") != "access":
            return False
        try:
            account_id = uuid.UUID(claims["sub"])
        except (ValueError, KeyError, TypeError, AttributeError):
            account_id = None
        denied, account = token_denylist.denial_and_account(claims["jti"], account_id)
        if account is not None:
            g.token_account = account  # for load_user, called next: one statement for both
        return denied

    @jwt.revoked_token_loader
    def revoked(_header, _claims):
        return errors.handle_domain_error(AuthenticationError("Token revoked", code="UNAUTHORIZED"))


def register_request_lifecycle(app: Flask) -> None:
    """Views and services only flush; the request commits once, or rolls back on error."""
    from flask import request
    from werkzeug.exceptions import RequestEntityTooLarge

    from blueprints.converters import InvalidPathValue
    from blueprints.uploads import MULTIPART_SLACK
    from schemas.fields import CONTROL
    from services.errors import FieldError, NotFoundError, ValidationFailed

    @app.before_request
    def refuse_oversized_body():
        # Refused from the declared length, before the view (or the sign-in throttle) reads it;
        # a chunked body is cut at the same limit while it is read.
        limit = app.config["MAX_CONTENT_LENGTH"]
        if request.endpoint in LARGE_BODY_ENDPOINTS:
            limit = request.max_content_length = app.config["IMPORT_MAX_CONTENT_LENGTH"]
        elif request.endpoint in ATTACHMENT_ENDPOINTS:
            limit = request.max_content_length = app.config["MAX_ATTACHMENT_BYTES"] + MULTIPART_SLACK
        if limit is not None and (request.content_length or 0) > limit:
            raise RequestEntityTooLarge(f"Request body larger than {limit} bytes")

    @app.url_value_preprocessor
    def reject_invalid_path_values(_endpoint, values):
        if not values:
            return
        # No slug, key or plan id holds a control character: such a path names nothing,
        # and is refused before it reaches a query.
        if any(type(value) is str and CONTROL.search(value) for value in values.values()):
            raise NotFoundError("Resource not found")
        bad = [name for name, value in values.items() if isinstance(value, InvalidPathValue)]
        if not bad:
            return
        if errors.service_of(request.path) == errors.STOCK:
            raise ValidationFailed(
                [FieldError(("path", name), "Input should be a valid UUID", "uuid_parsing") for name in bad]
            )
        raise NotFoundError("Resource not found")

    security.register(app)
    import observability

    observability.register(app)

    # Registered after every other hook, so it runs first: the request log and the metrics
    # see the answer the commit left, a 503 or a 500 when it failed.
    @app.after_request
    def finish_transaction(response):
        registry = db.session.registry
        # A request that never used the session (``/health``) has none to make and end.
        if not registry.has():
            return response
        session = registry()
        # A request that never began a transaction (no query, nothing added) has nothing to end.
        if not session.in_transaction() and not (session.new or session.dirty or session.deleted):
            return response
        if response.status_code >= 400:
            session.rollback()
            return response
        # The response is built and the session ends with the request: expiring every loaded
        # object for a reload that never comes cost a walk over the identity map.
        session.expire_on_commit = False
        try:
            session.commit()
        except DBAPIError as error:
            session.rollback()
            return app.make_response(errors.handle_database_error(error))
        return response


def _init_api(app: Flask, api, service: str) -> str:
    """Mount one service's Api under its prefix; returns the API base path."""
    prefix = app.config[f"{service.upper()}_PREFIX"]
    base = prefix + API_VERSION_PATH
    app.config[f"{service.upper()}_OPENAPI_URL_PREFIX"] = base
    app.config.setdefault(f"{service.upper()}_OPENAPI_SWAGGER_UI_URL", "/static/vendor/swagger-ui/")
    api.init_app(app)
    api.register_converter(LenientUUIDConverter, uuid_converter_doc)
    api.spec.components.security_scheme(api.security_scheme_name, SECURITY_SCHEMES[service](base))
    return base


def _stock_security_scheme(base: str) -> dict:
    # The spec names OAuth 2.0's password flow with this token URL, but its login takes
    # JSON (`email`, `senha`) and answers camelCase, which no generic OAuth client sends
    # or reads: the description says how to get and send the token.
    return {
        "type": "oauth2",
        "description": (
            f"Get a token with `POST {base}/auth/login` and a JSON body `{{email, senha}}` (not the "
            "form-encoded OAuth 2.0 grant), then send `Authorization: Bearer <accessToken>`."
        ),
        "flows": {"password": {"tokenUrl": f"{base}/auth/login", "scopes": {}}},
    }


def _tracker_security_scheme(_base: str) -> dict:
    return {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}


SECURITY_SCHEMES = {"stock": _stock_security_scheme, "tracker": _tracker_security_scheme}


# The ``service`` member of each service's ``/health`` body.
HEALTH_NAMES = {"stock": "remanejamento", "tracker": "tracker"}


def register_liveness_probes(app: Flask) -> None:
    from blueprints.health import register_probes

    register_probes(
        app,
        {
            app.config[f"{service.upper()}_PREFIX"]: (
                HEALTH_NAMES[service],
                app.config[f"{service.upper()}_API_VERSION"],
            )
            for service in app.config["SERVICES"]
        },
    )


def register_apis(app: Flask) -> None:
    from blueprints import stock, tracker
    from blueprints.health import make_health_blueprint

    services = {
        "stock": (stock_api, stock, STOCK_DESCRIPTION),
        "tracker": (tracker_api, tracker, TRACKER_DESCRIPTION),
    }
    for service in app.config["SERVICES"]:
        api, package, description = services[service]
        base = _init_api(app, api, service)
        api.spec.options["info"] = {"description": description}
        api.register_blueprint(
            make_health_blueprint(HEALTH_NAMES[service], app.config[f"{service.upper()}_API_VERSION"]),
            url_prefix=app.config[f"{service.upper()}_PREFIX"] or "/",
        )
        for blp in package.api_blueprints():
            api.register_blueprint(blp, url_prefix=base + (blp.url_prefix or ""))


def register_pages(app: Flask) -> None:
    from blueprints.pages import page_blueprints, register_template_globals

    register_template_globals(app)
    for blp in page_blueprints(app.config["SERVICES"]):
        app.register_blueprint(blp)


def register_cli(app: Flask) -> None:
    from blueprints.cli import register_commands

    register_commands(app)


STOCK_DESCRIPTION = """\
Remanejamento: stores, distribution centres, products, stock per size and the
weekly transfer recommendations.

Errors follow FastAPI: validation failures answer 422 with
`{"detail": [{"loc": [...], "msg": "...", "type": "..."}]}` (`loc` starts with
`body`, `query` or `path`); every other error answers `{"detail": "text"}`
(401 carries `WWW-Authenticate: Bearer`).

Access is granted, never implied: an account (for instance one made by the
tracker's public registration) has no `papel` until a stock admin grants one
(`flask users grant`), and until then login, refresh and every endpoint
answer 403 with a `detail` saying so.

Roles (`papel`): `admin`, `planejador`, `gerente_loja`, `visualizador`.
Access tokens last 24 h; refresh tokens 7 days (1 day with `remember: false`).
Refreshing rotates the refresh token: the response carries the new one in
`refreshToken`, and presenting a used refresh token again revokes its whole
family. Logout ends the refresh token's family and every access token issued
with it (and the one sent in `Authorization`) at once. Failed sign-ins share one
budget per client address and e-mail across both APIs and the login page.
Bodies ignore fields they do not define.

Limits: a body over the configured maximum (2 MiB by default) answers 413. A
JSON body nested deeper than 32 levels, with a number written in more than 40
characters, an object of more than 1,000 members or a lone surrogate escape is
malformed JSON (422 `json_invalid`). Strings are trimmed before their length is
checked (only spaces counts as empty; passwords are kept as typed) and refuse
control characters (`motivo` may hold tabs and line breaks); every string, list
and integer has the bounds its schema shows. Integers and booleans in bodies
must be JSON integers and booleans (`1.5`, `"3"` and `"yes"` are refused);
query strings carry them as text. A 422 lists at most 20 errors, with long
messages cut.

Request bodies are JSON: another media type answers 415, and an operation that
takes a body answers 422 (`loc: ["body"]`) without one. A method a path does not
support answers 405 with `Allow`.
""" + (
    f"A URL over {security.MAX_URL_BYTES // 1024} KiB answers 414 and request headers over "
    f"{security.MAX_HEADER_BYTES // 1024} KiB 431, in the same error body.\n"
)

TRACKER_DESCRIPTION = """\
Tracker: organizations, workspaces, projects, issues and platform administration.

Errors answer `{"error": "CODE", "message": "text"}`, plus `details`
(`[{field, message}]`) on `VALIDATION_ERROR`, `field` on a `CONFLICT` caused by
one field's value, and `resource`, `limit`, `current` and `plan` on
`PLAN_LIMIT_REACHED`. A resource in an organization the caller does not belong
to answers 404 `NOT_FOUND`.

Anyone may register; registering answers the same for a known and an unknown
address, and the address counts (accepting invitations, the configured
superadmin) only once the link e-mailed to it is followed. A tracker account
has no access to the remanejamento service until a stock admin grants a role.

Limits: a body over the configured maximum (2 MiB by default) answers 413
`PAYLOAD_TOO_LARGE`. A JSON body nested deeper than 32 levels, with a number
written in more than 40 characters, an object of more than 1,000 members or a
lone surrogate escape is malformed (400 `VALIDATION_ERROR`, field `body`).
Strings are trimmed before their length is checked (a name of only spaces is
refused; passwords and Markdown descriptions are kept as sent) and refuse
control characters, in bodies, query strings and paths alike (descriptions may
hold tabs and line breaks); every string, list and integer has the bounds its
schema shows. Integers and booleans in bodies must be JSON integers and
booleans (`1.5`, `"3"` and `"yes"` are refused); query strings carry them as
text. `details` lists at most 20 errors, with long messages cut.

Request bodies are JSON: another media type answers 415
`UNSUPPORTED_MEDIA_TYPE`, and an operation that takes a body answers 400
`VALIDATION_ERROR` (field `body`) without one. A method a path does not support
answers 405 `METHOD_NOT_ALLOWED` with `Allow`.
""" + (
    f"A URL over {security.MAX_URL_BYTES // 1024} KiB answers 414 `URI_TOO_LONG` and request headers "
    f"over {security.MAX_HEADER_BYTES // 1024} KiB 431 `HEADERS_TOO_LARGE`.\n"
)
