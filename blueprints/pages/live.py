"""Live updates of an open page (the batch table, the project board): the page holds a version
and asks every few seconds (``static/js/live.js``) what changed since; the answer is
``204 No Content`` while nothing did, otherwise the changed parts and a new version.

A version is the server's clock when the page (or the last answer) was read. "Changed since"
looks ``OVERLAP`` further back: a change stamps its rows before its transaction commits, so
one that committed just after a read still counts (a change whose transaction took longer
than that is seen with the next one, or on a reload). The page skips what it already shows
(a row with the same stamp, the same board).

A poll's view is wrapped in ``quiet_poll``: "nothing changed" is answered from one statement
that also checks the session and the caller's right to read (``services.live_polls``), with no
account loaded and no transaction; every other case (no session, a refusal, a change) runs the
view as any request, with its own checks and answers.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import lru_cache, wraps

from flask import Response, make_response, request
from flask_jwt_extended import decode_token
from flask_jwt_extended.config import config as jwt_config
from flask_jwt_extended.exceptions import JWTExtendedException
from jwt.exceptions import PyJWTError

from blueprints.pages.common import wants_fragment
from models.base import utcnow
from services import token_denylist
from services.live_polls import Caller

_STAMP = "%Y%m%dT%H%M%S%f"
# Longer than a decision's or a move's transaction; the page polls every 4 s, so a change is
# sent once or twice.
OVERLAP = timedelta(seconds=5)


def stamp(moment: datetime | None = None) -> str:
    """A moment as a version: fixed width, so the page compares two of them as text."""
    return (moment or utcnow()).astimezone(UTC).strftime(_STAMP)


def changed_after(version: str | None) -> datetime | None:
    """What counts as changed for a page holding ``version``: stamped after this moment.
    None (everything) when the version is missing or not one of ours."""
    try:
        return datetime.strptime((version or "")[:22], _STAMP).replace(tzinfo=UTC) - OVERLAP
    except ValueError:
        return None


def unchanged() -> Response:
    """Nothing changed: no body, nothing for the page to swap."""
    return no_store(make_response("", 204))


def no_store(response: Response) -> Response:
    """An answer about now: never kept by a cache, told apart from the page at the same address."""
    response.headers["Cache-Control"] = "no-store"
    response.vary.add("HX-Request")
    return response


@lru_cache(maxsize=1024)
def _verified_claims(token: str, _key: str) -> dict:
    """The claims of a token the app's decoder accepted, kept per token text (and signing key):
    an open page sends the same cookie every few seconds, and decoding it (three parses and
    the signature) cost a poll as much as its statement. What changes with time is checked at
    each poll: the expiry by the caller, the logout and the account by the poll's statement."""
    return decode_token(token)


def session_caller() -> Caller | None:
    """The session the request's cookie carries, as ``page_login_required`` verifies it (the
    app's decoder: signature, expiry, spelling; an access token; Redis's deny list when there
    is one), leaving the account and the database's deny list to the poll's statement. None
    when any of it fails: the view then answers as it always does."""
    token = request.cookies.get(jwt_config.access_cookie_name)
    if not token:
        return None
    try:
        claims = _verified_claims(token, jwt_config.decode_key)
        account_id = uuid.UUID(claims["sub"])
    except (JWTExtendedException, PyJWTError, KeyError, TypeError, ValueError, AttributeError):
        return None
    expires = claims.get("exp")
    if expires is not None and expires <= time.time() - jwt_config.leeway:
        return None  # as the decoder refuses it: expired
    jti = claims.get("jti")
    if claims.get("type") != "access" or not isinstance(jti, str):
        return None
    if token_denylist.denied_outside_database(jti) is not False:
        return None
    return Caller(account_id, jti, claims.get("ts", claims.get("iat", 0)))


def quiet_poll(is_quiet: Callable[..., bool]):
    """A poll's view answers 204 at once when ``is_quiet(caller, **view_args)`` (one statement)
    says the session holds, the caller may read and nothing changed; otherwise the view runs."""

    def decorator(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            if wants_fragment():
                caller = session_caller()
                if caller is not None and is_quiet(caller, *args, **kwargs):
                    return unchanged()
            return view(*args, **kwargs)

        return wrapper

    return decorator
