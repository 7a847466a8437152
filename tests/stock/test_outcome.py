"""Outcome of executed transfers: expected (ESI) against actual (ASI) sales increase, through the
API and the CLI, on a constructed history with hand-computed figures."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from extensions import db
from models.stock import Venda
from services.clock import today
from tests.factories import auth_headers, make_loja, make_lote, make_produto, make_rec, make_user
from tests.stock.support import API
from tests.stock.test_batches import build_network, generate

RESULTADO = f"{API}/metricas/resultado"


def sell(loja, produto, tamanho, day, qtd):
    db.session.add(Venda(data=day, loja_id=loja.id, produto_id=produto.id, tamanho=tamanho, qtd=qtd))
    db.session.flush()


def received(rec_day, qtd):
    """Receipt columns of a transfer received on ``rec_day`` (midday UTC) with ``qtd`` units."""
    moment = datetime(rec_day.year, rec_day.month, rec_day.day, 15, tzinfo=UTC)
    return {"recebida_em": moment, "recebida_data": rec_day, "quantidade_recebida": qtd}


@pytest.fixture
def history(ctx):
    return build_history()


def build_history() -> dict:
    """Two batches, four executed transfers, their sales; ``ref`` is today.

    Batch 1 (generated ref-40):
    - t1: CD → A, Bota 38, 10 sent, 8 received on ref-35; ESI 6.0 × 8/10 = 4.8. A held 2 at
      generation and sold 1 before the receipt: own stock left 1. Sold 5 in days 0-13 of the
      window, 3 more in days 14-27: ASI14 = 5 − 1 = 4, ASI28 = 8 − 1 = 7.
    - t2: CD → B, Bota 39, 5 sent, executed ref-30 and never received (window from execution);
      ESI 2.0; B held 0. Sold 3 then 1: ASI14 = 3, ASI28 = 4.
    - t4: CD → A, Bota 40, 3 received on ref-35, no prediction stored. Sold 2: ASI 2 and 2.
    Batch 2 (generated ref-10):
    - t3: A → B, Sandália 38, 4 received on ref-8; ESI 3.0. B held 5 and sold 2 before: own 3.
      Sold 6 since: ASI so far = 6 − 3 = 3, both windows open with 8 days elapsed.
    """
    ref = today()
    cd = make_loja(nome="CD Cajamar", is_cd=True)
    a, b = make_loja(nome="Loja A"), make_loja(nome="Loja B")
    bota = make_produto(nome="Bota", marca="Marca A", categoria="Botas", tamanhos=("38", "39", "40"))
    sandalia = make_produto(nome="Sandália", marca="Marca B", categoria="Sandálias")
    d = lambda n: ref - timedelta(days=n)  # noqa: E731
    l1, l2 = make_lote(d(40)), make_lote(d(10))
    t1 = make_rec(
        l1,
        bota,
        cd,
        a,
        tamanho="38",
        quantidade=10,
        status="executada",
        executada_data=d(37),
        venda_extra_esperada=6.0,
        estoque_destino=2,
        **received(d(35), 8),
    )
    t2 = make_rec(
        l1,
        bota,
        cd,
        b,
        tamanho="39",
        quantidade=5,
        status="executada",
        executada_data=d(30),
        venda_extra_esperada=2.0,
        estoque_destino=0,
    )
    t4 = make_rec(
        l1,
        bota,
        cd,
        a,
        tamanho="40",
        quantidade=3,
        status="executada",
        executada_data=d(37),
        estoque_destino=0,
        **received(d(35), 3),
    )
    t3 = make_rec(
        l2,
        sandalia,
        a,
        b,
        tamanho="38",
        quantidade=4,
        status="executada",
        executada_data=d(9),
        venda_extra_esperada=3.0,
        estoque_destino=5,
        **received(d(8), 4),
    )
    # Not executed: no outcome.
    make_rec(l2, bota, cd, a, tamanho="39", status="aprovada", venda_extra_esperada=9.0)
    make_rec(l2, bota, cd, b, tamanho="40", venda_extra_esperada=9.0)
    # t1's cell: before generation (ignored), before receipt, window 14, window 28, after.
    for day, qtd in ((45, 4), (38, 1), (35, 2), (30, 3), (15, 3), (5, 10)):
        sell(a, bota, "38", d(day), qtd)
    for day, qtd in ((29, 3), (10, 1)):
        sell(b, bota, "39", d(day), qtd)
    sell(a, bota, "40", d(34), 2)
    for day, qtd in ((10, 2), (8, 4), (2, 2)):
        sell(b, sandalia, "38", d(day), qtd)
    # Another store's sales of the same cells count for nobody.
    sell(make_loja(nome="Loja C"), bota, "38", d(30), 7)
    return {"ref": ref, "cd": cd, "a": a, "b": b, "l1": l1, "l2": l2, "t": (t1, t2, t3, t4)}


@pytest.fixture
def planner(client, ctx):
    return auth_headers(client, make_user(papel="planejador"))


def get(client, headers, query=""):
    r = client.get(f"{RESULTADO}{query}", headers=headers)
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def closed(transfers, unidades, esi, asi, pct, razao):
    return {
        "dias": None,
        "parcial": False,
        "transferencias": transfers,
        "unidades": unidades,
        "esi": esi,
        "asi": asi,
        "pctVendido": pct,
        "razao": razao,
        "parciais": {
            "transferencias": 0,
            "unidades": 0,
            "esi": None,
            "asi": 0,
            "diasDecorridosMin": None,
            "diasDecorridosMax": None,
        },
    }


def window(body, days):
    out = dict(body[f"janela{days}"])
    assert out.pop("dias") == days
    return {**out, "dias": None}


def test_per_batch_figures_on_a_constructed_history(client, history, planner):
    body = get(client, planner)
    assert body["agrupar"] == "lote" and body["horizonteDias"] == 14
    assert body["referencia"] == history["ref"].isoformat()
    l1, l2 = history["l1"], history["l2"]
    assert [g["chave"] for g in body["grupos"]] == [l2.semana, l1.semana]  # newest first
    old = body["grupos"][1]
    assert old["loteId"] == str(l1.id) and old["origemId"] is None
    assert (old["transferencias"], old["unidadesMovidas"], old["naoRecebidas"], old["semPrevisao"]) == (
        3,
        16,
        1,
        1,
    )
    assert old["esi"] == 6.8  # 4.8 + 2.0; t4 has no prediction
    # 14 days: ASI 4 + 3 + 2 = 9 of 16 moved; ratio over the predicted ones (4 + 3) / 6.8.
    assert window(old, 14) == closed(3, 16, 6.8, 9, 0.5625, round(7 / 6.8, 4))
    # 28 days: 7 + 4 + 2 = 13; (7 + 4) / 6.8.
    assert window(old, 28) == closed(3, 16, 6.8, 13, 0.8125, round(11 / 6.8, 4))

    new = body["grupos"][0]
    assert (new["transferencias"], new["unidadesMovidas"], new["esi"]) == (1, 4, 3.0)
    for days in (14, 28):
        janela = new[f"janela{days}"]
        # Open: nothing in the complete figures, what sold so far apart.
        assert janela["parcial"] is True
        assert (janela["transferencias"], janela["unidades"], janela["asi"]) == (0, 0, 0)
        assert janela["esi"] is None and janela["razao"] is None and janela["pctVendido"] is None
        assert janela["parciais"] == {
            "transferencias": 1,
            "unidades": 4,
            "esi": 3.0,
            "asi": 3,
            "diasDecorridosMin": 8,
            "diasDecorridosMax": 8,
        }

    total = body["total"]
    assert total["chave"] == "total"
    assert (total["transferencias"], total["unidadesMovidas"], total["esi"]) == (4, 20, 9.8)
    assert total["janela14"]["asi"] == 9 and total["janela14"]["parcial"] is True
    assert total["janela14"]["parciais"]["asi"] == 3


def test_grouped_by_route_brand_and_category(client, history, planner):
    cd, a, b = history["cd"], history["a"], history["b"]
    rotas = get(client, planner, "?agrupar=rota")["grupos"]
    assert [(g["chave"], g["unidadesMovidas"]) for g in rotas] == [
        ("CD Cajamar → Loja A", 11),
        ("CD Cajamar → Loja B", 5),
        ("Loja A → Loja B", 4),
    ]
    assert (rotas[0]["origemId"], rotas[0]["destinoId"]) == (str(cd.id), str(a.id))
    # CD → A: t1 (ESI 4.8, ASI14 4) and t4 (no prediction, ASI14 2).
    assert window(rotas[0], 14) == closed(2, 11, 4.8, 6, round(6 / 11, 4), round(4 / 4.8, 4))
    assert rotas[1]["destinoId"] == str(b.id) and rotas[1]["janela28"]["asi"] == 4

    marcas = get(client, planner, "?agrupar=marca")["grupos"]
    assert [(g["chave"], g["transferencias"], g["esi"]) for g in marcas] == [
        ("Marca A", 3, 6.8),
        ("Marca B", 1, 3.0),
    ]
    categorias = get(client, planner, "?agrupar=categoria")["grupos"]
    assert [g["chave"] for g in categorias] == ["Botas", "Sandálias"]
    assert categorias[1]["janela14"]["parciais"]["asi"] == 3


def test_one_batch_and_the_limit(client, history, planner):
    body = get(client, planner, f"?agrupar=rota&loteId={history['l2'].id}")
    assert [g["chave"] for g in body["grupos"]] == ["Loja A → Loja B"]
    assert body["total"]["unidadesMovidas"] == 4
    body = get(client, planner, "?agrupar=rota&limite=1")
    assert len(body["grupos"]) == 1 and body["total"]["transferencias"] == 4


def test_several_origins_into_one_cell_share_its_sales(client, ctx, planner):
    # Two origins send 3 units each of the same cell; it held nothing and sold 4 in the window:
    # the first (engine order) sold 3, the second 1, never 4 + 4.
    ref = today()
    cd, c, a = make_loja(nome="CD", is_cd=True), make_loja(nome="Loja C"), make_loja(nome="Loja A")
    p = make_produto()
    lote = make_lote(ref - timedelta(days=20))
    for origem in (cd, c):
        make_rec(
            lote,
            p,
            origem,
            a,
            quantidade=3,
            status="executada",
            executada_data=ref - timedelta(days=18),
            estoque_destino=0,
            venda_extra_esperada=2.0,
            **received(ref - timedelta(days=16), 3),
        )
    sell(a, p, "38", ref - timedelta(days=15), 4)
    rotas = get(client, planner, "?agrupar=rota")["grupos"]
    assert {g["chave"]: g["janela14"]["asi"] for g in rotas} == {"CD → Loja A": 3, "Loja C → Loja A": 1}
    total = get(client, planner)["total"]["janela14"]
    assert (total["asi"], total["esi"], total["razao"], total["pctVendido"]) == (4, 4.0, 1.0, round(4 / 6, 4))


def test_a_store_manager_sees_only_routes_touching_its_store(client, history):
    manager = make_user(papel="gerente_loja", loja=history["a"])
    rotas = get(client, auth_headers(client, manager), "?agrupar=rota")
    assert [g["chave"] for g in rotas["grupos"]] == ["CD Cajamar → Loja A", "Loja A → Loja B"]
    assert rotas["total"]["transferencias"] == 3  # not CD → Loja B
    viewer = make_user(papel="visualizador")
    assert get(client, auth_headers(client, viewer))["total"]["transferencias"] == 4
    r = client.get(RESULTADO)
    assert r.status_code == 401


def test_bad_grouping_and_unknown_batch(client, history, planner):
    r = client.get(f"{RESULTADO}?agrupar=semana", headers=planner)
    assert r.status_code == 422
    assert any(item["loc"][-1] == "agrupar" for item in r.get_json()["detail"])
    r = client.get(f"{RESULTADO}?loteId=00000000-0000-0000-0000-000000000000", headers=planner)
    assert r.status_code == 404 and "detail" in r.get_json()
    r = client.get(f"{RESULTADO}?limite=0", headers=planner)
    assert r.status_code == 422


def test_no_executed_transfers(client, ctx, planner):
    body = get(client, planner)
    assert body["grupos"] == [] and body["total"]["transferencias"] == 0
    assert body["total"]["esi"] is None and body["total"]["janela14"]["razao"] is None


def test_cli_prints_the_table(runner, history):
    result = runner.invoke(args=["batches", "resultado", "--agrupar", "rota"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    row = next(line for line in lines if line.startswith("CD Cajamar → Loja A"))
    # transfers, units, ESI, ASI14, ASI28, % sold in 14 d, ASI/ESI in 14 d, windows
    assert row.split()[-8:] == ["2", "11", "4.8", "6", "9", "54.5%", "0.83", "completa"]
    assert any(
        line.startswith("Loja A → Loja B") and line.rstrip().endswith("aberta (8 d)") for line in lines
    )
    assert lines[-1].startswith("total")
    result = runner.invoke(args=["batches", "resultado", "--agrupar", "semana"])
    assert result.exit_code != 0 and "semana" in result.output


def test_generation_stores_the_prediction_the_justification_quotes(client, runner, ctx, planner):
    build_network()
    generate(runner)
    lote = client.get(f"{API}/lotes", headers=planner).get_json()[0]
    recs = client.get(f"{API}/lotes/{lote['id']}/recomendacoes", headers=planner).get_json()
    assert recs
    for rec in recs:
        quoted = re.search(r"deve vender cerca de ([\d,]+) un\. a mais", rec["justificativa"]).group(1)
        assert rec["vendaExtraEsperada"] > 0
        assert f"{rec['vendaExtraEsperada']:.1f}".replace(".", ",") == quoted


def test_learning_lowers_routes_and_categories_that_sell_less_than_predicted(client, ctx, planner):
    ref = today()
    d = lambda n: ref - timedelta(days=n)  # noqa: E731
    cd, a, b = make_loja(nome="CD", is_cd=True), make_loja(nome="Loja A"), make_loja(nome="Loja B")
    bota = make_produto(nome="Bota", marca="Marca A", categoria="Botas", tamanhos=("38", "39", "40"))
    sandalia = make_produto(nome="Sandália", marca="Marca B", categoria="Sandálias")
    lote = make_lote(d(30))

    def executed(produto, destino, tamanho, esi, day=25):
        return make_rec(
            lote,
            produto,
            cd,
            destino,
            tamanho=tamanho,
            quantidade=10,
            status="executada",
            executada_data=d(day + 1),
            estoque_destino=0,
            venda_extra_esperada=esi,
            **received(d(day), 10),
        )

    # Botas to Loja A: 20 units predicted, 2 sold. The open window (received 5 days ago) waits.
    executed(bota, a, "38", 10.0)
    executed(bota, a, "39", 10.0)
    executed(bota, a, "40", 10.0, day=5)
    sell(a, bota, "38", d(20), 2)
    # Sandálias to Loja B: 2 predicted, 10 sold; and one refusal on that route.
    executed(sandalia, b, "38", 2.0)
    sell(b, sandalia, "38", d(20), 10)
    refused = make_rec(lote, sandalia, cd, b, tamanho="39")
    assert client.post(f"{API}/recomendacoes/{refused.id}/recusar", headers=planner).status_code == 200

    body = client.get(f"{API}/metricas/aprendizado", headers=planner).get_json()
    rotas = {(r["origemId"], r["destinoId"]): r for r in body["rotas"]}
    bad = rotas[(str(cd.id), str(a.id))]
    assert (bad["transferenciasMedidas"], bad["esi"], bad["asi"], bad["razaoResultado"]) == (2, 20.0, 2, 0.1)
    # (2 + 20) / (20 + 20): sold a tenth of the prediction, shrunk by the prior; no refusals.
    assert (bad["fatorDecisoes"], bad["fatorResultado"], bad["fator"]) == (1.0, 0.55, 0.55)
    assert bad["ajustePercentual"] == 45.0
    good = rotas[(str(cd.id), str(b.id))]
    # (10 + 20) / (2 + 20) = 1.36 wins back the refusal's 1 − 0.5 × 1/4, up to 1 and no further.
    assert good["fatorDecisoes"] == 0.875 and good["fatorResultado"] == round(30 / 22, 4)
    assert good["fator"] == 1.0 and good["razaoResultado"] == 5.0
    categorias = {c["chave"]: c for c in body["categorias"]}
    assert categorias["Botas"]["fator"] == 0.55 and categorias["Sandálias"]["fator"] == 1.0
    # Brands learn from decisions only.
    marcas = {m["chave"]: m for m in body["marcas"]}
    assert marcas["Marca A"]["transferenciasMedidas"] == 0 and marcas["Marca A"]["fatorResultado"] == 1.0
    assert marcas["Marca B"]["fator"] == marcas["Marca B"]["fatorDecisoes"] == 0.875
    # Strongest penalty first, the outcome's included.
    assert body["rotas"][0]["destinoId"] == str(a.id)
