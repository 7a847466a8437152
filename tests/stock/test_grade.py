"""The size grid of a product with a batch's deltas."""

from __future__ import annotations

import uuid
from datetime import date

import pytest

from tests.factories import auth_headers, make_loja, make_lote, make_produto, make_rec, make_user, set_stock


@pytest.fixture
def viewer(client, ctx):
    return auth_headers(client, make_user(papel="visualizador"))


@pytest.fixture
def net(ctx):
    cd = make_loja(nome="CD Cajamar", is_cd=True)
    a, b = make_loja(nome="Loja A"), make_loja(nome="Loja B")
    produto = make_produto(tamanhos=("37", "38", "39"))
    set_stock(cd, produto, **{"37": 20, "38": 30, "39": 10})
    set_stock(a, produto, **{"37": 1, "38": 0})
    set_stock(b, produto, **{"38": 4, "39": 2})
    return {"cd": cd, "a": a, "b": b, "produto": produto}


def cells(body):
    return {(c["lojaId"], c["tamanho"]): c for row in body["rows"] for c in row["cells"]}


def test_grade_applies_the_newest_batch_active_moves(client, net, viewer):
    cd, a, b, produto = net["cd"], net["a"], net["b"], net["produto"]
    old = make_lote(date(2026, 11, 4))
    make_rec(old, produto, cd, a, tamanho="37", quantidade=9)
    lote = make_lote(date(2026, 11, 18))
    make_rec(lote, produto, cd, a, tamanho="38", quantidade=5)
    make_rec(lote, produto, b, a, tamanho="38", quantidade=4)
    make_rec(lote, produto, cd, b, tamanho="39", quantidade=3, status="executada")
    make_rec(lote, produto, cd, a, tamanho="37", quantidade=6, status="recusada")
    make_rec(lote, produto, cd, b, tamanho="37", quantidade=7, vetado=True)
    make_rec(lote, make_produto(), cd, a, tamanho="38", quantidade=8)  # another product

    r = client.get(f"/api/v1/produtos/{produto.id}/grade", headers=viewer)
    assert r.status_code == 200
    body = r.get_json()
    assert body["produtoId"] == str(produto.id) and body["tamanhos"] == ["37", "38", "39"]
    assert body["loteId"] == str(lote.id)
    assert [row["lojaId"] for row in body["rows"]] == [str(cd.id), str(a.id), str(b.id)]
    grid = cells(body)
    assert grid[(str(a.id), "38")] == {
        "lojaId": str(a.id),
        "tamanho": "38",
        "atual": 0,
        "delta": 9,
        "final": 9,
        "ruptura": False,
    }
    assert (grid[(str(cd.id), "38")]["delta"], grid[(str(cd.id), "38")]["final"]) == (-5, 25)
    assert (grid[(str(b.id), "38")]["delta"], grid[(str(b.id), "38")]["final"]) == (-4, 0)
    assert grid[(str(b.id), "38")]["ruptura"] is True
    assert grid[(str(b.id), "39")]["delta"] == 3
    # Refused and vetoed ones do not move anything.
    assert grid[(str(a.id), "37")] == {
        "lojaId": str(a.id),
        "tamanho": "37",
        "atual": 1,
        "delta": 0,
        "final": 1,
        "ruptura": False,
    }
    assert grid[(str(b.id), "37")]["delta"] == 0 and grid[(str(b.id), "37")]["ruptura"] is True
    row_a = next(row for row in body["rows"] if row["lojaId"] == str(a.id))
    assert (row_a["totalAtual"], row_a["totalFinal"]) == (1, 10)
    total_delta = sum(c["delta"] for c in grid.values())
    assert total_delta == 0, "a transfer moves units, it does not create them"

    # An explicit older batch shows its own moves.
    older = client.get(f"/api/v1/produtos/{produto.id}/grade?loteId={old.id}", headers=viewer).get_json()
    grid = cells(older)
    assert grid[(str(a.id), "37")]["delta"] == 9 and grid[(str(a.id), "38")]["delta"] == 0


def test_grade_without_batches_has_zero_deltas(client, net, viewer):
    body = client.get(f"/api/v1/produtos/{net['produto'].id}/grade", headers=viewer).get_json()
    assert body["loteId"] is None
    assert all(c["delta"] == 0 and c["final"] == c["atual"] for c in cells(body).values())


def test_grade_errors(client, net, viewer):
    pid = net["produto"].id
    assert client.get(f"/api/v1/produtos/{uuid.uuid4()}/grade", headers=viewer).status_code == 404
    assert (
        client.get(f"/api/v1/produtos/{pid}/grade?loteId={uuid.uuid4()}", headers=viewer).status_code == 404
    )
    r = client.get(f"/api/v1/produtos/{pid}/grade?loteId=abc", headers=viewer)
    assert r.status_code == 422 and r.get_json()["detail"][0]["loc"] == ["query", "loteId"]
    r = client.get("/api/v1/produtos/abc/grade", headers=viewer)
    assert r.status_code == 422 and r.get_json()["detail"][0]["loc"] == ["path", "pid"]
    assert client.get(f"/api/v1/produtos/{pid}/grade").status_code == 401


def test_grade_says_whether_each_store_run_is_whole_before_and_after_the_batch(client, net, viewer):
    """Key sizes: the two best sellers over the network; a store missing one has a broken run."""
    from services.clock import today
    from tests.factories import add_sales

    cd, a, b, produto = net["cd"], net["a"], net["b"], net["produto"]
    # without sales the key sizes are the middle of the grid: 38, then 37 (nearest, lower first)
    body = client.get(f"/api/v1/produtos/{produto.id}/grade", headers=viewer).get_json()
    assert body["tamanhosChave"] == ["37", "38"]
    # 38 and 39 sell best across the stores (a CD's sales do not count)
    add_sales(b, produto, "38", [2] * 10, end=today())
    add_sales(b, produto, "39", [1] * 10, end=today())
    add_sales(a, produto, "37", [1] * 3, end=today())
    add_sales(cd, produto, "37", [9] * 10, end=today())
    lote = make_lote(date(2026, 11, 18))
    make_rec(lote, produto, cd, a, tamanho="38", quantidade=5)
    make_rec(lote, produto, cd, a, tamanho="39", quantidade=3)
    make_rec(lote, produto, b, cd, tamanho="39", quantidade=2)

    body = client.get(f"/api/v1/produtos/{produto.id}/grade", headers=viewer).get_json()
    assert body["tamanhosChave"] == ["38", "39"]
    rows = {row["lojaId"]: row for row in body["rows"]}
    # A holds only 37: broken; the batch brings 38 and 39: whole
    assert (rows[str(a.id)]["gradeAtual"], rows[str(a.id)]["grade"]) == ("quebrada", "completa")
    # B holds 38 and 39 (no 37, not a key size): whole; sending its last 39s breaks it
    assert (rows[str(b.id)]["gradeAtual"], rows[str(b.id)]["grade"]) == ("completa", "quebrada")
    assert rows[str(cd.id)]["gradeAtual"] == "completa"


def test_a_store_without_the_product_and_a_short_run_have_no_run_state(client, ctx, viewer):
    loja = make_loja(nome="Loja Vazia")
    produto = make_produto(tamanhos=("P", "M", "G"))
    curto = make_produto(tamanhos=("U",))
    set_stock(loja, curto, U=5)
    body = client.get(f"/api/v1/produtos/{produto.id}/grade", headers=viewer).get_json()
    assert [row["grade"] for row in body["rows"]] == [None]
    body = client.get(f"/api/v1/produtos/{curto.id}/grade", headers=viewer).get_json()
    assert body["tamanhosChave"] == [] and body["rows"][0]["gradeAtual"] is None
