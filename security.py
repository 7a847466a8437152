"""HTTP-level protections: response security headers and request size limits.

Every response carries a Content-Security-Policy without inline script or style
(templates keep scripts in ``static/js`` and pass data-driven styles as
``data-vars``), refuses framing, and limits the referrer. Oversized requests
are refused here, in the dialect of their service, below the limits of
gunicorn (``gunicorn.conf.py``), which would otherwise answer in HTML.
"""

from __future__ import annotations

import json

from flask import Flask, request
from werkzeug.exceptions import RequestHeaderFieldsTooLarge, RequestURITooLarge

# Pages and the Swagger UI load only same-origin assets (htmx, Chart.js, SortableJS and
# Swagger UI are vendored under /static/vendor). Images may be data: URIs (Swagger UI's CSS).
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    # frame-ancestors for browsers that predate it.
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "X-Content-Type-Options": "nosniff",
}

# Below gunicorn's own limits (gunicorn.conf.py: a request line of 8190 bytes, 16 KiB per
# header field), so a client of either API gets its error in JSON.
MAX_URL_BYTES = 4096
MAX_HEADER_BYTES = 8192


def register(app: Flask) -> None:
    app.before_request(refuse_oversized_requests)
    app.wsgi_app = SecurityHeaders(app.wsgi_app)


def refuse_oversized_requests() -> None:
    environ = request.environ
    target = environ.get("RAW_URI") or environ.get("REQUEST_URI") or request.full_path
    if len(target.encode("latin-1", "replace")) > MAX_URL_BYTES:
        raise RequestURITooLarge(f"The URL is longer than {MAX_URL_BYTES} bytes")
    if _header_bytes(environ) > MAX_HEADER_BYTES:
        raise RequestHeaderFieldsTooLarge(f"The request headers exceed {MAX_HEADER_BYTES} bytes")


# The headers werkzeug's ``request.headers`` reads without the ``HTTP_`` prefix.
_BARE_HEADER_KEYS = frozenset({"CONTENT_TYPE", "CONTENT_LENGTH"})


def _header_bytes(environ: dict) -> int:
    """Each header's ``Name: value\r\n`` length, read from the environ (``request.headers`` would
    rebuild every name first): ``HTTP_X_A`` is the header ``X-A``, five characters shorter."""
    total = 0
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            if key[5:] not in _BARE_HEADER_KEYS:
                total += len(key) - 1 + len(value)
        elif key in _BARE_HEADER_KEYS and value:
            total += len(key) + 4 + len(value)
    return total


_SECURITY_HEADER_NAMES = frozenset(name.lower() for name in SECURITY_HEADERS)
_SECURITY_HEADER_ITEMS = tuple(SECURITY_HEADERS.items())


class SecurityHeaders:
    """WSGI middleware adding the security headers to every response, error pages and static
    files included. A header a view set itself wins. Done on the WSGI header list: werkzeug's
    ``Headers`` checks and copies each value it is given, and this runs on every response."""

    def __init__(self, wsgi_app):
        self.wsgi_app = wsgi_app

    def __call__(self, environ, start_response):
        def start_with_headers(status, headers, exc_info=None):
            if any(name.lower() in _SECURITY_HEADER_NAMES for name, _ in headers):
                present = {name.lower() for name, _ in headers}
                headers.extend(item for item in _SECURITY_HEADER_ITEMS if item[0].lower() not in present)
            else:
                headers.extend(_SECURITY_HEADER_ITEMS)
            return start_response(status, headers, exc_info)

        return self.wsgi_app(environ, start_with_headers)


def harden_cookies(config: dict) -> None:
    """Production sends its cookies over HTTPS only, whatever JWT_COOKIE_SECURE says."""
    if config["ENV_NAME"] == "production":
        config["JWT_COOKIE_SECURE"] = True
        config["SESSION_COOKIE_SECURE"] = True


# What gunicorn refuses before any service sees the request, by status: the codes of both dialects.
_GUNICORN_CODES = {
    403: "FORBIDDEN",
    414: "URI_TOO_LONG",
    417: "EXPECTATION_FAILED",
    431: "HEADERS_TOO_LARGE",
    500: "INTERNAL_ERROR",
    501: "NOT_IMPLEMENTED",
}


def answer_gunicorn_refusals_in_json() -> None:
    """gunicorn answers itself what it refuses to parse (a request line or header past its
    limits, a malformed request), with an HTML page. Its page becomes JSON carrying both
    dialects' members: no path was read, so the service, and its dialect, is unknown.
    Called from ``gunicorn.conf.py`` in the master, before the workers fork."""
    from gunicorn import util

    def write_error(sock, status_int: int, reason: str, mesg: str) -> None:
        from errors import STOCK_TEXT

        code = _GUNICORN_CODES.get(status_int, "BAD_REQUEST")
        body = json.dumps(
            {"detail": STOCK_TEXT.get(code, mesg), "error": code, "message": mesg}, ensure_ascii=False
        ).encode()
        head = (
            f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        util.write_nonblock(sock, head.encode("latin-1") + body)

    util.write_error = write_error
