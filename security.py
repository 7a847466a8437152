"""HTTP-level protections: response security headers and request size limits.

Every response carries a Content-Security-Policy without inline script or style
(templates keep scripts in ``static/js`` and pass data-driven styles as
``data-vars``), refuses framing, and limits the referrer. Oversized requests
are refused here, in the dialect of their service, below the limits of
gunicorn (``gunicorn.conf.py``), which would otherwise answer in HTML.
"""

from __future__ import annotations

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
    app.after_request(add_security_headers)


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


def add_security_headers(response):
    headers = response.headers
    # A header a view set itself wins; one pass over the names finds none in nearly every response.
    present = {name.lower() for name, _ in headers} & _SECURITY_HEADER_NAMES
    if not present:
        headers.extend(_SECURITY_HEADER_ITEMS)
        return response
    for name, value in _SECURITY_HEADER_ITEMS:
        if name.lower() not in present:
            headers.add(name, value)
    return response


def harden_cookies(config: dict) -> None:
    """Production sends its cookies over HTTPS only, whatever JWT_COOKIE_SECURE says."""
    if config["ENV_NAME"] == "production":
        config["JWT_COOKIE_SECURE"] = True
        config["SESSION_COOKIE_SECURE"] = True
