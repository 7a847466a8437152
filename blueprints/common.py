"""Helpers shared by the API blueprints of both services."""

from __future__ import annotations

from functools import wraps

from flask import current_app, g, request
from flask_jwt_extended import current_user, decode_token, get_current_user, verify_jwt_in_request
from flask_jwt_extended.exceptions import JWTExtendedException
from flask_limiter.util import get_remote_address
from flask_smorest import Blueprint
from jwt.exceptions import PyJWTError

from extensions import TOKEN_REQUIREMENT, limiter
from services.errors import DomainError
from services.stock.access import ensure_stock_access

# Each API documents this requirement with its own security scheme (see ``extensions.ErrorResponses``).
BEARER = [{TOKEN_REQUIREMENT: []}]

# The attribute marking a view that has rate limits: flask-limiter's hooks run for those alone
# (``app._run_limiter_hooks_only_where_limits_apply``). ``functools.wraps`` carries it to wrappers.
THROTTLED = "giro_throttled"


def verify_bearer_token():
    """The request's bearer access token, checked by flask-jwt-extended (the Authorization
    header only: cookie sessions belong to the pages). Returns that account (None for a
    method exempt from the check)."""
    if verify_jwt_in_request(locations=["headers"]) is None:
        return None
    return get_current_user()


def auth_required():
    """Require a valid bearer access token (tracker).

    Put it right under ``@blp.route`` so that credentials are checked before
    the body or query is validated. Only the Authorization header is accepted
    on the APIs: cookie sessions belong to the pages.
    """

    def decorator(func):
        @wraps(func)
        def wrapper(*args, **kwargs):
            verify_bearer_token()
            return func(*args, **kwargs)

        return Blueprint.doc(security=BEARER)(wrapper)

    return decorator


def stock_auth_required(*papeis: str):
    """Require a bearer access token of an account with a stock role; with ``papeis``,
    one of those. Credentials are checked before the body or query, as FastAPI does."""

    def decorator(func):
        @wraps(func)
        def wrapper(*args, **kwargs):
            # The account itself, not the ``current_user`` proxy: one lookup instead of one per attribute.
            ensure_stock_access(verify_bearer_token() or current_user, *papeis)
            return func(*args, **kwargs)

        return Blueprint.doc(security=BEARER)(wrapper)

    return decorator


def presented_access_claims() -> dict | None:
    """The claims of a valid access token in the Authorization header, if any (logout)."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        return None
    try:
        claims = decode_token(token.strip())
    except (PyJWTError, JWTExtendedException, ValueError, KeyError):
        return None
    return claims if claims.get("type") == "access" else None


def _address_and_email() -> str:
    body = request.get_json(silent=True) if request.is_json else None
    email = body.get("email") if isinstance(body, dict) else request.form.get("email")
    return f"{get_remote_address()}|{str(email or '').strip().lower()}"


def login_throttle(view):
    """Refuse further sign-in attempts (429) after too many failures for one address and e-mail.

    Only failed attempts count (401), so a person who signs in correctly is never slowed down.
    """
    # One budget shared by every sign-in form (both APIs and the login page).
    limited = limiter.shared_limit(
        lambda: current_app.config["LOGIN_RATE_LIMIT"],
        scope="login",
        key_func=_address_and_email,
        deduct_when=lambda response: response.status_code == 401,
    )(view)

    @wraps(limited)
    def guarded(*args, **kwargs):
        # Redis down: the limiter counts in memory meanwhile, or, when configured so,
        # this sign-in is refused (503) until Redis answers again.
        if current_app.config["LOGIN_THROTTLE_FAIL_CLOSED"]:
            from services.job_queue import redis_ok

            if redis_ok() is False:
                raise DomainError(
                    "Entrar está indisponível por alguns instantes; tente de novo",
                    "SERVICE_UNAVAILABLE",
                    503,
                )
        return limited(*args, **kwargs)

    setattr(guarded, THROTTLED, True)
    return guarded


def _mail_recipient() -> str:
    """Whom an account e-mail would reach: the address in the body or form, else the
    signed-in account's (a new confirmation link)."""
    body = request.get_json(silent=True) if request.is_json else None
    email = body.get("email") if isinstance(body, dict) else request.form.get("email")
    if not email and g.get("_jwt_extended_jwt_user"):
        email = g._jwt_extended_jwt_user["loaded_user"].email
    return str(email or "").strip().lower()


def _could_send_mail(response) -> bool:
    return request.method == "POST" and response.status_code < 400


def mail_throttle(view):
    """Bound the account e-mails (registration, address confirmation, password reset), one
    budget for every form and API that sends them: per recipient (``MAIL_RATE_LIMIT``), so
    nobody can flood a mailbox, and per client (``MAIL_CLIENT_RATE_LIMIT``), so nobody can
    spray many. A request counts when it could have sent one (a POST answered below 400), whether
    or not the address has an account, so the answers never tell which do."""
    limited = limiter.shared_limit(
        lambda: current_app.config["MAIL_RATE_LIMIT"],
        scope="account-mail",
        key_func=_mail_recipient,
        deduct_when=_could_send_mail,
    )(view)
    limited = limiter.shared_limit(
        lambda: current_app.config["MAIL_CLIENT_RATE_LIMIT"],
        scope="account-mail-client",
        key_func=get_remote_address,
        deduct_when=_could_send_mail,
    )(limited)
    setattr(limited, THROTTLED, True)
    return limited
