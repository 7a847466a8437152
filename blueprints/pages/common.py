"""The page toolkit: cookie sessions and role checks, one htmx check, page-or-fragment
responses (always with ``Vary: HX-Request``), redirects after a change, and one way to
answer a refused action.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import wraps
from urllib.parse import urlsplit

from flask import Response, abort, make_response, redirect, render_template, request, url_for
from flask_jwt_extended import current_user, get_jwt, verify_jwt_in_request
from flask_jwt_extended.exceptions import CSRFError, JWTExtendedException
from jinja2_fragments.flask import render_block
from jwt.exceptions import PyJWTError
from marshmallow import ValidationError

from blueprints.pages.messages import domain_errors, schema_errors
from extensions import db, htmx
from services.errors import DomainError
from services.stock.access import has_stock_access


def wants_fragment() -> bool:
    """htmx asks for a part of the page (the page around it stays): the one htmx check.

    A boosted link or a history restore (the back button after htmx's cache
    missed) also carries HX-Request but needs the whole page.
    """
    return bool(htmx) and not htmx.boosted and not htmx.history_restore_request


def _respond(body: str, status: int) -> Response:
    response = make_response(body, status)
    # The same URL answers a page or a fragment: caches must keep them apart.
    response.vary.add("HX-Request")
    return response


def render_page(template: str, block: str | None = None, *, status: int = 200, **context) -> Response:
    """The whole page on a plain request; only ``block`` when htmx asks for a fragment."""
    if block is not None and wants_fragment():
        return _respond(render_block(template, block, **context), status)
    return _respond(render_template(template, **context), status)


def render_fragment(template: str, *, status: int = 200, **context) -> Response:
    """A template that is a fragment by itself (a table row, a card, an inline error)."""
    return _respond(render_template(template, **context), status)


def _go(target: str, code: int) -> Response:
    if wants_fragment():
        # htmx would swap a redirect's page into the fragment's place: it navigates instead.
        response = make_response("", 200)
        response.headers["HX-Redirect"] = target
        return response
    return redirect(target, code=code)


def after_change(endpoint: str, **values) -> Response:
    """After a change, to another page: htmx follows ``HX-Redirect``, a plain form gets a 303."""
    return _go(url_for(endpoint, **values), 303)


@dataclass(frozen=True)
class Refusal:
    """Why an action was refused: its status and pt-BR messages by field (``_form``: the whole)."""

    status: int
    errors: dict[str, str]

    @property
    def message(self) -> str:
        """One sentence for the whole refusal."""
        return self.errors.get("_form") or next(iter(self.errors.values()), "")


def refused(
    exc: ValidationError | DomainError, *, inline_not_found: bool = False, by_field: bool = False
) -> Refusal:
    """Answer a refused action: the form's input failed its schema (422), or a service said
    no. A service's refusal rolls back what the request changed, so the page is rendered
    from what is stored.

    A service's 404 propagates (the page's own not-found answer) unless
    ``inline_not_found``: then it is said in place, like any other refusal.
    ``by_field`` puts the message of a refusal about one field (``extra["field"]``,
    a duplicate name...) next to that field.
    """
    if isinstance(exc, ValidationError):
        return Refusal(422, schema_errors(exc))
    db.session.rollback()
    if exc.status == 404 and not inline_not_found:
        raise exc
    errors = domain_errors(exc)
    field = exc.extra.get("field")
    if by_field and field and "_form" in errors:
        errors = {field: errors.pop("_form")}
    return Refusal(exc.status, errors)


def safe_next(target: str | None) -> str:
    """Only same-site relative paths: a login link must not bounce people elsewhere."""
    if not target:
        return url_for("home.index")
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return url_for("home.index")
    return target


def _to_login() -> Response:
    return _go(
        url_for("account.login", next=request.full_path.rstrip("?") if request.method == "GET" else None), 302
    )


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
            except CSRFError:
                abort(400, description="Sessão expirada: recarregue a página e tente de novo.")
            except (JWTExtendedException, PyJWTError):
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


def end_transaction(*, commit: bool) -> None:
    """End the request's transaction now, for a view that works in steps: a claim that must
    outlive a failed later step, or a read ended before the network is waited on."""
    if commit:
        db.session.commit()
    else:
        db.session.rollback()
