"""Live updates of an open page (the batch table, the project board): the page holds a version
and asks every few seconds (``static/js/live.js``) what changed since; the answer is
``204 No Content`` while nothing did, otherwise the changed parts and a new version.

A version is the server's clock when the page (or the last answer) was read. "Changed since"
looks ``OVERLAP`` further back: a change stamps its rows before its transaction commits, so
one that committed just after a read still counts (a change whose transaction took longer
than that is seen with the next one, or on a reload). The page skips what it already shows
(a row with the same stamp, the same board).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from flask import Response, make_response

from models.base import utcnow

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
