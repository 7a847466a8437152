"""Accounts: register, login, refresh rotation and reuse, me, one identity with the stock service."""

from __future__ import annotations

from datetime import timedelta

from flask_jwt_extended import create_access_token, create_refresh_token

from tests.conftest import SUPERADMIN_EMAIL
from tests.factories import PASSWORD as STOCK_PASSWORD
from tests.factories import captured_mail, link_token, make_user
from tests.tracker.support import API, PASSWORD, assert_error, register, superadmin


def test_register_creates_user_organization_and_workspace(client):
    response = client.post(
        f"{API}/auth/register", json={"name": "Ana Souza", "email": "Ana@Loja.test", "password": PASSWORD}
    )
    assert response.status_code == 201
    body = response.get_json()
    assert set(body["user"]) >= {"id", "name", "email", "created_at"}
    assert body["user"]["email"] == "ana@loja.test"
    assert body["user"]["created_at"].endswith("+00:00")
    headers = {"Authorization": f"Bearer {body['access_token']}"}

    me = client.get(f"{API}/auth/me", headers=headers).get_json()
    assert me["id"] == body["user"]["id"]
    assert me["avatar_url"] is None
    assert me["superadmin"] is False
    assert [(o["name"], o["role"]) for o in me["organizations"]] == [("Ana Souza", "owner")]

    workspaces = client.get(f"{API}/workspaces", headers=headers).get_json()["workspaces"]
    assert len(workspaces) == 1
    assert workspaces[0]["organization_id"] == me["organizations"][0]["id"]
    assert workspaces[0]["slug"] == "ana-souza"


def test_registrations_with_the_same_name_get_unique_slugs(client):
    first = register(client, name="João Silva")
    second = register(client, name="João Silva")
    assert first.slug == "joao-silva"
    assert second.slug != first.slug and second.slug.startswith("joao-silva")


def test_register_refuses_bad_fields_with_details(client):
    response = client.post(f"{API}/auth/register", json={"name": "", "email": "nope", "password": "short"})
    body = assert_error(response, 400, "VALIDATION_ERROR")
    assert {d["field"] for d in body["details"]} == {"name", "email", "password"}

    response = client.post(f"{API}/auth/register", json={"email": "a@b.test", "password": PASSWORD})
    assert [d["field"] for d in assert_error(response, 400, "VALIDATION_ERROR")["details"]] == ["name"]

    response = client.post(
        f"{API}/auth/register", json={"name": "A", "email": "a@b.test", "password": PASSWORD, "role": "owner"}
    )
    assert assert_error(response, 400, "VALIDATION_ERROR")["details"][0]["field"] == "role"

    response = client.post(f"{API}/auth/register", data="not json", content_type="application/json")
    assert_error(response, 400, "VALIDATION_ERROR")


def test_register_answers_alike_for_a_known_and_an_unknown_address(client):
    owner = register(client, email="dup@tracker.test")
    with captured_mail() as outbox:
        known = client.post(
            f"{API}/auth/register",
            json={"name": "Other", "email": "DUP@tracker.test", "password": "other-pass-9"},
        )
        unknown = client.post(
            f"{API}/auth/register",
            json={"name": "Other", "email": "new@tracker.test", "password": "other-pass-9"},
        )
    assert known.status_code == unknown.status_code == 201
    assert set(known.get_json()) == set(unknown.get_json())
    assert set(known.get_json()["user"]) == set(unknown.get_json()["user"])
    assert known.get_json()["user"]["email"] == "dup@tracker.test"
    # The owner hears of it; the newcomer gets no link for an address someone proved.
    assert [(m["To"], "token=" in m.get_content()) for m in outbox] == [
        ("dup@tracker.test", False),
        ("new@tracker.test", True),
    ]
    # The address still signs in to its owner, and only with the owner's password.
    login = client.post(f"{API}/auth/login", json={"email": "dup@tracker.test", "password": PASSWORD})
    assert login.get_json()["user"]["id"] == owner.user_id
    intruder = client.post(
        f"{API}/auth/login", json={"email": "dup@tracker.test", "password": "other-pass-9"}
    )
    assert_error(intruder, 401, "INVALID_CREDENTIALS")


def test_login_returns_the_user_and_a_token_pair(client):
    tenant = register(client, email="login@tracker.test")
    response = client.post(f"{API}/auth/login", json={"email": "login@tracker.test", "password": PASSWORD})
    assert response.status_code == 200
    body = response.get_json()
    assert body["user"] == {"id": tenant.user_id, "name": body["user"]["name"], "email": "login@tracker.test"}
    me = client.get(f"{API}/auth/me", headers={"Authorization": f"Bearer {body['access_token']}"})
    assert me.status_code == 200


def test_login_does_not_say_which_part_was_wrong(client):
    register(client, email="known@tracker.test")
    wrong_password = client.post(
        f"{API}/auth/login", json={"email": "known@tracker.test", "password": "x" * 9}
    )
    unknown_email = client.post(
        f"{API}/auth/login", json={"email": "ghost@tracker.test", "password": PASSWORD}
    )
    first = assert_error(wrong_password, 401, "INVALID_CREDENTIALS")
    second = assert_error(unknown_email, 401, "INVALID_CREDENTIALS")
    assert first["message"] == second["message"]


def test_repeated_failed_logins_are_rate_limited(client, app):
    register(client, email="guessed@tracker.test")
    limit = int(app.config["LOGIN_RATE_LIMIT"].split()[0])
    for _ in range(limit):
        wrong = client.post(f"{API}/auth/login", json={"email": "guessed@tracker.test", "password": "x" * 9})
        assert wrong.status_code == 401
    blocked = client.post(f"{API}/auth/login", json={"email": "guessed@tracker.test", "password": PASSWORD})
    assert_error(blocked, 429, "RATE_LIMITED")
    assert int(blocked.headers["Retry-After"]) > 0


def test_login_with_invalid_fields_is_a_validation_error(client):
    body = assert_error(
        client.post(f"{API}/auth/login", json={"email": "not-an-email"}), 400, "VALIDATION_ERROR"
    )
    assert {d["field"] for d in body["details"]} == {"email", "password"}


def test_refresh_rotates_and_reuse_revokes_the_family(client):
    tenant = register(client)
    first = client.post(f"{API}/auth/refresh", json={"refresh_token": tenant.refresh_token})
    assert first.status_code == 200
    pair = first.get_json()
    assert pair["refresh_token"] != tenant.refresh_token
    assert (
        client.get(f"{API}/auth/me", headers={"Authorization": f"Bearer {pair['access_token']}"}).status_code
        == 200
    )

    # The presented token died; presenting it again is reuse.
    reused = client.post(f"{API}/auth/refresh", json={"refresh_token": tenant.refresh_token})
    assert_error(reused, 401, "INVALID_TOKEN")
    # ...and the whole family went with it, including the token issued by the rotation.
    after = client.post(f"{API}/auth/refresh", json={"refresh_token": pair["refresh_token"]})
    assert_error(after, 401, "INVALID_TOKEN")


def test_refresh_with_garbage_or_an_access_token_is_invalid(client):
    tenant = register(client)
    assert_error(client.post(f"{API}/auth/refresh", json={"refresh_token": "abc.def"}), 401, "INVALID_TOKEN")
    access = client.post(f"{API}/auth/refresh", json={"refresh_token": tenant.access_token})
    assert_error(access, 401, "INVALID_TOKEN")
    assert_error(client.post(f"{API}/auth/refresh", json={}), 400, "VALIDATION_ERROR")


def test_expired_tokens_say_token_expired(client, app):
    tenant = register(client)
    with app.app_context():
        expired_access = create_access_token(identity=tenant.user_id, expires_delta=timedelta(seconds=-5))
        expired_refresh = create_refresh_token(identity=tenant.user_id, expires_delta=timedelta(seconds=-5))
    response = client.get(f"{API}/auth/me", headers={"Authorization": f"Bearer {expired_access}"})
    assert_error(response, 401, "TOKEN_EXPIRED")
    response = client.post(f"{API}/auth/refresh", json={"refresh_token": expired_refresh})
    assert_error(response, 401, "TOKEN_EXPIRED")


def test_token_lifetimes_are_24_hours_and_7_days(client, app):
    tenant = register(client)
    with app.app_context():
        from flask_jwt_extended import decode_token

        access = decode_token(tenant.access_token)
        refresh = decode_token(tenant.refresh_token)
    assert access["exp"] - access["iat"] == 24 * 3600
    assert refresh["exp"] - refresh["iat"] == 7 * 24 * 3600


def test_me_needs_a_valid_bearer_token(client):
    assert_error(client.get(f"{API}/auth/me"), 401, "UNAUTHORIZED")
    assert_error(client.get(f"{API}/auth/me", headers={"Authorization": "Bearer nope"}), 401, "UNAUTHORIZED")


def test_superadmin_email_makes_a_superadmin_once_the_address_is_proven(client):
    with captured_mail() as outbox:
        claimed = register(client, name="Root", email=SUPERADMIN_EMAIL, verify=False)
    assert client.get(f"{API}/auth/me", headers=claimed.headers).get_json()["superadmin"] is False
    assert_error(client.get(f"{API}/admin/users", headers=claimed.headers), 403, "FORBIDDEN")

    assert client.post(f"{API}/auth/verify-email", json={"token": link_token(outbox[-1])}).status_code == 204
    me = client.get(f"{API}/auth/me", headers=claimed.headers).get_json()
    assert me["superadmin"] is True and me["email_verified"] is True
    assert client.get(f"{API}/admin/stats", headers=claimed.headers).status_code == 200


def test_the_superadmin_address_cannot_be_taken_once_proven(client):
    superadmin(client)
    with captured_mail() as outbox:
        late = register(client, name="Late", email=SUPERADMIN_EMAIL, verify=False)
    # No link is sent for an address someone proved, and nothing grants it.
    assert all("token=" not in m.get_content() for m in outbox)
    assert client.get(f"{API}/auth/me", headers=late.headers).get_json()["superadmin"] is False
    assert_error(client.get(f"{API}/admin/stats", headers=late.headers), 403, "FORBIDDEN")


def test_an_account_of_the_stock_service_signs_in_here(client, ctx):
    user = make_user(email="planner@giro.test", name="Planner")
    response = client.post(
        f"{API}/auth/login", json={"email": "planner@giro.test", "password": STOCK_PASSWORD}
    )
    assert response.status_code == 200
    assert response.get_json()["user"]["id"] == str(user.id)
    # A token issued here is accepted by the stock service too.
    token = response.get_json()["access_token"]
    assert client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {token}"}).status_code == 200


def test_an_account_registered_here_has_no_stock_access(client):
    tenant = register(client, email="both@tracker.test")
    response = client.post("/api/v1/auth/login", json={"email": "both@tracker.test", "senha": PASSWORD})
    assert response.status_code == 403
    assert "acesso ao remanejamento" in response.get_json()["detail"]
    # Same person, same password: the stock login also knows the wrong one.
    wrong = client.post("/api/v1/auth/login", json={"email": "both@tracker.test", "senha": "wrong-password"})
    assert wrong.status_code == 401
    # Its tracker token reaches nothing of the stock service either.
    for path in ("/api/v1/auth/me", "/api/v1/lojas", "/api/v1/remanejamento/lotes"):
        denied = client.get(path, headers=tenant.headers)
        assert denied.status_code == 403, path
        assert "acesso ao remanejamento" in denied.get_json()["detail"]
