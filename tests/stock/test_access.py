"""Stock access is granted by a stock admin, never implied by having an account."""

from __future__ import annotations

from tests.factories import PASSWORD, make_loja, make_user
from tests.tracker.support import API, register

LOGIN = "/api/v1/auth/login"


def _stock_login(client, email, password):
    return client.post(LOGIN, json={"email": email, "senha": password})


def test_a_cli_grant_opens_the_stock_service_and_a_revoke_closes_it(client, runner, ctx):
    tenant = register(client, email="grantee@tracker.test")
    assert client.get("/api/v1/lojas", headers=tenant.headers).status_code == 403

    granted = runner.invoke(
        args=["users", "grant", "--email", "grantee@tracker.test", "--papel", "visualizador"]
    )
    assert granted.exit_code == 0, granted.output
    # The live token carries no role: each request reads the account's grant.
    assert client.get("/api/v1/lojas", headers=tenant.headers).status_code == 200
    login = _stock_login(client, "grantee@tracker.test", "correct-horse-42")
    assert login.status_code == 200 and login.get_json()["user"]["papel"] == "visualizador"
    refresh = client.post("/api/v1/auth/refresh", json={"refreshToken": login.get_json()["refreshToken"]})
    assert refresh.status_code == 200

    revoked = runner.invoke(args=["users", "revoke", "--email", "grantee@tracker.test"])
    assert revoked.exit_code == 0, revoked.output
    assert client.get("/api/v1/lojas", headers=tenant.headers).status_code == 403
    again = client.post("/api/v1/auth/refresh", json={"refreshToken": refresh.get_json()["refreshToken"]})
    assert again.status_code == 403
    # The tracker side is untouched.
    assert client.get(f"{API}/auth/me", headers=tenant.headers).status_code == 200


def test_grant_checks_its_input(client, runner, ctx):
    register(client, email="x@tracker.test")
    unproven = register(client, email="y@tracker.test", verify=False)
    assert unproven.user_id
    no_store = runner.invoke(args=["users", "grant", "--email", "x@tracker.test", "--papel", "gerente_loja"])
    assert no_store.exit_code != 0 and "loja" in no_store.output.lower()
    unknown = runner.invoke(args=["users", "grant", "--email", "y@tracker.test", "--papel", "admin"])
    assert unknown.exit_code != 0 and "no account has proven" in unknown.output
    loja = make_loja(codigo="L042")
    db_ok = runner.invoke(
        args=["users", "grant", "--email", "x@tracker.test", "--papel", "gerente_loja", "--loja", "L042"]
    )
    assert db_ok.exit_code == 0, db_ok.output
    body = _stock_login(client, "x@tracker.test", "correct-horse-42").get_json()
    assert (body["user"]["papel"], body["user"]["lojaId"]) == ("gerente_loja", str(loja.id))


def test_users_create_without_papel_gives_no_stock_access(client, runner, ctx):
    created = runner.invoke(
        args=["users", "create", "--email", "plain@giro.test", "--password", PASSWORD, "--name", "Plain"]
    )
    assert created.exit_code == 0 and "no stock access" in created.output
    assert _stock_login(client, "plain@giro.test", PASSWORD).status_code == 403
    with_role = runner.invoke(
        args=[
            "users",
            "create",
            "--email",
            "p2@giro.test",
            "--password",
            PASSWORD,
            "--name",
            "P",
            "--papel",
            "planejador",
        ]
    )
    assert with_role.exit_code == 0
    assert _stock_login(client, "p2@giro.test", PASSWORD).status_code == 200


def test_planner_pages_say_there_is_no_access_and_offer_the_tracker(client, ctx):
    make_user(email="nobody@giro.test", papel=None)
    client.post("/login", data={"email": "nobody@giro.test", "senha": PASSWORD})
    for path in ("/lotes", "/lojas"):
        page = client.get(path)
        assert page.status_code == 403, path
        text = page.get_data(as_text=True)
        assert "Sem acesso ao remanejamento" in text and 'href="/tracker/"' in text
    home = client.get("/")
    assert home.status_code == 302 and home.headers["Location"] == "/tracker/"
    tracker = client.get("/tracker/")
    assert tracker.status_code == 200
    assert 'href="/lotes"' not in tracker.get_data(as_text=True)
