"""The session's checks, as columns of a live poll's one statement.

An open page asks every few seconds whether anything changed (``blueprints.pages.live``), and
nearly every answer is "nothing" (204). Such a poll reads, in one statement, the account its
session token names, the token's logout, the polled resource with the caller's right to read
it, and whether it changed (``recommendations.batch_quiet``, ``issue_board.board_quiet``).
The account part is here: the same checks as ``app.load_user`` and the database deny list,
read as columns instead of loading the account. A poll whose statement says anything but
"a sound session, allowed, nothing changed" goes the full way (the view as any request).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import String, bindparam, exists

from models.auth import RevokedAccessToken, User

_USERS = User.__table__
ACCOUNT_ID = bindparam("account_id", type_=_USERS.c.id.type)
_JTI = bindparam("jti", type_=String(64))


@dataclass(frozen=True, slots=True)
class Caller:
    """Who polls, as their session token says (its signature and expiry already checked)."""

    account_id: uuid.UUID
    jti: str
    issued: float  # when the session began: the token's ``ts``, else its ``iat``

    def params(self) -> dict[str, Any]:
        return {"account_id": self.account_id, "jti": self.jti}


def account_columns() -> tuple:
    """The account's standing, for a statement ``FROM users WHERE users.id = :account_id``:
    banned, sessions ended after, and the token's logout in the database's deny list."""
    denied = exists().where(RevokedAccessToken.__table__.c.jti == _JTI)
    return _USERS.c.banned, _USERS.c.sessions_valid_after, denied.label("denied")


def session_holds(caller: Caller, banned: bool, valid_after: datetime | None, denied: bool) -> bool:
    """What ``app.load_user`` and the deny list accept: an account not banned, whose sessions
    were not ended after this one began, and a token no logout ended."""
    if banned or denied:
        return False
    return not (valid_after and caller.issued < valid_after.timestamp())
