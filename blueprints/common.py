"""Helpers shared by the API blueprints of both services."""

from __future__ import annotations

from functools import wraps

from flask_jwt_extended import current_user, verify_jwt_in_request
from flask_smorest import Blueprint

from services.errors import ForbiddenError

BEARER = [{"bearerAuth": []}]


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
