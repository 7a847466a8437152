"""Helpers shared by the API blueprints of both services."""

from __future__ import annotations

from functools import wraps

from flask import current_app, request
from flask_jwt_extended import current_user, verify_jwt_in_request
from flask_limiter.util import get_remote_address
from flask_smorest import Blueprint

from extensions import TOKEN_REQUIREMENT, limiter
from services.errors import ForbiddenError

# Each API documents this requirement with its own security scheme (see ``extensions.ErrorResponses``).
BEARER = [{TOKEN_REQUIREMENT: []}]


def auth_required(*papeis: str):
    """Require a valid bearer access token; with ``papeis``, one of those stock roles.

    Put it right under ``@blp.route`` so that credentials are checked before
    the body or query is validated, as FastAPI does. Only the Authorization
    header is accepted on the APIs: cookie sessions belong to the pages.
    """

    def decorator(func):
        @wraps(func)
        def wrapper(*args, **kwargs):
            verify_jwt_in_request(locations=["headers"])
            if papeis and current_user.papel not in papeis:
                raise ForbiddenError("Sem permissão para esta ação")
            return func(*args, **kwargs)

        return Blueprint.doc(security=BEARER)(wrapper)

    return decorator


def bearer_security_scheme() -> dict:
    return {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}


def _address_and_email() -> str:
    body = request.get_json(silent=True) if request.is_json else None
    email = body.get("email") if isinstance(body, dict) else request.form.get("email")
    return f"{get_remote_address()}|{str(email or '').strip().lower()}"


def login_throttle(view):
    """Refuse further sign-in attempts (429) after too many failures for one address and e-mail.

    Only failed attempts count (401), so a person who signs in correctly is never slowed down.
    """
    return limiter.limit(
        lambda: current_app.config["LOGIN_RATE_LIMIT"],
        key_func=_address_and_email,
        deduct_when=lambda response: response.status_code == 401,
        scope="login",
    )(view)


def reset_throttle(view):
    """Bound password-reset e-mails per address, whatever the outcome."""
    return limiter.limit(
        lambda: current_app.config["PASSWORD_RESET_RATE_LIMIT"], key_func=get_remote_address, scope="reset"
    )(view)
