"""The profile page proves an address: a fresh link on request, and a confirmation page."""

from __future__ import annotations

from tests.factories import PASSWORD, captured_mail, link_token, make_user


def test_an_unproven_address_gets_a_link_from_the_profile_and_confirms_on_a_page(client, ctx):
    make_user(email="nobody@giro.test", papel=None, verified=False)
    client.post("/login", data={"email": "nobody@giro.test", "senha": PASSWORD})
    profile = client.get("/perfil").get_data(as_text=True)
    assert "sem acesso ao remanejamento" in profile and "E-mail ainda não confirmado" in profile

    csrf = client.get_cookie("csrf_access_token").value
    with captured_mail() as outbox:
        sent = client.post("/perfil/confirmar-email", data={"csrf_token": csrf})
    assert sent.status_code == 200 and [m["To"] for m in outbox] == ["nobody@giro.test"]
    token = link_token(outbox[0])

    # Opening the link only shows a button: mail scanners that follow links confirm nothing.
    opened = client.get(f"/verify-email?token={token}")
    assert opened.status_code == 200 and "Confirme que este endereço" in opened.get_data(as_text=True)
    assert "E-mail ainda não confirmado" in client.get("/perfil").get_data(as_text=True)

    confirmed = client.post("/verify-email", data={"token": token})
    assert confirmed.status_code == 200 and "E-mail confirmado" in confirmed.get_data(as_text=True)
    assert "E-mail ainda não confirmado" not in client.get("/perfil").get_data(as_text=True)
    assert client.post("/verify-email", data={"token": token}).status_code == 400
