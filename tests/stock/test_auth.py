"""Stock account area: login, refresh rotation, logout, me, password recovery."""

from __future__ import annotations

import logging
import re
from datetime import timedelta

import pytest
from flask_jwt_extended import create_access_token, create_refresh_token
from sqlalchemy import select

from extensions import db
from models.auth import PasswordResetToken
from models.base import utcnow
from tests.factories import PASSWORD, bearer, login, make_user

LOGIN = "/api/v1/auth/login"
REFRESH = "/api/v1/auth/refresh"
LOGOUT = "/api/v1/auth/logout"
ME = "/api/v1/auth/me"
BASE64URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def test_login_returns_tokens_and_the_user(client, ctx):
    user = make_user(name="Ana Paula Souza", papel="planejador", email="Ana@Giro.test")
    body = login(client, user)
    assert body["tokenType"] == "bearer"
    assert body["accessToken"] and body["refreshToken"]
    assert body["user"] == {
        "id": str(user.id),
        "nome": "Ana Paula Souza",
        "email": "ana@giro.test",
        "papel": "planejador",
        "lojaId": None,
        "iniciais": "AS",
        "emailPendente": None,
    }


def test_login_is_case_insensitive_on_email(client, ctx):
    user = make_user(email="maria@giro.test")
    response = client.post(LOGIN, json={"email": "MARIA@giro.test", "senha": PASSWORD})
    assert response.status_code == 200
    assert response.get_json()["user"]["id"] == str(user.id)


def test_wrong_password_and_unknown_email_answer_alike(client, ctx):
    user = make_user()
    wrong = client.post(LOGIN, json={"email": user.email, "senha": "nope-nope"})
    unknown = client.post(LOGIN, json={"email": "ghost@giro.test", "senha": "nope-nope"})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.get_json() == unknown.get_json() == {"detail": "E-mail ou senha inválidos"}
    assert wrong.headers["WWW-Authenticate"] == "Bearer"


def test_banned_user_cannot_log_in_nor_use_a_live_token(client, ctx):
    user = make_user()
    token = login(client, user)["accessToken"]
    user.banned = True
    db.session.flush()
    assert client.post(LOGIN, json={"email": user.email, "senha": PASSWORD}).status_code == 403
    response = client.get(ME, headers=bearer(token))
    assert response.status_code == 403
    assert response.get_json() == {"detail": "Conta bloqueada"}


@pytest.mark.parametrize(
    ("payload", "loc", "type_"),
    [
        ({"email": "a@b.co"}, ["body", "senha"], "missing"),
        ({"senha": "x"}, ["body", "email"], "missing"),
        ({"email": "not-an-email", "senha": "x"}, ["body", "email"], "value_error.email"),
        ({"email": "a@b.co", "senha": ""}, ["body", "senha"], "string_too_short"),
        ({"email": "a@b.co", "senha": 12}, ["body", "senha"], "string_type"),
        ({"email": "a@b.co", "senha": "x", "remember": "maybe"}, ["body", "remember"], "bool_parsing"),
    ],
)
def test_login_validation_errors_are_fastapi_422s(client, payload, loc, type_):
    response = client.post(LOGIN, json=payload)
    assert response.status_code == 422
    details = response.get_json()["detail"]
    assert {"loc": loc, "type": type_} in [{"loc": d["loc"], "type": d["type"]} for d in details]
    assert all(isinstance(d["msg"], str) and d["msg"] for d in details)


def test_malformed_and_non_object_json_bodies_are_422(client):
    broken = client.post(LOGIN, data="{not json", content_type="application/json")
    assert broken.status_code == 422
    assert broken.get_json()["detail"][0]["loc"] == ["body"]
    assert broken.get_json()["detail"][0]["type"] == "json_invalid"
    array = client.post(LOGIN, json=["email", "senha"])
    assert array.status_code == 422
    assert array.get_json()["detail"][0]["loc"][0] == "body"


def test_me_requires_a_valid_bearer_token(client, ctx):
    user = make_user()
    missing = client.get(ME)
    assert missing.status_code == 401
    assert missing.get_json() == {"detail": "Não autenticado"}
    assert missing.headers["WWW-Authenticate"] == "Bearer"
    assert client.get(ME, headers=bearer("garbage.token.here")).status_code == 401
    assert client.get(ME, headers={"Authorization": "Basic abc"}).status_code == 401
    refresh = login(client, user)["refreshToken"]
    assert client.get(ME, headers=bearer(refresh)).status_code == 401, (
        "a refresh token is not an access token"
    )


def test_a_token_is_read_only_in_base64url_with_its_padding_rules(client, ctx):
    token = login(client, make_user())["accessToken"]
    signature = token.rsplit(".", 1)[1]
    assert len(signature) % 4 == 3, "an HS256 signature: 43 characters"
    # Padding some issuers add is accepted where it completes the segment to a multiple of four.
    assert client.get(ME, headers=bearer(token + "=")).status_code == 200
    for altered in (
        token + "==",  # padding beyond a multiple of four
        # Outside the alphabet, where a lenient base64 decoder would skip it and still find the
        # signature's bytes.
        token[: -len(signature)] + signature[:20] + "!!!!" + signature[20:],
        token.replace("-", "+").replace("_", "/") if ("-" in token or "_" in token) else token + "+",
        token[:-2],  # a length that leaves one character over (41 % 4 == 1)
        # In the alphabet, but not the signature: the last character's four meaningful bits differ.
        token[:-1] + ("A" if token[-1] != "A" else "E"),
        # The same signature bytes spelt otherwise: only the two unused bits of the last character
        # differ, which a lenient decoder ignores.
        token[:-1] + BASE64URL_ALPHABET[BASE64URL_ALPHABET.index(token[-1]) + 1],
    ):
        response = client.get(ME, headers=bearer(altered))
        assert response.status_code == 401, altered
        assert response.get_json() == {"detail": "Não autenticado"}, altered


def test_expired_access_token_says_so(client, ctx):
    user = make_user()
    expired = create_access_token(identity=str(user.id), expires_delta=timedelta(seconds=-5))
    response = client.get(ME, headers=bearer(expired))
    assert response.status_code == 401
    assert response.get_json() == {"detail": "Token expirado"}


def test_refresh_rotates_and_reuse_revokes_the_family(client, ctx):
    user = make_user()
    first = login(client, user)["refreshToken"]

    rotated = client.post(REFRESH, json={"refreshToken": first})
    assert rotated.status_code == 200
    body = rotated.get_json()
    assert body["tokenType"] == "bearer"
    assert client.get(ME, headers=bearer(body["accessToken"])).status_code == 200
    second = body["refreshToken"]
    assert second != first

    # The presented token died; presenting it again revokes the whole family,
    # including the token that replaced it.
    reuse = client.post(REFRESH, json={"refreshToken": first})
    assert reuse.status_code == 401
    assert client.post(REFRESH, json={"refreshToken": second}).status_code == 401


def test_refresh_rejects_garbage_access_and_expired_tokens(client, ctx):
    user = make_user()
    access = login(client, user)["accessToken"]
    assert client.post(REFRESH, json={"refreshToken": "garbage"}).status_code == 401
    assert client.post(REFRESH, json={"refreshToken": access}).status_code == 401
    expired = create_refresh_token(identity=str(user.id), expires_delta=timedelta(seconds=-5))
    response = client.post(REFRESH, json={"refreshToken": expired})
    assert response.status_code == 401
    assert response.get_json() == {"detail": "Token expirado"}
    assert client.post(REFRESH, json={}).status_code == 422


def test_remember_false_gives_a_one_day_refresh_token(client, ctx, app):
    from flask_jwt_extended import decode_token

    user = make_user()
    long_lived = decode_token(login(client, user, remember=True)["refreshToken"])
    short_lived = decode_token(login(client, user, remember=False)["refreshToken"])
    assert long_lived["exp"] - long_lived["iat"] == 7 * 24 * 3600
    assert short_lived["exp"] - short_lived["iat"] == 24 * 3600


def test_logout_revokes_the_refresh_token(client, ctx):
    user = make_user()
    refresh = login(client, user)["refreshToken"]
    response = client.post(LOGOUT, json={"refreshToken": refresh})
    assert response.status_code == 204
    assert response.data == b""
    assert client.post(REFRESH, json={"refreshToken": refresh}).status_code == 401
    # Logging out with a dead or unknown token is still a successful logout.
    assert client.post(LOGOUT, json={"refreshToken": refresh}).status_code == 204
    assert client.post(LOGOUT, json={"refreshToken": "garbage"}).status_code == 204
    assert client.post(LOGOUT, json={}).status_code == 422


def _reset_token_from_log(caplog) -> str:
    for record in caplog.records:
        match = re.search(r"reset-password\?token=([\w-]+)", record.getMessage())
        if match:
            return match.group(1)
    raise AssertionError("no reset link was mailed")


def test_forgot_password_answers_alike_and_mails_a_link(client, ctx, caplog):
    user = make_user()
    caplog.set_level(logging.INFO, logger="giro.mail")
    known = client.post("/api/v1/auth/password/forgot", json={"email": user.email})
    unknown = client.post("/api/v1/auth/password/forgot", json={"email": "ghost@giro.test"})
    assert known.status_code == unknown.status_code == 200
    assert known.get_json() == unknown.get_json()
    assert "message" in known.get_json()
    assert _reset_token_from_log(caplog)
    assert sum("reset-password?token=" in r.getMessage() for r in caplog.records) == 1
    assert client.post("/api/v1/auth/password/forgot", json={"email": "nope"}).status_code == 422


def test_reset_password_is_single_use_and_ends_sessions(client, ctx, caplog):
    user = make_user()
    old_session = login(client, user)
    caplog.set_level(logging.INFO, logger="giro.mail")
    client.post("/api/v1/auth/password/forgot", json={"email": user.email})
    token = _reset_token_from_log(caplog)

    short = client.post("/api/v1/auth/password/reset", json={"token": token, "senha": "curta"})
    assert short.status_code == 422
    assert short.get_json()["detail"][0]["loc"] == ["body", "senha"]

    done = client.post("/api/v1/auth/password/reset", json={"token": token, "senha": "nova-senha-segura"})
    assert done.status_code == 200
    assert client.post(LOGIN, json={"email": user.email, "senha": PASSWORD}).status_code == 401
    new_session = client.post(LOGIN, json={"email": user.email, "senha": "nova-senha-segura"})
    assert new_session.status_code == 200

    # Every earlier session is over: refresh token revoked, access token refused; a token
    # issued after the reset is honoured (the reset's instant compared as UTC on both databases).
    assert client.post(REFRESH, json={"refreshToken": old_session["refreshToken"]}).status_code == 401
    assert client.get(ME, headers=bearer(old_session["accessToken"])).status_code == 401
    assert client.get(ME, headers=bearer(new_session.get_json()["accessToken"])).status_code == 200

    again = client.post("/api/v1/auth/password/reset", json={"token": token, "senha": "outra-senha-123"})
    assert again.status_code == 400
    assert "detail" in again.get_json()


def test_reset_token_expires_after_an_hour(client, ctx, caplog):
    user = make_user()
    caplog.set_level(logging.INFO, logger="giro.mail")
    client.post("/api/v1/auth/password/forgot", json={"email": user.email})
    token = _reset_token_from_log(caplog)
    record = db.session.scalar(select(PasswordResetToken).where(PasswordResetToken.user_id == user.id))
    record.expires_at = utcnow() - timedelta(seconds=1)
    db.session.flush()
    response = client.post("/api/v1/auth/password/reset", json={"token": token, "senha": "nova-senha-segura"})
    assert response.status_code == 400
    assert (
        client.post(
            "/api/v1/auth/password/reset", json={"token": "made-up", "senha": "nova-senha-segura"}
        ).status_code
        == 400
    )


def test_one_identity_tokens_work_on_both_services(client, ctx):
    user = make_user()
    token = login(client, user)["accessToken"]
    assert client.get(ME, headers=bearer(token)).get_json()["email"] == user.email


def test_repeated_failed_logins_are_throttled(client, ctx, app):
    user = make_user()
    limit = int(app.config["LOGIN_RATE_LIMIT"].split()[0])
    for _ in range(limit):
        assert client.post(LOGIN, json={"email": user.email, "senha": "wrong-guess"}).status_code == 401
    blocked = client.post(LOGIN, json={"email": user.email, "senha": PASSWORD})
    assert blocked.status_code == 429
    assert "detail" in blocked.get_json()
    assert int(blocked.headers["Retry-After"]) > 0
    # Another account from the same address is not locked out by someone else's guesses.
    other = make_user()
    assert client.post(LOGIN, json={"email": other.email, "senha": PASSWORD}).status_code == 200


def test_successful_logins_are_never_throttled(client, ctx, app):
    user = make_user()
    limit = int(app.config["LOGIN_RATE_LIMIT"].split()[0])
    for _ in range(limit + 2):
        assert client.post(LOGIN, json={"email": user.email, "senha": PASSWORD}).status_code == 200
