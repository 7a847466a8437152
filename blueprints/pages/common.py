"""What every page shares: cookie sessions, role checks, full-page or fragment rendering."""

from __future__ import annotations

from functools import wraps
from urllib.parse import urlsplit

from flask import Response, abort, make_response, redirect, render_template, request, url_for
from flask_jwt_extended import current_user, get_jwt, verify_jwt_in_request
from flask_jwt_extended.exceptions import JWTExtendedException
from jinja2_fragments.flask import render_block
from jwt.exceptions import PyJWTError

from extensions import htmx
from services.stock.access import has_stock_access


def wants_fragment() -> bool:
    """htmx asks for a part of the page (the page around it stays).

    A boosted link or a history restore (the back button after htmx's cache
    missed) also carries HX-Request but needs the whole page.
    """
    return bool(htmx) and not htmx.boosted and not htmx.history_restore_request


def render_page(template: str, block: str | None = None, *, status: int = 200, **context) -> Response:
    """The whole page on a plain request; only ``block`` when htmx asks for it."""
    if block is not None and wants_fragment():
        body = render_block(template, block, **context)
    else:
        body = render_template(template, **context)
    response = make_response(body, status)
    response.headers.add("Vary", "HX-Request")
    return response


def safe_next(target: str | None) -> str:
    """Only same-site relative paths: a login link must not bounce people elsewhere."""
    if not target:
        return url_for("home.index")
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return url_for("home.index")
    return target


def _to_login() -> Response:
    target = url_for("account.login", next=request.full_path.rstrip("?") if request.method == "GET" else None)
    if htmx:
        response = make_response("", 200)
        response.headers["HX-Redirect"] = target
        return response
    return redirect(target)


def page_login_required(*papeis: str, stock: bool = False):
    """A signed-in person (JWT in an HttpOnly cookie, CSRF checked on writes); anyone
    else is sent to the login page. ``stock`` pages (and any with ``papeis``, stock
    roles) need a granted stock role: without one the page says so and offers the tracker.
    """

    def decorator(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            try:
                verify_jwt_in_request(locations=["cookies"])
            except (JWTExtendedException, PyJWTError) as exc:
                if exc.__class__.__name__ == "CSRFError":
                    abort(400, description="Sessão expirada: recarregue a página e tente de novo.")
                return _to_login()
            if (stock or papeis) and not has_stock_access(current_user):
                return no_stock_access_page()
            if papeis and current_user.papel not in papeis:
                abort(403, description="Seu papel não permite abrir esta página.")
            return view(*args, **kwargs)

        return wrapper

    return decorator


def no_stock_access_page() -> Response:
    return render_page("errors/no_stock_access.html", status=403)


def page_csrf_token() -> str:
    """The CSRF value bound to the session cookie, for htmx headers and forms."""
    try:
        return get_jwt().get("csrf", "")
    except RuntimeError:
        return ""
