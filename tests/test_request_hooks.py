"""What every request pays for: the token check's statements, the rate limiter's reach."""

from __future__ import annotations

import contextlib

import pytest
from sqlalchemy import event

from extensions import db
from tests.factories import PASSWORD, bearer, login, make_user

STOCK = "/api/v1"
TRACKER = "/tracker/api/v1"


@contextlib.contextmanager
def statements():
    seen: list[str] = []

    def record(_conn, _cursor, statement, *_args):
        seen.append(statement)

    event.listen(db.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", record)


@pytest.mark.parametrize("path", [f"{STOCK}/auth/me", f"{TRACKER}/auth/me"])
def test_a_bearer_token_is_checked_with_one_statement_for_the_account_and_the_deny_list(client, ctx, path):
    user = make_user(email="una@giro.test")
    db.session.commit()
    token = login(client, user)["accessToken"]
    with statements() as seen:
        assert client.get(path, headers=bearer(token)).status_code == 200
    reads = [s for s in seen if "users" in s or "revoked_access_tokens" in s]
    assert len(reads) == 1, reads
    assert "revoked_access_tokens" in reads[0] and "users" in reads[0]


def test_the_one_statement_still_refuses_a_logged_out_token_and_an_ended_session(client, ctx):
    user = make_user(email="duo@giro.test")
    db.session.commit()
    tokens = login(client, user)
    assert (
        client.post(f"{STOCK}/auth/logout", json={"refreshToken": tokens["refreshToken"]}).status_code == 204
    )
    refused = client.get(f"{TRACKER}/auth/me", headers=bearer(tokens["accessToken"]))
    assert refused.status_code == 401 and refused.get_json()["message"] == "Token revoked"

    other = login(client, user)["accessToken"]
    user.banned = True
    db.session.commit()
    banned = client.get(f"{TRACKER}/auth/me", headers=bearer(other))
    assert banned.status_code == 403 and banned.get_json()["error"] == "USER_BANNED"


def test_rate_limit_headers_come_with_the_throttled_views_only(client, ctx):
    user = make_user(email="tres@giro.test")
    db.session.commit()
    failed = client.post(f"{STOCK}/auth/login", json={"email": user.email, "senha": PASSWORD + "x"})
    assert failed.status_code == 401 and "X-RateLimit-Limit" in failed.headers
    token = login(client, user)["accessToken"]
    for answer in (client.get("/health"), client.get(f"{STOCK}/auth/me", headers=bearer(token))):
        assert answer.status_code == 200
        assert not [name for name, _ in answer.headers if name.lower().startswith("x-ratelimit")]
