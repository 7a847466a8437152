"""One error handler for the whole app, answering in each service's dialect.

Remanejamento speaks FastAPI (``{"detail": ...}``); the tracker speaks
``{"error", "message", "details"}``; browser pages get an HTML page. Which one
a request gets depends only on its path, so unknown routes under an API base
answer JSON too.
"""

from __future__ import annotations

import logging
from itertools import islice
from typing import Any

from flask import Flask, current_app, jsonify, render_template, request
from sqlalchemy.exc import DBAPIError
from werkzeug.exceptions import HTTPException, InternalServerError, MethodNotAllowed

from database import StaleReadSnapshot, is_write_request, lock_conflict
from extensions import MISSING_BODY
from services.errors import DomainError, FieldError, ValidationFailed

log = logging.getLogger(__name__)

STOCK, TRACKER, PAGES = "stock", "tracker", "pages"

# An error body stays small whatever the input: at most this many field errors,
# each message and each part of its location cut to these lengths.
MAX_FIELD_ERRORS = 20
MAX_MESSAGE_LENGTH = 300
MAX_LOC_PART_LENGTH = 100

# Status -> the tracker's error code when nothing more specific is known.
TRACKER_CODES = {
    400: "VALIDATION_ERROR",
    401: "UNAUTHORIZED",
    402: "PLAN_LIMIT_REACHED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    409: "CONFLICT",
    413: "PAYLOAD_TOO_LARGE",
    414: "URI_TOO_LONG",
    415: "UNSUPPORTED_MEDIA_TYPE",
    422: "VALIDATION_ERROR",
    429: "RATE_LIMITED",
    431: "HEADERS_TOO_LARGE",
}

# The stock dialect is read by Brazilian planners: shared error codes get
# Portuguese text there.
STOCK_TEXT = {
    "INVALID_CREDENTIALS": "E-mail ou senha inválidos",
    "INVALID_TOKEN": "Token inválido",
    "TOKEN_EXPIRED": "Token expirado",
    "UNAUTHORIZED": "Não autenticado",
    "USER_BANNED": "Conta bloqueada",
    "FORBIDDEN": "Sem permissão para esta ação",
    "NOT_FOUND": "Não encontrado",
    "METHOD_NOT_ALLOWED": "Método não permitido",
    "UNSUPPORTED_MEDIA_TYPE": "O corpo deve ser application/json",
    "URI_TOO_LONG": "URL longa demais",
    "HEADERS_TOO_LARGE": "Cabeçalhos grandes demais",
    "RATE_LIMITED": "Muitas tentativas; tente novamente mais tarde",
    "PAYLOAD_TOO_LARGE": "Corpo da requisição grande demais",
    "INTERNAL_ERROR": "Erro interno",
    "BUSY": "Banco de dados ocupado; tente novamente em instantes",
}

# Codes raised by the shared identity services: the stock dialect shows its own text.
SHARED_AUTH_CODES = {"INVALID_CREDENTIALS", "INVALID_TOKEN", "TOKEN_EXPIRED", "UNAUTHORIZED", "USER_BANNED"}

# webargs locations -> the FastAPI ``loc`` root.
LOCATIONS = {"json": "body", "form": "body", "query": "query", "view_args": "path", "path": "path"}

# marshmallow messages -> FastAPI-like type tags.
MESSAGE_TYPES = (
    ("Missing data for required field", "missing"),
    ("Field may not be null", "missing"),
    (MISSING_BODY, "missing"),
    ("Not a valid UUID", "uuid_parsing"),
    ("Not a valid integer", "int_parsing"),
    ("Not a valid number", "float_parsing"),
    ("Not a valid boolean", "bool_parsing"),
    ("Not a valid string", "string_type"),
    ("Not a valid email", "value_error.email"),
    ("Not a valid date", "date_parsing"),
    ("Not a valid list", "list_type"),
    ("Shorter than minimum length", "string_too_short"),
    ("Must not be blank", "string_too_short"),
    ("Longer than maximum length", "string_too_long"),
    ("Must have at most", "too_long"),
    ("Must be one of", "enum"),
    ("Must be greater than or equal", "greater_than_equal"),
    ("Must be less than or equal", "less_than_equal"),
    ("Unknown field", "extra_forbidden"),
    ("Invalid JSON", "json_invalid"),
    ("Invalid input type", "model_type"),
)


def service_of(path: str) -> str:
    """The service a path belongs to, by its configured mount point."""
    cfg = current_app.config
    mounts = [(cfg[f"{s.upper()}_PREFIX"], s) for s in cfg["SERVICES"]]
    # Longest prefix first, so "/tracker/api" is not taken for "" + "/api".
    for prefix, service in sorted(mounts, key=lambda m: len(m[0]), reverse=True):
        if path.startswith(prefix + "/api/") or path == prefix + "/health":
            return service
    return PAGES


def _type_for(msg: str) -> str:
    for needle, tag in MESSAGE_TYPES:
        if needle.lower() in msg.lower():
            return tag
    return "value_error"


def flatten_messages(messages: Any, limit: int = MAX_FIELD_ERRORS) -> list[FieldError]:
    """Turn marshmallow/webargs nested messages into a flat list of FieldErrors (the first ``limit``)."""
    return list(islice(_iter_messages(messages, ()), limit))


def _iter_messages(messages: Any, loc: tuple):
    if isinstance(messages, dict):
        for key, value in messages.items():
            if not loc and key in LOCATIONS:
                key = LOCATIONS[key]
            # "_schema" is an error about the whole object: keep the parent's loc.
            sub = loc if key == "_schema" else (*loc, key)
            yield from _iter_messages(value, sub)
    elif isinstance(messages, (list, tuple)):
        for item in messages:
            if isinstance(item, str):
                yield FieldError(loc, item, _type_for(item))
            else:
                yield from _iter_messages(item, loc)
    else:
        yield FieldError(loc, str(messages), _type_for(str(messages)))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bounded(errors: list[FieldError]) -> list[FieldError]:
    """The first MAX_FIELD_ERRORS errors, with long messages and locations cut."""
    return [
        FieldError(
            tuple(_cut(p, MAX_LOC_PART_LENGTH) if isinstance(p, str) else p for p in e.loc),
            _cut(e.msg, MAX_MESSAGE_LENGTH),
            e.type,
        )
        for e in errors[:MAX_FIELD_ERRORS]
    ]


def _stock_body(status: int, message: str, errors: list[FieldError] | None):
    if errors is not None:
        return 422, {"detail": [{"loc": list(e.loc), "msg": e.msg, "type": e.type} for e in errors]}
    return status, {"detail": message}


def _tracker_body(status: int, code: str, message: str, errors, extra):
    body: dict[str, Any] = {"error": code, "message": message}
    if errors is not None:
        status = 400
        body["error"] = "VALIDATION_ERROR"
        body["details"] = [
            {
                "field": ".".join(str(p) for p in e.loc[1:]) or str(e.loc[0] if e.loc else "body"),
                "message": e.msg,
            }
            for e in errors
        ]
    body.update(extra or {})
    return status, body


def error_response(
    status: int,
    code: str,
    message: str = "",
    *,
    errors: list[FieldError] | None = None,
    extra: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
):
    """Build the response for an error in the dialect of the current request."""
    service = service_of(request.path)
    headers = dict(headers or {})
    if errors is not None:
        errors = _bounded(errors)
    if service == STOCK:
        if not message or code in SHARED_AUTH_CODES:
            message = STOCK_TEXT.get(code, message or code)
        status, body = _stock_body(status, message, errors)
        if status == 401:
            headers.setdefault("WWW-Authenticate", "Bearer")
    elif service == TRACKER:
        status, body = _tracker_body(status, code, message or code, errors, extra)
        if status == 401:
            headers.setdefault("WWW-Authenticate", "Bearer")
    else:
        html = render_template("errors/error.html", status=status, message=message or code)
        return html, status, headers
    response = jsonify(body)
    response.status_code = status
    response.headers.extend(headers)
    return response


def handle_http_exception(exc: HTTPException):
    data = getattr(exc, "data", None) or {}
    status = exc.code or 500
    headers = dict(data.get("headers") or {})
    if isinstance(exc, MethodNotAllowed) and exc.valid_methods:
        # RFC 9110: a 405 names the methods the resource does support.
        headers["Allow"] = ", ".join(sorted(exc.valid_methods))
    messages = data.get("messages")
    if messages is not None and status in (400, 422):
        # webargs: the body, query or path failed its schema (or is not JSON).
        return error_response(
            422, "VALIDATION_ERROR", "Validation failed", errors=flatten_messages(messages), headers=headers
        )
    code = TRACKER_CODES.get(status, "ERROR" if status < 500 else "INTERNAL_ERROR")
    if service_of(request.path) == STOCK:
        message = STOCK_TEXT.get(code, exc.name)
    else:
        message = exc.description if status != 404 else "Resource not found"
    return error_response(status, code, message, headers=headers)


def handle_domain_error(exc: DomainError):
    if isinstance(exc, ValidationFailed):
        return error_response(422, exc.code, exc.message, errors=exc.errors)
    return error_response(exc.status, exc.code, exc.message, extra=exc.extra)


def handle_unexpected(exc: Exception):
    if isinstance(exc, HTTPException):
        return handle_http_exception(exc)
    log.exception("Unhandled error on %s %s", request.method, request.path)
    from observability import request_id

    # The request id lets a user's report find the logged stack trace: the stock dialect
    # quotes it in ``detail`` (its only member), the tracker's in its own ``request_id``.
    rid = request_id()
    if service_of(request.path) == STOCK:
        return error_response(500, "INTERNAL_ERROR", f"Erro interno (request id {rid})")
    return error_response(500, "INTERNAL_ERROR", "Internal server error", extra={"request_id": rid})


# Seconds a client is told to wait when the database stayed locked past its wait.
BUSY_RETRY_AFTER = 1


def handle_database_error(exc: DBAPIError):
    """A statement or the commit failed. On SQLite, a request that began by reading and could
    not take the write lock runs again with it (once: ``app.Giro.full_dispatch_request``); a
    lock held past the database's wait is a 503 with ``Retry-After``; anything else is an
    unexpected 500."""
    from observability import request_id
    from services import ops_metrics

    if not lock_conflict(exc):
        ops_metrics.transaction_failed("error")
        return handle_unexpected(exc)
    if getattr(exc.orig, "sqlite_errorcode", None) is not None and not is_write_request():
        ops_metrics.transaction_failed("retried_with_write_lock")
        raise StaleReadSnapshot() from exc
    ops_metrics.transaction_failed("busy")
    log.warning(
        "Database busy on %s %s (request id %s): %s", request.method, request.path, request_id(), exc.orig
    )
    headers = {"Retry-After": str(BUSY_RETRY_AFTER)}
    if service_of(request.path) == TRACKER:
        return error_response(
            503,
            "SERVICE_UNAVAILABLE",
            "The database is busy; try again in a moment",
            headers=headers,
            extra={"request_id": request_id()},
        )
    return error_response(503, "BUSY", STOCK_TEXT["BUSY"], headers=headers)


def register_error_handlers(app: Flask) -> None:
    app.register_error_handler(DBAPIError, handle_database_error)
    app.register_error_handler(HTTPException, handle_http_exception)
    app.register_error_handler(DomainError, handle_domain_error)
    app.register_error_handler(InternalServerError, handle_unexpected)
    app.register_error_handler(Exception, handle_unexpected)
