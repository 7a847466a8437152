"""Stores, products, stock per size and a cell's detail."""

from __future__ import annotations

import uuid
from datetime import timedelta

from services.clock import today
from tests.factories import (
    add_sales,
    auth_headers,
    make_campanha,
    make_loja,
    make_produto,
    make_user,
    set_stock,
)


def test_stores_and_lojas_list_the_same_network_cds_first(client, ctx):
    make_loja(nome="Zeta Shopping", codigo="Z1")
    cd = make_loja(nome="CD Cajamar", codigo="CD1", is_cd=True, cidade="Cajamar", lat=-23.35, lng=-46.87)
    make_loja(nome="Alfa Center", codigo="A1", bloqueada=True)
    headers = auth_headers(client, make_user(papel="visualizador"))
    stores = client.get("/api/v1/stores", headers=headers)
    lojas = client.get("/api/v1/lojas", headers=headers)
    assert stores.status_code == lojas.status_code == 200
    assert stores.get_json() == lojas.get_json()
    body = stores.get_json()
    assert [s["nome"] for s in body] == ["CD Cajamar", "Alfa Center", "Zeta Shopping"]
    assert body[0] == {
        "id": str(cd.id),
        "codigo": "CD1",
        "nome": "CD Cajamar",
        "cidade": "Cajamar",
        "bloqueada": False,
        "isCd": True,
        "lat": -23.35,
        "lng": -46.87,
    }
    assert body[1]["bloqueada"] is True


def test_catalogue_needs_a_token(client):
    for path in ("/api/v1/stores", "/api/v1/lojas", "/api/v1/produtos", f"/api/v1/produtos/{uuid.uuid4()}"):
        response = client.get(path)
        assert response.status_code == 401, path
        assert response.headers["WWW-Authenticate"] == "Bearer"


def test_products_list_and_detail(client, ctx):
    tenis = make_produto(nome="Tênis Corrida", sku="TN-1", marca="Passo", cor="Azul", tamanhos=("38", "39"))
    make_produto(nome="Camiseta Básica", sku="CM-1", categoria="Camiseta", tamanhos=("P", "M", "G"))
    headers = auth_headers(client, make_user())
    listing = client.get("/api/v1/produtos", headers=headers).get_json()
    assert [p["sku"] for p in listing] == ["CM-1", "TN-1"]
    detail = client.get(f"/api/v1/produtos/{tenis.id}", headers=headers)
    assert detail.status_code == 200
    body = detail.get_json()
    assert {k: body[k] for k in ("id", "nome", "sku", "marca", "cor", "tamanhos", "imagem")} == {
        "id": str(tenis.id),
        "nome": "Tênis Corrida",
        "sku": "TN-1",
        "marca": "Passo",
        "cor": "Azul",
        "tamanhos": ["38", "39"],
        "imagem": None,
    }
    assert {"categoria", "colecao"} <= body.keys()


def test_unknown_and_malformed_product_ids(client, ctx):
    headers = auth_headers(client, make_user())
    missing = client.get(f"/api/v1/produtos/{uuid.uuid4()}", headers=headers)
    assert missing.status_code == 404
    assert missing.get_json() == {"detail": "Produto não encontrado"}
    bad = client.get("/api/v1/produtos/123", headers=headers)
    assert bad.status_code == 422
    assert bad.get_json()["detail"] == [
        {"loc": ["path", "pid"], "msg": "Input should be a valid UUID", "type": "uuid_parsing"}
    ]


def test_estoque_lists_each_product_with_grid_ordered_sizes(client, ctx):
    loja, outra = make_loja(), make_loja()
    tenis = make_produto(nome="A Tênis", tamanhos=("37", "38", "39", "40"))
    bota = make_produto(nome="B Bota", tamanhos=("35", "36"))
    make_produto(nome="C Sem estoque")
    set_stock(loja, tenis, **{"40": 1, "38": 5, "37": 2})
    set_stock(loja, bota, **{"36": 0})
    set_stock(outra, tenis, **{"39": 9})
    headers = auth_headers(client, make_user())
    response = client.get(f"/api/v1/estoque?lojaId={loja.id}", headers=headers)
    assert response.status_code == 200
    assert response.get_json() == [
        {
            "produtoId": str(tenis.id),
            "porTamanho": [
                {"tamanho": "37", "qtd": 2},
                {"tamanho": "38", "qtd": 5},
                {"tamanho": "39", "qtd": 0},
                {"tamanho": "40", "qtd": 1},
            ],
            "total": 8,
        },
        {
            "produtoId": str(bota.id),
            "porTamanho": [{"tamanho": "35", "qtd": 0}, {"tamanho": "36", "qtd": 0}],
            "total": 0,
        },
    ]


def test_estoque_query_errors(client, ctx):
    headers = auth_headers(client, make_user())
    missing = client.get("/api/v1/estoque", headers=headers)
    assert missing.status_code == 422
    assert missing.get_json()["detail"][0]["loc"] == ["query", "lojaId"]
    assert missing.get_json()["detail"][0]["type"] == "missing"
    bad = client.get("/api/v1/estoque?lojaId=abc", headers=headers)
    assert bad.status_code == 422
    assert bad.get_json()["detail"][0]["loc"] == ["query", "lojaId"]
    unknown = client.get(f"/api/v1/estoque?lojaId={uuid.uuid4()}", headers=headers)
    assert unknown.status_code == 404
    assert unknown.get_json() == {"detail": "Loja não encontrada"}


def test_cell_detail_figures(client, ctx):
    loja = make_loja()
    produto = make_produto(tamanhos=("38", "39"))
    set_stock(loja, produto, **{"38": 6})
    ref = today()
    # 30 days of history (the default rules' periodo): 2 units a day for the
    # last 10 days, nothing before; older sales fall outside the window.
    add_sales(loja, produto, "38", [0] * 20 + [2] * 10, end=ref)
    add_sales(loja, produto, "38", [7], end=ref - timedelta(days=40))
    make_campanha(produto, inicio=ref - timedelta(days=1), fim=ref + timedelta(days=5))
    headers = auth_headers(client, make_user())
    response = client.get(
        f"/api/v1/estoque/cell?lojaId={loja.id}&produtoId={produto.id}&tamanho=38", headers=headers
    )
    assert response.status_code == 200
    body = response.get_json()
    assert body["estoque"] == 6
    assert body["periodoDias"] == 30
    assert body["vendasPeriodo"] == 20
    assert body["vendaMediaDiaria"] == round(20 / 30, 3)
    assert body["diasCobertura"] == round(6 / (20 / 30), 1)
    assert body["emCampanha"] is True
    assert len(body["ultimasVendas"]) == 14
    assert body["ultimasVendas"][-1] == {"data": (ref - timedelta(days=1)).isoformat(), "qtd": 2}
    assert body["ultimasVendas"][0]["qtd"] == 0


def test_cell_without_sales_has_no_cover(client, ctx):
    loja = make_loja()
    produto = make_produto(tamanhos=("38",))
    headers = auth_headers(client, make_user())
    body = client.get(
        f"/api/v1/estoque/cell?lojaId={loja.id}&produtoId={produto.id}&tamanho=38", headers=headers
    ).get_json()
    assert body["estoque"] == 0
    assert body["vendaMediaDiaria"] == 0
    assert body["diasCobertura"] is None
    assert body["emCampanha"] is False


def test_cell_errors(client, ctx):
    loja = make_loja()
    produto = make_produto(tamanhos=("38",))
    headers = auth_headers(client, make_user())
    outside = client.get(
        f"/api/v1/estoque/cell?lojaId={loja.id}&produtoId={produto.id}&tamanho=50", headers=headers
    )
    assert outside.status_code == 422
    assert outside.get_json()["detail"][0]["loc"] == ["query", "tamanho"]
    missing = client.get(f"/api/v1/estoque/cell?lojaId={loja.id}", headers=headers)
    assert missing.status_code == 422
    assert {tuple(d["loc"]) for d in missing.get_json()["detail"]} == {
        ("query", "produtoId"),
        ("query", "tamanho"),
    }
    unknown = client.get(
        f"/api/v1/estoque/cell?lojaId={uuid.uuid4()}&produtoId={produto.id}&tamanho=38", headers=headers
    )
    assert unknown.status_code == 404
