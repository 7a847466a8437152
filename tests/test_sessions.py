"""Sessions end when the person ends them, and failed sign-ins share one budget."""

from __future__ import annotations

import os

import pytest
import redis

from tests.factories import PASSWORD, bearer, login, make_user

STOCK = "/api/v1"
TRACKER = "/tracker/api/v1"


def _me(client, token) -> int:
    return client.get(f"{STOCK}/auth/me", headers=bearer(token)).status_code


def _logout_ends_every_token_of_the_login(client):
    user = make_user(email="ana@giro.test")
    first = login(client, user)
    rotated = client.post(f"{STOCK}/auth/refresh", json={"refreshToken": first["refreshToken"]}).get_json()
    other_device = login(client, user)
    assert _me(client, first["accessToken"]) == _me(client, rotated["accessToken"]) == 200

    # Logout needs no credential: the refresh token names the login to end.
    assert (
        client.post(f"{STOCK}/auth/logout", json={"refreshToken": rotated["refreshToken"]}).status_code == 204
    )
    assert _me(client, first["accessToken"]) == _me(client, rotated["accessToken"]) == 401
    assert client.get(f"{TRACKER}/auth/me", headers=bearer(rotated["accessToken"])).status_code == 401
    # Another login of the same person is another session.
    assert _me(client, other_device["accessToken"]) == 200


def test_api_logout_ends_the_access_tokens_of_that_login(client, ctx):
    _logout_ends_every_token_of_the_login(client)


@pytest.fixture
def redis_denylist(app, monkeypatch):
    url = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except redis.RedisError:
        if os.environ.get("CI"):
            pytest.fail(f"no Redis at {url}: CI runs on a machine with Redis")
        pytest.skip(f"no Redis at {url} (a laptop without Redis; the database deny-list is tested above)")
    monkeypatch.setitem(app.config, "REDIS_URL", url)
    yield redis.Redis.from_url(url)


def test_with_redis_the_deny_list_lives_there(client, ctx, redis_denylist):
    before = set(redis_denylist.scan_iter("giro:revoked-access:*"))
    _logout_ends_every_token_of_the_login(client)
    added = set(redis_denylist.scan_iter("giro:revoked-access:*")) - before
    assert len(added) == 2
    assert all(0 < redis_denylist.ttl(key) <= 24 * 3600 + 1 for key in added)
    redis_denylist.delete(*added)


def test_tracker_logout_ends_the_token_it_is_sent_with(client, ctx):
    user = make_user(email="bia@giro.test")
    body = client.post(f"{TRACKER}/auth/login", json={"email": user.email, "password": PASSWORD}).get_json()
    headers = bearer(body["access_token"])
    assert client.get(f"{TRACKER}/auth/me", headers=headers).status_code == 200
    response = client.post(f"{TRACKER}/auth/logout", json={"refresh_token": "not-a-token"}, headers=headers)
    assert response.status_code == 204
    assert client.get(f"{TRACKER}/auth/me", headers=headers).status_code == 401
    refresh = client.post(f"{TRACKER}/auth/refresh", json={"refresh_token": body["refresh_token"]})
    assert refresh.status_code == 200, "a bare access token logout leaves other tokens alone"


def test_page_logout_ends_the_cookie_even_if_a_copy_survives(app, client, ctx):
    user = make_user(email="carla@giro.test")
    client.post("/login", data={"email": user.email, "senha": PASSWORD})
    stolen = client.get_cookie("access_token_cookie").value
    csrf = client.get_cookie("csrf_access_token").value
    assert client.get("/lotes").status_code == 200
    assert client.post("/logout", data={"csrf_token": csrf}).status_code == 302

    thief = app.test_client()
    thief.set_cookie("access_token_cookie", stolen)
    assert thief.get("/lotes").status_code == 302
    assert _me(thief, stolen) == 401


def test_one_failed_sign_in_budget_across_both_apis_and_the_login_page(client, ctx):
    user = make_user(email="dora@giro.test")
    wrong = "not-the-password"
    for _ in range(4):
        assert (
            client.post(f"{STOCK}/auth/login", json={"email": user.email, "senha": wrong}).status_code == 401
        )
    for _ in range(3):
        response = client.post(f"{TRACKER}/auth/login", json={"email": user.email, "password": wrong})
        assert response.status_code == 401
    for _ in range(3):
        assert client.post("/login", data={"email": user.email, "senha": wrong}).status_code == 401
    # Ten failures in all: every door is closed now, even to the right password.
    assert (
        client.post(f"{STOCK}/auth/login", json={"email": user.email, "senha": PASSWORD}).status_code == 429
    )
    assert (
        client.post(f"{TRACKER}/auth/login", json={"email": user.email, "password": PASSWORD}).status_code
        == 429
    )
    assert client.post("/login", data={"email": user.email, "senha": PASSWORD}).status_code == 429
