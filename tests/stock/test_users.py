"""Profile (PATCH /users/me) and notification preferences."""

from __future__ import annotations

import uuid

from tests.factories import PASSWORD, auth_headers, captured_mail, link_token, make_loja, make_user

ME = "/api/v1/users/me"
LOGIN = "/api/v1/auth/login"
VERIFY = "/tracker/api/v1/auth/verify-email"
PREFS = "/api/v1/users/me/preferences"


def test_a_new_email_takes_effect_when_its_link_is_followed(client, ctx):
    user = make_user(name="Beatriz Lima", email="beatriz@giro.test")
    headers = auth_headers(client, user)
    with captured_mail() as outbox:
        response = client.patch(
            ME,
            json={"nome": "Beatriz Lima Costa", "email": "Bia@Giro.test", "senhaAtual": PASSWORD},
            headers=headers,
        )
    assert response.status_code == 200
    body = response.get_json()
    assert body["nome"] == "Beatriz Lima Costa"
    assert body["iniciais"] == "BC"
    # Until the link sent to the new address is followed, the account keeps the old one.
    assert (body["email"], body["emailPendente"]) == ("beatriz@giro.test", "bia@giro.test")
    link = next(m for m in outbox if m["To"] == "bia@giro.test")
    assert any(m["To"] == "beatriz@giro.test" for m in outbox), "the old address is told"
    assert client.post(LOGIN, json={"email": "bia@giro.test", "senha": PASSWORD}).status_code == 401

    assert client.post(VERIFY, json={"token": link_token(link)}).status_code == 204
    me = client.get("/api/v1/auth/me", headers=headers).get_json()
    assert (me["email"], me["emailPendente"]) == ("bia@giro.test", None)
    assert client.post(LOGIN, json={"email": "bia@giro.test", "senha": PASSWORD}).status_code == 200
    # The link is single use.
    assert client.post(VERIFY, json={"token": link_token(link)}).status_code == 400


def test_changing_email_needs_the_current_password(client, ctx):
    user = make_user(email="carla@giro.test")
    headers = auth_headers(client, user)
    with captured_mail() as outbox:
        missing = client.patch(ME, json={"email": "outra@giro.test"}, headers=headers)
        wrong = client.patch(
            ME, json={"email": "outra@giro.test", "senhaAtual": "not-it-123"}, headers=headers
        )
    for response in (missing, wrong):
        assert response.status_code == 403
        assert "senha atual" in response.get_json()["detail"].lower()
    assert outbox == []
    assert client.get("/api/v1/auth/me", headers=headers).get_json()["emailPendente"] is None


def test_null_or_absent_fields_change_nothing(client, ctx):
    user = make_user(name="Carlos Dias", papel="planejador")
    headers = auth_headers(client, user)
    response = client.patch(
        ME, json={"nome": None, "email": None, "papel": None, "lojaId": None}, headers=headers
    )
    assert response.status_code == 200
    assert response.get_json()["nome"] == "Carlos Dias"
    assert response.get_json()["papel"] == "planejador"


def test_email_of_another_account_is_refused_only_to_whoever_opens_the_link(client, ctx):
    make_user(email="taken@giro.test")
    user = make_user(email="mine@giro.test")
    headers = auth_headers(client, user)
    with captured_mail() as outbox:
        response = client.patch(
            ME, json={"email": "taken@giro.test", "senhaAtual": PASSWORD}, headers=headers
        )
    # The answer does not tell whether the address has an account.
    assert response.status_code == 200
    link = next(m for m in outbox if m["To"] == "taken@giro.test")
    followed = client.post(VERIFY, json={"token": link_token(link)})
    assert followed.status_code == 409
    assert client.get("/api/v1/auth/me", headers=headers).get_json()["email"] == "mine@giro.test"


def test_nobody_raises_their_own_papel(client, ctx):
    user = make_user(papel="visualizador")
    headers = auth_headers(client, user)
    for papel in ("gerente_loja", "planejador", "admin"):
        response = client.patch(ME, json={"papel": papel}, headers=headers)
        assert response.status_code == 403
    assert client.get("/api/v1/auth/me", headers=headers).get_json()["papel"] == "visualizador"


def test_lowering_your_own_papel_is_allowed(client, ctx):
    user = make_user(papel="planejador")
    response = client.patch(ME, json={"papel": "visualizador"}, headers=auth_headers(client, user))
    assert response.status_code == 200
    assert response.get_json()["papel"] == "visualizador"


def test_only_an_admin_moves_their_own_store(client, ctx):
    loja_a, loja_b = make_loja(), make_loja()
    manager = make_user(papel="gerente_loja", loja=loja_a)
    response = client.patch(ME, json={"lojaId": str(loja_b.id)}, headers=auth_headers(client, manager))
    assert response.status_code == 403

    admin = make_user(papel="admin")
    headers = auth_headers(client, admin)
    moved = client.patch(ME, json={"lojaId": str(loja_b.id)}, headers=headers)
    assert moved.status_code == 200
    assert moved.get_json()["lojaId"] == str(loja_b.id)
    unknown = client.patch(ME, json={"lojaId": str(uuid.uuid4())}, headers=headers)
    assert unknown.status_code == 422
    assert unknown.get_json()["detail"][0]["loc"] == ["body", "lojaId"]


def test_profile_validation(client, ctx):
    headers = auth_headers(client, make_user())
    cases = [
        ({"nome": ""}, ["body", "nome"]),
        ({"email": "nope"}, ["body", "email"]),
        ({"papel": "rei"}, ["body", "papel"]),
        ({"lojaId": "not-a-uuid"}, ["body", "lojaId"]),
    ]
    for payload, loc in cases:
        response = client.patch(ME, json=payload, headers=headers)
        assert response.status_code == 422, payload
        assert response.get_json()["detail"][0]["loc"] == loc
    assert client.patch(ME, json={"nome": "x"}).status_code == 401


def test_preferences_have_documented_defaults_and_are_replaced(client, ctx):
    headers = auth_headers(client, make_user())
    # The spec's three fields, plus `idioma` (null: the pages format in pt-BR).
    assert client.get(PREFS, headers=headers).get_json() == {
        "notifEmail": True,
        "notifPush": False,
        "digestSemanal": True,
        "idioma": None,
    }
    new = {"notifEmail": False, "notifPush": True, "digestSemanal": False}
    response = client.put(PREFS, json=new, headers=headers)
    assert response.status_code == 200
    assert response.get_json() == {**new, "idioma": None}
    assert client.get(PREFS, headers=headers).get_json() == {**new, "idioma": None}


def test_preferences_put_needs_every_field(client, ctx):
    headers = auth_headers(client, make_user())
    response = client.put(PREFS, json={"notifEmail": False}, headers=headers)
    assert response.status_code == 422
    locs = {tuple(d["loc"]) for d in response.get_json()["detail"]}
    assert locs == {("body", "notifPush"), ("body", "digestSemanal")}
    assert client.get(PREFS).status_code == 401
