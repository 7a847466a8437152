"""Hostile input on the remanejamento API: bounded work, a 422 (or 413), never a 500."""

from __future__ import annotations

import json

import pytest

from tests.factories import auth_headers, make_loja, make_lote, make_produto, make_rec, make_user
from tests.stock.support import API

LOGIN = "/api/v1/auth/login"
ME = "/api/v1/users/me"
DEEP = "[" * 1000 + "]" * 1000


def details(response) -> list[dict]:
    assert response.status_code == 422, response.get_data(as_text=True)[:500]
    return response.get_json()["detail"]


def post_raw(client, path, text: str, headers=None):
    return client.post(path, data=text, content_type="application/json", headers=headers or {})


@pytest.mark.parametrize(
    "body",
    [
        '{"email": ' + DEEP + ', "senha": "x"}',
        '{"email": ' + "1" * 5000 + ', "senha": "x"}',
        '{"email": "a\\udfffb@x.com", "senha": "x"}',
        '{"email": "a@x.com", "senha": NaN}',
        "{" + ", ".join(f'"k{i}": 0' for i in range(1001)) + "}",
    ],
    ids=["nested-1000-deep", "5000-digit-number", "lone-surrogate", "nan", "1001-members"],
)
def test_hostile_json_on_login_is_a_malformed_body(client, body):
    [error] = details(post_raw(client, LOGIN, body))
    assert error["loc"] == ["body"] and error["type"] == "json_invalid"
    assert error["msg"].startswith("Invalid JSON body")


def test_nesting_is_allowed_up_to_32_levels(client):
    # The body object is the first level: 31 more arrays make 32, one more makes 33.
    at_limit = details(post_raw(client, LOGIN, '{"email": ' + "[" * 31 + "]" * 31 + ', "senha": "x"}'))
    assert at_limit[0]["loc"] == ["body", "email"]
    too_deep = details(post_raw(client, LOGIN, '{"email": ' + "[" * 32 + "]" * 32 + ', "senha": "x"}'))
    assert too_deep[0]["type"] == "json_invalid"
    # Brackets inside strings are text, not nesting.
    in_text = details(post_raw(client, LOGIN, json.dumps({"email": "[" * 100, "senha": "x"})))
    assert in_text[0]["loc"] == ["body", "email"]


@pytest.mark.parametrize(
    "body",
    [
        "[" * 40 + '"' + '\\"' * 900_000,
        "[" * 1_000_000 + "]" * 1_000_000,
        "[" + ",".join(["[]"] * 650_000) + "]",
        "[" + ",".join(["[" * 31 + "]" * 31] * 30_000) + "]",
    ],
    ids=["unterminated-escaped-quotes", "million-deep", "many-empty-arrays", "many-at-the-limit"],
)
def test_the_costliest_bodies_under_the_size_limit_are_refused_as_malformed(client, body):
    assert len(body) < 2 * 1024 * 1024
    response = post_raw(client, LOGIN, body)
    assert response.status_code == 422


def test_control_characters_and_bounds_in_login_fields(client):
    for body, field in [
        ({"email": "a\x00b@x.com", "senha": "x"}, "email"),
        ({"email": "a@x.com", "senha": "x\x00"}, "senha"),
        ({"email": "a" * 400 + "@x.com", "senha": "x"}, "email"),
        ({"email": "a@x.com", "senha": "x" * 257}, "senha"),
        ({"email": "a@x.com", "senha": "x", "remember": "yes"}, "remember"),
    ]:
        assert ["body", field] in [e["loc"] for e in details(client.post(LOGIN, json=body))]


def test_oversized_body_is_a_413_in_the_stock_dialect(client):
    response = post_raw(client, LOGIN, json.dumps({"email": "a@x.com", "senha": "x" * (3 * 1024 * 1024)}))
    assert response.status_code == 413
    assert response.is_json
    assert response.get_json() == {"detail": "Corpo da requisição grande demais"}


@pytest.fixture
def admin(client, ctx):
    return auth_headers(client, make_user(papel="admin"))


def test_a_million_blocked_stores_answer_small(app, client, admin, monkeypatch):
    body = json.dumps({"lojasBloqueadas": ["x"] * 1_000_000})
    refused = client.put(f"{API}/regras", data=body, content_type="application/json", headers=admin)
    assert refused.status_code == 413 and len(refused.data) < 200
    # Past the size limit too, the list is refused by its length alone.
    monkeypatch.setitem(app.config, "MAX_CONTENT_LENGTH", 16 * 1024 * 1024)
    response = client.put(f"{API}/regras", data=body, content_type="application/json", headers=admin)
    assert details(response) == [
        {"loc": ["body", "lojasBloqueadas"], "msg": "Must have at most 1000 items.", "type": "too_long"}
    ]
    assert client.get(f"{API}/regras", headers=admin).get_json()["lojasBloqueadas"] == []


def test_blocked_brands_are_bounded(client, admin):
    too_many = details(client.put(f"{API}/regras", json={"marcasBloqueadas": ["M"] * 501}, headers=admin))
    assert too_many[0]["loc"] == ["body", "marcasBloqueadas"]
    too_long = details(client.put(f"{API}/regras", json={"marcasBloqueadas": ["M" * 101]}, headers=admin))
    assert too_long[0]["loc"] == ["body", "marcasBloqueadas", 0]
    assert too_long[0]["type"] == "string_too_long"
    assert client.get(f"{API}/regras", headers=admin).get_json()["marcasBloqueadas"] == []


def test_error_bodies_list_at_most_20_errors(client, admin):
    # 30 ids that are not stores: the service reports each, the answer shows 20.
    response = client.put(
        f"{API}/regras", json={"lojasBloqueadas": [f"loja-{i}" for i in range(30)]}, headers=admin
    )
    errors = details(response)
    assert len(errors) == 20
    assert errors[0]["loc"] == ["body", "lojasBloqueadas", 0]


@pytest.mark.parametrize(
    ("fields", "loc"),
    [
        ({"qtdMinima": "3"}, "qtdMinima"),
        ({"qtdMinima": 1.5}, "qtdMinima"),
        ({"qtdMinima": True}, "qtdMinima"),
        ({"pesoGiro": 10**30}, "pesoGiro"),
        ({"priorizarCd": "yes"}, "priorizarCd"),
        ({"priorizarCd": 1}, "priorizarCd"),
        ({"periodo": 30}, "periodo"),
    ],
)
def test_numbers_and_booleans_in_bodies_are_strict(client, admin, fields, loc):
    errors = details(client.put(f"{API}/regras", json=fields, headers=admin))
    assert errors[0]["loc"] == ["body", loc]


def test_preferences_take_json_booleans_only(client, ctx):
    headers = auth_headers(client, make_user())
    body = {"notifEmail": "true", "notifPush": False, "digestSemanal": True}
    assert details(client.put(f"{ME}/preferences", json=body, headers=headers))[0]["type"] == "bool_parsing"


def test_paging_numbers_are_bounded_and_query_text_still_parses(client, ctx):
    headers = auth_headers(client, make_user())
    for query, loc in [
        ({"offset": str(2**64)}, "offset"),
        ({"offset": "-1"}, "offset"),
        ({"limite": "1" * 5000}, "limite"),
        ({"limite": "1_0"}, "limite"),
    ]:
        errors = details(client.get(f"{API}/recomendacoes", query_string=query, headers=headers))
        assert errors[0]["loc"] == ["query", loc]
    ok = client.get(f"{API}/recomendacoes", query_string={"limite": "10", "offset": "0"}, headers=headers)
    assert ok.status_code == 200


def test_query_text_is_bounded_and_clean(client, ctx):
    headers = auth_headers(client, make_user())
    loja, produto = make_loja(), make_produto()
    base = {"lojaId": str(loja.id), "produtoId": str(produto.id)}
    for tamanho in ("38\x00", "3" * 21):
        errors = details(
            client.get("/api/v1/estoque/cell", query_string={**base, "tamanho": tamanho}, headers=headers)
        )
        assert errors[0]["loc"] == ["query", "tamanho"]


def test_nul_in_a_veto_reason_is_422_and_nothing_changes(client, ctx):
    headers = auth_headers(client, make_user(papel="planejador"))
    lote = make_lote()
    rec = make_rec(lote, make_produto(), make_loja(is_cd=True), make_loja())
    path = f"{API}/lotes/{lote.id}/recomendacoes/{rec.id}/vetar"
    errors = details(client.post(path, json={"motivo": "falta\x00de estoque"}, headers=headers))
    assert errors[0]["loc"] == ["body", "motivo"]
    assert client.get(f"{API}/recomendacoes/{rec.id}", headers=headers).get_json()["vetado"] is False
    # A reason may span lines.
    vetoed = client.post(path, json={"motivo": "  Loja em reforma\nvolta em março  "}, headers=headers)
    assert vetoed.status_code == 200
    assert vetoed.get_json()["motivoVeto"] == "Loja em reforma\nvolta em março"


def test_profile_name_is_clean_and_never_wiped(client, ctx):
    headers = auth_headers(client, make_user(name="Dora Reis"))
    for nome, type_ in [
        ("Dora\x00", "value_error"),
        ("   ", "string_too_short"),
        ("D" * 201, "string_too_long"),
    ]:
        [error] = details(client.patch(ME, json={"nome": nome}, headers=headers))
        assert error["loc"] == ["body", "nome"] and error["type"] == type_
    assert client.get("/api/v1/auth/me", headers=headers).get_json()["nome"] == "Dora Reis"
    trimmed = client.patch(ME, json={"nome": "  Dora Reis Lima "}, headers=headers)
    assert trimmed.get_json()["nome"] == "Dora Reis Lima"
