"""The four metrics, the history and the learning loop, checked against hand-computed numbers."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from services.clock import today
from tests.factories import (
    add_sales,
    auth_headers,
    make_loja,
    make_lote,
    make_produto,
    make_rec,
    make_user,
    set_stock,
)
from tests.stock.support import API
from tests.stock.test_batches import build_network, generate


@pytest.fixture
def planner(client, ctx):
    return auth_headers(client, make_user(papel="planejador", name="Paula Planejadora"))


@pytest.fixture
def net(ctx):
    cd = make_loja(nome="CD Cajamar", is_cd=True)
    a, b = make_loja(nome="Loja A"), make_loja(nome="Loja B")
    produto = make_produto(nome="Bota", marca="Marca A", categoria="Botas")
    outro = make_produto(nome="Sandália", marca="Marca B", categoria="Sandálias")
    return {"cd": cd, "a": a, "b": b, "produto": produto, "outro": outro}


def get(client, headers, path):
    r = client.get(f"{API}{path}", headers=headers)
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def act(client, headers, rec, acao):
    r = client.post(f"{API}/recomendacoes/{rec.id}/{acao}", headers=headers)
    assert r.status_code == 200, r.get_json()


def veto(client, headers, rec, motivo="Sem transporte"):
    r = client.post(
        f"{API}/lotes/{rec.lote_id}/recomendacoes/{rec.id}/vetar", headers=headers, json={"motivo": motivo}
    )
    assert r.status_code == 200, r.get_json()


def test_kpis_dashboard(client, net, planner):
    ref = today()
    old = make_lote(ref - timedelta(days=14))
    make_rec(old, net["produto"], net["cd"], net["a"], status="executada", quantidade=4)
    lote = make_lote(ref)
    p, cd, a, b = net["produto"], net["cd"], net["a"], net["b"]
    make_rec(lote, p, cd, a, quantidade=5, prioridade="alta")
    make_rec(lote, p, cd, b, quantidade=6, prioridade="media", tamanho="39")
    make_rec(lote, p, cd, a, quantidade=7, status="aprovada", tamanho="40")
    make_rec(lote, p, cd, b, quantidade=8, status="recusada")
    make_rec(lote, p, cd, b, quantidade=9, vetado=True, tamanho="37")
    # Risk: Loja A sold 30 units of size 38 in the 30-day window (1/day) and holds 3 (3 days of cover);
    # Loja B sold 30 of size 39 and holds 0 (a stock-out); Loja B's size 40 holds 20 (20 days: safe).
    set_stock(a, p, **{"38": 3})
    set_stock(b, p, **{"39": 0, "40": 20})
    add_sales(a, p, "38", [1] * 30, end=ref)
    add_sales(b, p, "39", [1] * 30, end=ref)
    add_sales(b, p, "40", [1] * 30, end=ref)
    # A CD's sales never count as risk.
    add_sales(cd, p, "38", [1] * 30, end=ref)

    body = get(client, planner, "/metricas/kpis-dashboard")
    assert body == {
        "loteAtualId": str(lote.id),
        "semanaAtual": lote.semana,
        "loteAtualStatus": "aberto",
        "pendentes": 2,
        "aprovadas": 1,
        "executadas": 1,
        "recusadas": 1,
        "vetadas": 1,
        "taxaAprovacao": 0.5,
        "itensLoteAtual": 3,
        "unidadesLoteAtual": 18,
        "unidadesPendentesLoteAtual": 11,
        "altaPrioridadePendentes": 1,
        "lojasEmRisco": 2,
        "tamanhosEmRisco": 2,
        "rupturas": 1,
        "riscoEm": ref.isoformat(),
        "periodoDias": 30,
    }


def test_kpis_risk_comes_from_the_newest_generation(client, runner, ctx, planner):
    # Four stores selling 2 a day of each size and holding 0, 1 and 0 units: 3 cells at risk
    # each, 2 of them stock-outs; the CD's stock never counts.
    first_day = date(2026, 11, 18)
    build_network(on=first_day, stores=4)
    generate(runner, first_day)
    body = get(client, planner, "/metricas/kpis-dashboard")
    assert (body["tamanhosEmRisco"], body["lojasEmRisco"], body["rupturas"]) == (12, 4, 8)
    assert body["riscoEm"] == first_day.isoformat()
    assert body["itensLoteAtual"] > 0 and body["loteAtualStatus"] == "aberto"


def test_kpis_with_no_data(client, ctx, planner):
    body = get(client, planner, "/metricas/kpis-dashboard")
    assert body["loteAtualId"] is None and body["taxaAprovacao"] is None
    assert body["pendentes"] == body["tamanhosEmRisco"] == 0


def test_validacao_counts_sales_since_execution(client, net, planner):
    ref = today()
    lote = make_lote(ref - timedelta(days=7))
    p, cd, a, b = net["produto"], net["cd"], net["a"], net["b"]
    sold = make_rec(lote, p, cd, a, quantidade=10, status="executada", executada_data=ref - timedelta(days=5))
    unsold = make_rec(
        lote, p, cd, b, quantidade=4, status="executada", executada_data=ref - timedelta(days=2)
    )
    make_rec(lote, p, cd, b, quantidade=6, status="aprovada", tamanho="39")
    # Loja A sells 2 a day of size 38 for 10 days: 5 of those days are after the execution.
    add_sales(a, p, "38", [2] * 10, end=ref)
    set_stock(a, p, **{"38": 1})
    body = get(client, planner, "/metricas/validacao")
    assert {k: v for k, v in body.items() if k != "itens"} == {
        "transferenciasExecutadas": 2,
        "unidadesTransferidas": 14,
        "unidadesVendidasDestino": 10,
        "sellThroughMedio": round(10 / 14, 4),
        "comVenda": 1,
        "semVenda": 1,
    }
    itens = {i["recomendacaoId"]: i for i in body["itens"]}
    assert itens[str(sold.id)]["vendidasDestino"] == 10
    assert itens[str(sold.id)]["sellThrough"] == 1.0
    assert itens[str(sold.id)]["estoqueDestinoAtual"] == 1
    assert itens[str(unsold.id)]["vendidasDestino"] == 0


def test_efetividade_semanal_per_week(client, net, planner):
    ref = today()
    p, cd, a, b = net["produto"], net["cd"], net["a"], net["b"]
    w1 = make_lote(ref - timedelta(days=14))
    w2 = make_lote(ref - timedelta(days=7))
    make_rec(
        w1,
        p,
        cd,
        a,
        quantidade=5,
        status="executada",
        dias_ate_ruptura=2,
        executada_data=ref - timedelta(days=10),
    )
    make_rec(
        w1,
        p,
        cd,
        b,
        quantidade=3,
        status="executada",
        dias_ate_ruptura=20,
        executada_data=ref - timedelta(days=10),
    )
    make_rec(w1, p, cd, b, status="recusada", tamanho="39")
    make_rec(w1, p, cd, a, vetado=True, tamanho="39")
    make_rec(w2, p, cd, a, status="aprovada")
    make_rec(w2, p, cd, b)
    add_sales(a, p, "38", [1] * 5, end=ref)
    add_sales(b, p, "38", [1] * 5, end=ref)
    body = get(client, planner, "/metricas/efetividade-semanal")
    assert [s["semana"] for s in body["semanas"]] == [w2.semana, w1.semana]
    first = body["semanas"][1]
    assert first == {
        "semana": w1.semana,
        "loteId": str(w1.id),
        "geradas": 4,
        "aprovadas": 2,
        "executadas": 2,
        "recusadas": 1,
        "vetadas": 1,
        "pendentes": 0,
        "unidadesMovidas": 8,
        # Only the one whose destination had <= 7 days of cover and then sold.
        "rupturasEvitadas": 1,
        "taxaAprovacao": 0.5,
    }
    second = body["semanas"][0]
    assert (second["geradas"], second["aprovadas"], second["pendentes"], second["unidadesMovidas"]) == (
        2,
        1,
        1,
        0,
    )


def test_aprendizado_shows_the_factor_of_each_group(client, net, planner):
    p, outro, cd, a, b = net["produto"], net["outro"], net["cd"], net["a"], net["b"]
    lote = make_lote(today() - timedelta(days=3))
    refused = [make_rec(lote, p, cd, a, tamanho=t) for t in ("37", "38")]
    accepted = make_rec(lote, p, cd, a, tamanho="39")
    vetoed = make_rec(lote, outro, cd, b)
    make_rec(lote, outro, cd, b, tamanho="39")  # still pending: not a decision
    for rec in refused:
        act(client, planner, rec, "recusar")
    act(client, planner, accepted, "aprovar")
    veto(client, planner, vetoed)

    body = get(client, planner, "/metricas/aprendizado")
    assert body["decididas"] == 4 and body["taxaAceitacao"] == 0.25 and body["janelaDias"] == 182
    rotas = {(r["origemId"], r["destinoId"]): r for r in body["rotas"]}
    cd_a = rotas[(str(cd.id), str(a.id))]
    assert cd_a["chave"] == "CD Cajamar → Loja A"
    assert (cd_a["decididas"], cd_a["aceitas"], cd_a["rejeitadas"]) == (3, 1, 2)
    assert cd_a["fator"] == pytest.approx(1 - 0.5 * 2 / 5, abs=1e-4) and cd_a["ajustePercentual"] == 20.0
    cd_b = rotas[(str(cd.id), str(b.id))]
    assert cd_b["fator"] == pytest.approx(1 - 0.5 * 1 / 3, abs=1e-4)
    marcas = {m["chave"]: m for m in body["marcas"]}
    assert marcas["Marca A"]["taxaAceitacao"] == round(1 / 3, 4)
    assert marcas["Marca B"]["rejeitadas"] == 1
    # Strongest penalty first.
    assert [m["chave"] for m in body["categorias"]] == ["Botas", "Sandálias"]


def test_refusals_lower_the_scores_of_the_next_batch(client, runner, ctx, planner):
    first_day = date(2026, 11, 18)
    net = build_network(on=first_day + timedelta(days=7), stores=3)
    generate(runner, first_day)
    lote = get(client, planner, "/lotes")[0]
    recs = get(client, planner, f"/lotes/{lote['id']}/recomendacoes")
    target = str(net["lojas"][0].id)
    before = {(r["lojaDestinoId"], r["tamanho"]): r["score"] for r in recs}
    for r in recs:
        if r["lojaDestinoId"] == target:
            assert client.post(f"{API}/recomendacoes/{r['id']}/recusar", headers=planner).status_code == 200

    aprendizado = get(client, planner, "/metricas/aprendizado")
    rota = next(x for x in aprendizado["rotas"] if x["destinoId"] == target)
    assert rota["fator"] < 1

    # Same stock, same daily sales a week later: only the refused route's scores change.
    generate(runner, first_day + timedelta(days=7))
    lotes = get(client, planner, "/lotes")
    assert lotes[0]["id"] != lote["id"]
    after = {
        (r["lojaDestinoId"], r["tamanho"]): r["score"]
        for r in get(client, planner, f"/lotes/{lotes[0]['id']}/recomendacoes")
    }
    # The engine multiplies the route, brand and category factors the metric shows.
    marca = next(x for x in aprendizado["marcas"] if x["chave"] == "Marca A")["fator"]
    categoria = next(x for x in aprendizado["categorias"] if x["chave"] == "Tênis")["fator"]
    assert marca < 1 and categoria < 1
    refused = [k for k in before if k[0] == target]
    others = [k for k in before if k[0] != target]
    assert refused and others and set(before) == set(after)
    for k in refused:
        assert after[k] == pytest.approx(before[k] * rota["fator"] * marca * categoria, abs=1)
    for k in others:
        assert after[k] == pytest.approx(before[k] * marca * categoria, abs=1)
    assert max(after[k] for k in refused) < min(after[k] for k in others)


def test_historico_filters_and_tells_what_happened(client, net, planner):
    ref = today()
    lote = make_lote(ref)
    p, cd, a, b = net["produto"], net["cd"], net["a"], net["b"]
    exe = make_rec(lote, p, cd, a, quantidade=6)
    ref_ = make_rec(lote, p, cd, b, tamanho="39")
    vet = make_rec(lote, p, cd, b, tamanho="40")
    make_rec(lote, p, cd, a, tamanho="39")  # pending: not history
    act(client, planner, exe, "aprovar")
    act(client, planner, exe, "executar")
    act(client, planner, ref_, "recusar")
    veto(client, planner, vet, "Loja em reforma")
    add_sales(a, p, "38", [2], end=ref + timedelta(days=1))  # 2 sold today, after the execution

    hist = get(client, planner, "/historico")
    assert [h["id"] for h in hist] == [str(vet.id), str(ref_.id), str(exe.id)]
    by_id = {h["id"]: h for h in hist}
    h = by_id[str(exe.id)]
    assert h["status"] == "executada" and h["usuario"] == "Paula Planejadora"
    assert h["produto"] == f"Bota {p.cor} 38" and h["origem"] == "CD Cajamar" and h["destino"] == "Loja A"
    assert h["qtd"] == 6 and h["data"] == ref.isoformat()
    assert h["resultadoDetalhe"]["vendidasDestino"] == 2 and h["resultadoDetalhe"]["sellThrough"] == round(
        2 / 6, 4
    )
    assert "2 de 6 unidades vendidas" in h["resultado"]
    assert by_id[str(vet.id)]["status"] == "vetada" and "Loja em reforma" in by_id[str(vet.id)]["resultado"]
    assert [x["id"] for x in get(client, planner, "/historico?status=recusada")] == [str(ref_.id)]
    assert [x["id"] for x in get(client, planner, "/historico?status=vetada")] == [str(vet.id)]
    assert get(client, planner, "/historico?status=aprovada") == []
    bad = client.get(f"{API}/historico?status=pendente", headers=planner)
    assert bad.status_code == 422 and bad.get_json()["detail"][0]["loc"] == ["query", "status"]


def test_metric_schemas_are_documented(client):
    spec = client.get("/api/v1/openapi.json").get_json()
    schemas = spec["components"]["schemas"]
    for name in (
        "KpisDashboard",
        "Validacao",
        "ValidacaoItem",
        "EfetividadeSemanal",
        "SemanaEfetividade",
        "Aprendizado",
        "FatorAprendizado",
        "ResultadoDetalhe",
    ):
        assert name in schemas
        undocumented = [k for k, f in schemas[name]["properties"].items() if not f.get("description")]
        assert undocumented == [], (name, undocumented)
    paths = spec["paths"]
    ok = paths["/api/v1/remanejamento/metricas/kpis-dashboard"]["get"]["responses"]["200"]
    assert "KpisDashboard" in str(ok)
