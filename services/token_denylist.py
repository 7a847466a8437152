"""Access tokens ended before their expiry (logout), until they would have expired.

With ``REDIS_URL`` the entries live in Redis (one key per token, expiring with
it), shared by every worker and host; without it, in the database table
``revoked_access_tokens``. Either way every worker refuses the token at once.

Redis down: entries go to (and are looked up in) the database table meanwhile, so a
logout during the outage still ends its tokens and requests keep being answered;
entries written to Redis before the outage are out of sight until it answers again.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime
from functools import cache

import redis
from flask import current_app
from sqlalchemy import bindparam, delete, select
from sqlalchemy.orm import lazyload
from sqlalchemy.orm.util import identity_key

from extensions import db
from models.auth import RevokedAccessToken, User
from models.base import utcnow
from services.rows import DriverRead, loaded_instance

_PREFIX = "giro:revoked-access:"
log = logging.getLogger("giro.auth")


@cache
def _redis(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


def _client() -> redis.Redis | None:
    url = current_app.config.get("REDIS_URL")
    return _redis(url) if url else None


def deny(jti: str, expires_at: datetime) -> None:
    ttl = int((expires_at - utcnow()).total_seconds()) + 1
    if ttl <= 0:
        return
    client = _client()
    if client is not None:
        try:
            client.set(_PREFIX + jti, b"1", ex=ttl)
            return
        except redis.RedisError as exc:
            log.warning("Redis unreachable (%s): logout recorded in the database", exc)
    if db.session.get(RevokedAccessToken, jti) is None:
        db.session.add(RevokedAccessToken(jti=jti, expires_at=expires_at))
    # Entries past their token's expiry protect nothing: drop them as new ones arrive.
    db.session.execute(delete(RevokedAccessToken).where(RevokedAccessToken.expires_at <= utcnow()))
    db.session.flush()


# The account's columns and whether the token is denied, in one statement run on the driver's
# cursor (``services.rows.DriverRead``): on every authenticated request, the ORM's query and
# loading machinery cost more than the statement. The account's store (``User.loja``, joined by
# default) loads when a view reads it: the API's views read ``loja_id``.
_ACCOUNT_COLUMNS = tuple(prop.key for prop in User.__mapper__.column_attrs)
_ACCOUNT_AND_DENIAL = DriverRead(
    select(
        *(getattr(User, key) for key in _ACCOUNT_COLUMNS),
        select(RevokedAccessToken.jti).where(RevokedAccessToken.jti == bindparam("jti")).exists(),
    ).where(User.id == bindparam("account_id"))
)
# The same for an account the session already holds, which the ORM refreshes as it loads it.
_LOADED_ACCOUNT_AND_DENIAL = (
    select(User, select(RevokedAccessToken.jti).where(RevokedAccessToken.jti == bindparam("jti")).exists())
    .where(User.id == bindparam("account_id"))
    .options(lazyload(User.loja))
)


def is_denied(jti: str) -> bool:
    return denial_and_account(jti, None)[0]


def denied_outside_database(jti: str) -> bool | None:
    """Whether Redis holds a logout of ``jti``: False without Redis (the database's deny list is
    then read with the account, ``live_polls``), None when Redis does not answer (the caller
    then goes the full way, which reads the database meanwhile)."""
    client = _client()
    if client is None:
        return False
    try:
        return bool(client.exists(_PREFIX + jti))
    except redis.RedisError:
        return None


def denial_and_account(jti: str, account_id: uuid.UUID | None) -> tuple[bool, User | None]:
    """Whether a logout ended the access token ``jti``, and the account ``account_id`` (the
    token's subject; None when not asked for or missing). With the deny-list in the database
    both come from one statement."""
    client = _client()
    if client is None and account_id is not None:
        params = {"jti": jti, "account_id": account_id}
        if db.session.identity_map.get(identity_key(User, account_id)) is not None:
            row = db.session.execute(_LOADED_ACCOUNT_AND_DENIAL, params).first()
            if row is not None:
                return bool(row[1]), row[0]
        else:
            values = _ACCOUNT_AND_DENIAL.first(params)
            if values is not None:
                account = loaded_instance(User, dict(zip(_ACCOUNT_COLUMNS, values, strict=False)))
                return bool(values[-1]), account
    elif client is not None:
        try:
            return bool(client.exists(_PREFIX + jti)), None
        except redis.RedisError as exc:
            log.warning("Redis unreachable (%s): deny-list read from the database", exc)
    found = db.session.scalar(select(RevokedAccessToken.jti).where(RevokedAccessToken.jti == jti))
    return found is not None, None
