"""Page plumbing through the test client: sessions, CSRF, fragments and Vary."""

from __future__ import annotations

from tests.factories import PASSWORD, make_loja, make_user


def _sign_in(client, user):
    response = client.post("/login", data={"email": user.email, "senha": PASSWORD, "next": "/lojas"})
    assert response.status_code == 302
    assert response.headers["Location"] == "/lojas"
    return client.get_cookie("csrf_access_token").value


def test_pages_send_anonymous_people_to_login(client):
    response = client.get("/lojas?q=sp")
    assert response.status_code == 302
    assert response.headers["Location"] == "/login?next=/lojas?q%3Dsp"
    htmx = client.get("/lojas", headers={"HX-Request": "true"})
    assert htmx.headers["HX-Redirect"].startswith("/login")


def test_login_refuses_open_redirects(client, ctx):
    user = make_user()
    response = client.post(
        "/login", data={"email": user.email, "senha": PASSWORD, "next": "https://evil.example"}
    )
    assert response.headers["Location"] == "/"


def test_session_cookie_is_httponly(client, ctx):
    user = make_user()
    _sign_in(client, user)
    cookie = client.get_cookie("access_token_cookie")
    assert cookie.http_only
    assert not client.get_cookie("csrf_access_token").http_only


def test_htmx_requests_get_only_the_changed_block(client, ctx):
    make_loja(nome="Loja Recife", cidade="Recife")
    make_loja(nome="Loja Curitiba", cidade="Curitiba")
    _sign_in(client, make_user())
    full = client.get("/lojas?q=recife")
    assert full.status_code == 200
    assert "<html" in full.get_data(as_text=True)
    assert "HX-Request" in full.headers["Vary"]
    fragment = client.get("/lojas?q=recife", headers={"HX-Request": "true"})
    body = fragment.get_data(as_text=True)
    assert "<html" not in body
    assert "Loja Recife" in body and "Loja Curitiba" not in body
    assert "HX-Request" in fragment.headers["Vary"]


def test_state_changes_need_the_csrf_token(client, ctx):
    user = make_user(name="Nome Antigo")
    csrf = _sign_in(client, user)
    refused = client.post("/perfil", data={"nome": "Nome Novo", "email": user.email})
    assert refused.status_code == 400
    accepted = client.post(
        "/perfil", data={"nome": "Nome Novo", "email": user.email}, headers={"X-CSRF-TOKEN": csrf}
    )
    assert accepted.status_code == 200
    assert "Perfil salvo" in accepted.get_data(as_text=True)
    form_token = client.post("/perfil", data={"nome": "Outro Nome", "email": user.email, "csrf_token": csrf})
    assert form_token.status_code == 200


def test_profile_page_shows_inline_errors(client, ctx):
    user = make_user()
    csrf = _sign_in(client, user)
    response = client.post(
        "/perfil", data={"nome": "", "email": "nope"}, headers={"X-CSRF-TOKEN": csrf, "HX-Request": "true"}
    )
    assert response.status_code == 422
    body = response.get_data(as_text=True)
    assert 'id="nome-error"' in body and 'id="email-error"' in body
    assert "<html" not in body


def test_banned_people_lose_their_page_session(client, ctx):
    from extensions import db

    user = make_user()
    _sign_in(client, user)
    assert client.get("/lojas").status_code == 200
    user.banned = True
    db.session.commit()
    assert client.get("/lojas").status_code == 302
    response = client.post("/login", data={"email": user.email, "senha": PASSWORD})
    assert response.status_code == 403
    assert "Conta bloqueada" in response.get_data(as_text=True)


def test_store_stock_is_searched_by_the_database(client, ctx):
    from tests.factories import make_produto, set_stock

    loja = make_loja(nome="Loja Recife", cidade="Recife")
    bota = make_produto(nome="Bota Couro", sku="BTC-02", marca="Marca B")
    tenis = make_produto(nome="Tênis 100% Algodão", sku="TEN-01", marca="Marca A")
    set_stock(loja, bota, **{"37": 2})
    set_stock(loja, tenis, **{"38": 1})
    _sign_in(client, make_user())

    def shown(q: str) -> set[str]:
        body = client.get(f"/lojas/{loja.id}", query_string={"q": q}, headers={"HX-Request": "true"})
        assert body.status_code == 200
        text = body.get_data(as_text=True)
        return {name for name in ("Bota Couro", "Tênis 100% Algodão") if name in text}

    assert shown("") == {"Bota Couro", "Tênis 100% Algodão"}
    assert shown("COURO") == {"Bota Couro"}
    assert shown("marca a") == {"Tênis 100% Algodão"}
    assert shown("btc") == {"Bota Couro"}
    # LIKE wildcards are taken literally.
    assert shown("0%") == {"Tênis 100% Algodão"}
    assert shown("_") == set()
    assert client.get("/lojas?q=%25").status_code == 200


def test_a_cell_outside_the_grade_says_why_in_portuguese(client, ctx):
    from tests.factories import make_produto

    loja = make_loja()
    produto = make_produto(tamanhos=("37", "38"))
    _sign_in(client, make_user())
    ok = client.get(f"/lojas/{loja.id}/celula", query_string={"produtoId": str(produto.id), "tamanho": "38"})
    assert ok.status_code == 200
    outside = client.get(
        f"/lojas/{loja.id}/celula", query_string={"produtoId": str(produto.id), "tamanho": "44"}
    )
    assert outside.status_code == 422
    assert "Tamanho fora da grade do produto" in outside.get_data(as_text=True)
    unknown = client.get(
        f"/lojas/{loja.id}/celula", query_string={"produtoId": str(loja.id), "tamanho": "38"}
    )
    assert unknown.status_code == 404
