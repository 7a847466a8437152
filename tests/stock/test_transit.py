"""Stock in transit: receipt, a store's in-transit list, the next generations' accounting,
the stock import that closes a transfer, and the national campaign."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import select

from extensions import db
from models.stock_batches import AcaoRecomendacao
from services.clock import today
from tests.factories import (
    add_sales,
    auth_headers,
    make_campanha,
    make_loja,
    make_lote,
    make_produto,
    make_rec,
    make_user,
    set_stock,
)
from tests.stock.support import API

ON = date(2026, 11, 18)  # a Wednesday of 2026-W47


@pytest.fixture
def net(ctx):
    cd = make_loja(nome="CD Cajamar", codigo="CD01", is_cd=True)
    a = make_loja(nome="Loja Paulista", codigo="SP01")
    b = make_loja(nome="Loja Moema", codigo="SP02")
    c = make_loja(nome="Loja Curitiba", codigo="PR01", cidade="Curitiba")
    produto = make_produto(nome="Tênis Corrida", sku="TC-01", tamanhos=("38", "39", "40"))
    return {"cd": cd, "a": a, "b": b, "c": c, "produto": produto, "lote": make_lote()}


@pytest.fixture
def planner(client, ctx):
    return auth_headers(client, make_user(papel="planejador", name="Paula Planejadora"))


def receber(client, rid, headers, quantidade):
    body = {} if quantidade is None else {"quantidadeRecebida": quantidade}
    return client.post(f"{API}/recomendacoes/{rid}/receber", headers=headers, json=body)


def em_transito(client, loja, headers):
    return client.get(f"/api/v1/lojas/{loja.id}/em-transito", headers=headers)


# --- receipt -----------------------------------------------------------------------------------


def test_receipt_stores_the_quantity_and_logs_who_and_when(client, net, planner):
    rec = make_rec(net["lote"], net["produto"], net["cd"], net["a"], status="executada", quantidade=6)
    r = receber(client, rec.id, planner, 5)
    assert r.status_code == 200, r.get_json()
    body = r.get_json()
    assert body["quantidadeRecebida"] == 5 and body["status"] == "executada"
    assert body["recebidaEm"].endswith("Z")
    shown = client.get(f"{API}/recomendacoes/{rec.id}", headers=planner).get_json()
    assert shown["quantidadeRecebida"] == 5 and shown["recebidaEm"] == body["recebidaEm"]
    log = db.session.scalars(select(AcaoRecomendacao).where(AcaoRecomendacao.recomendacao_id == rec.id)).all()
    assert [(a.acao, a.usuario_nome, a.status_novo) for a in log] == [
        ("receber", "Paula Planejadora", "executada")
    ]
    # Received: no longer in transit at either end.
    assert em_transito(client, net["a"], planner).get_json()["itens"] == []
    assert em_transito(client, net["cd"], planner).get_json()["itens"] == []


def test_receipt_answers_on_the_short_path_too(client, net, planner):
    rec = make_rec(net["lote"], net["produto"], net["cd"], net["a"], status="executada", quantidade=6)
    r = client.post(
        f"/api/v1/recomendacoes/{rec.id}/receber", headers=planner, json={"quantidadeRecebida": 6}
    )
    assert r.status_code == 200 and r.get_json()["quantidadeRecebida"] == 6
    assert receber(client, rec.id, planner, 6).status_code == 409


def test_receipt_of_nothing_is_allowed(client, net, planner):
    rec = make_rec(net["lote"], net["produto"], net["cd"], net["a"], status="executada", quantidade=4)
    r = receber(client, rec.id, planner, 0)
    assert r.status_code == 200 and r.get_json()["quantidadeRecebida"] == 0


@pytest.mark.parametrize("status", ["pendente", "aprovada", "recusada"])
def test_receipt_of_a_transfer_not_executed_is_409(client, net, planner, status):
    rec = make_rec(net["lote"], net["produto"], net["cd"], net["a"], status=status)
    r = receber(client, rec.id, planner, 1)
    assert r.status_code == 409 and isinstance(r.get_json()["detail"], str)
    assert (
        client.get(f"{API}/recomendacoes/{rec.id}", headers=planner).get_json()["quantidadeRecebida"] is None
    )


def test_a_second_receipt_is_409_and_keeps_the_first(client, net, planner):
    rec = make_rec(net["lote"], net["produto"], net["cd"], net["a"], status="executada", quantidade=6)
    assert receber(client, rec.id, planner, 6).status_code == 200
    r = receber(client, rec.id, planner, 3)
    assert r.status_code == 409 and "recebida" in r.get_json()["detail"]
    assert client.get(f"{API}/recomendacoes/{rec.id}", headers=planner).get_json()["quantidadeRecebida"] == 6


@pytest.mark.parametrize("quantidade", [7, -1, "3", 2.5, True, None])
def test_a_bad_quantity_is_422_and_changes_nothing(client, net, planner, quantidade):
    rec = make_rec(net["lote"], net["produto"], net["cd"], net["a"], status="executada", quantidade=6)
    r = receber(client, rec.id, planner, quantidade)
    assert r.status_code == 422, r.get_json()
    detail = r.get_json()["detail"]
    assert isinstance(detail, list) and detail[0]["loc"][-1] == "quantidadeRecebida"
    assert client.get(f"{API}/recomendacoes/{rec.id}", headers=planner).get_json()["recebidaEm"] is None


def test_unknown_recommendation_is_404(client, net, planner):
    r = receber(client, "00000000-0000-4000-8000-000000000000", planner, 1)
    assert r.status_code == 404 and isinstance(r.get_json()["detail"], str)


def test_receipt_roles(client, net):
    lote, produto = net["lote"], net["produto"]

    def executed():
        return make_rec(lote, produto, net["b"], net["a"], status="executada", quantidade=3)

    destination = auth_headers(client, make_user(papel="gerente_loja", loja=net["a"]))
    origin = auth_headers(client, make_user(papel="gerente_loja", loja=net["b"]))
    elsewhere = auth_headers(client, make_user(papel="gerente_loja", loja=net["c"]))
    viewer = auth_headers(client, make_user(papel="visualizador"))
    admin = auth_headers(client, make_user(papel="admin"))

    rec = executed()
    # The origin's manager sees the transfer but does not receive it; another store's
    # manager does not see it at all; a reader may not act.
    assert receber(client, rec.id, origin, 3).status_code == 403
    assert receber(client, rec.id, elsewhere, 3).status_code == 404
    assert receber(client, rec.id, viewer, 3).status_code == 403
    assert receber(client, rec.id, destination, 3).status_code == 200
    assert receber(client, executed().id, admin, 2).status_code == 200


# --- a store's list ----------------------------------------------------------------------------


def test_store_lists_transfers_in_transit_with_age_and_alert(client, app, net, planner):
    lote, produto = net["lote"], net["produto"]
    ref = today()
    late = make_rec(
        lote,
        produto,
        net["cd"],
        net["a"],
        tamanho="38",
        status="executada",
        executada_data=ref - timedelta(days=8),
    )
    on_time = make_rec(
        lote,
        produto,
        net["b"],
        net["a"],
        tamanho="39",
        status="executada",
        executada_data=ref - timedelta(days=7),
    )
    to_send = make_rec(lote, produto, net["a"], net["c"], tamanho="40", status="aprovada")
    to_send.ultima_acao_em = datetime.now(UTC)  # approved just now: in transit since today
    db.session.flush()
    # Neither pending, refused, vetoed nor received ones are in transit.
    make_rec(lote, produto, net["cd"], net["a"], tamanho="40", status="pendente")
    make_rec(lote, produto, net["cd"], net["a"], tamanho="40", status="recusada")
    make_rec(lote, produto, net["cd"], net["a"], tamanho="40", status="aprovada", vetado=True)
    received = make_rec(lote, produto, net["cd"], net["a"], tamanho="40", status="executada")
    assert receber(client, received.id, planner, 5).status_code == 200

    r = em_transito(client, net["a"], planner)
    assert r.status_code == 200
    body = r.get_json()
    assert body["lojaId"] == str(net["a"].id) and body["diasAlerta"] == app.config["TRANSIT_ALERT_DAYS"] == 7
    got = [(i["id"], i["sentido"], i["status"], i["idadeDias"], i["atrasada"]) for i in body["itens"]]
    assert got == [
        (str(late.id), "entrada", "executada", 8, True),
        (str(on_time.id), "entrada", "executada", 7, False),
        (str(to_send.id), "saida", "aprovada", 0, False),
    ]
    first = body["itens"][0]
    assert first["origemNome"] == "CD Cajamar" and first["destinoNome"] == "Loja Paulista"
    assert first["produtoNome"] == "Tênis Corrida" and first["sku"] == "TC-01" and first["quantidade"] == 5
    assert first["desde"] == (ref - timedelta(days=8)).isoformat()


def test_alert_days_come_from_the_configuration(client, app, net, planner, monkeypatch):
    make_rec(
        net["lote"],
        net["produto"],
        net["cd"],
        net["a"],
        status="executada",
        executada_data=today() - timedelta(days=3),
    )
    monkeypatch.setitem(app.config, "TRANSIT_ALERT_DAYS", 2)
    body = em_transito(client, net["a"], planner).get_json()
    assert body["diasAlerta"] == 2 and body["itens"][0]["atrasada"] is True


def received_into_a(net, origem: str, lead: int):
    """A transfer into Loja Paulista executed 30 days ago and received ``lead`` days later."""
    ref = today()
    return make_rec(
        net["lote"],
        net["produto"],
        net[origem],
        net["a"],
        status="executada",
        executada_data=ref - timedelta(days=30),
        recebida_em=datetime.now(UTC),
        recebida_data=ref - timedelta(days=30 - lead),
        quantidade_recebida=5,
    )


def test_an_executed_transfer_carries_its_expected_arrival_from_its_routes_receipts(client, net, planner):
    """The CD's last three transfers to Loja Paulista arrived 2, 3 and 5 days after they left:
    one it sent yesterday is expected in 3 days. Loja Moema's route has one receipt (10 days),
    too few: its transfer is expected after the median of all the store's routes (4 days, 3.5
    rounded up). One only approved has left nowhere yet; a store whose routes never received
    three transfers has no expected arrival to give."""
    lote, produto, ref = net["lote"], net["produto"], today()
    for lead, origem in ((2, "cd"), (3, "cd"), (5, "cd"), (10, "b")):
        received_into_a(net, origem, lead)
    from_cd = make_rec(
        lote, produto, net["cd"], net["a"], status="executada", executada_data=ref - timedelta(days=1)
    )
    from_b = make_rec(
        lote, produto, net["b"], net["a"], status="executada", executada_data=ref - timedelta(days=2)
    )
    approved = make_rec(lote, produto, net["cd"], net["a"], tamanho="40", status="aprovada")
    make_rec(lote, produto, net["cd"], net["c"], status="executada", executada_data=ref)
    itens = {
        i["id"]: i["previsaoChegada"] for i in em_transito(client, net["a"], planner).get_json()["itens"]
    }
    assert itens == {
        str(from_cd.id): (ref + timedelta(days=2)).isoformat(),
        str(from_b.id): (ref + timedelta(days=2)).isoformat(),
        str(approved.id): None,
    }
    assert [i["previsaoChegada"] for i in em_transito(client, net["c"], planner).get_json()["itens"]] == [
        None
    ]


def test_an_executed_transfer_is_late_once_older_than_its_route_usually_takes(client, runner, net, planner):
    """The CD's transfers to Loja Paulista arrived 2, 2 and 3 days after they left: those sent 4
    and 6 days ago are late, though the default alert is 7 days; one sent 3 days ago is not (9 in 10
    took at most 3). Loja Moema's took 9, 10 and 10 days: one sent 8 days ago is on its way, not
    late. Loja Curitiba's route has two receipts, too few: its transfer keeps the 7 days. The
    delivery run finds the same two late transfers."""
    lote, produto, ref = net["lote"], net["produto"], today()
    for lead, origem in ((2, "cd"), (2, "cd"), (3, "cd"), (9, "b"), (10, "b"), (10, "b"), (1, "c"), (1, "c")):
        received_into_a(net, origem, lead)

    def sent(origem: str, days: int, tamanho: str):
        rec = make_rec(
            lote,
            produto,
            net[origem],
            net["a"],
            tamanho=tamanho,
            status="executada",
            executada_data=ref - timedelta(days=days),
        )
        rec.ultima_acao_em = datetime.now(UTC) - timedelta(days=days)
        return rec

    late, later = sent("cd", 4, "39"), sent("cd", 6, "38")
    on_time, slow, thin = sent("cd", 3, "40"), sent("b", 8, "39"), sent("c", 5, "39")
    db.session.flush()
    body = em_transito(client, net["a"], planner).get_json()
    assert body["diasAlerta"] == 7
    assert {i["id"]: (i["diasAlerta"], i["atrasada"]) for i in body["itens"]} == {
        str(late.id): (3, True),
        str(later.id): (3, True),
        str(on_time.id): (3, False),
        str(slow.id): (10, False),
        str(thin.id): (7, False),
    }
    result = runner.invoke(args=["batches", "send-notifications"])
    assert result.exit_code == 0, result.output
    assert int(re.findall(r"\d+", result.output)[-1]) == 2  # (messages, sent, skipped, retried, failed, late)


def test_store_list_visibility(client, net):
    make_rec(net["lote"], net["produto"], net["cd"], net["a"], status="executada")
    own = auth_headers(client, make_user(papel="gerente_loja", loja=net["a"]))
    other = auth_headers(client, make_user(papel="gerente_loja", loja=net["b"]))
    viewer = auth_headers(client, make_user(papel="visualizador"))
    assert len(em_transito(client, net["a"], own).get_json()["itens"]) == 1
    assert len(em_transito(client, net["a"], viewer).get_json()["itens"]) == 1
    r = em_transito(client, net["a"], other)
    assert r.status_code == 404 and isinstance(r.get_json()["detail"], str)
    missing = client.get("/api/v1/lojas/00000000-0000-4000-8000-000000000000/em-transito", headers=viewer)
    assert missing.status_code == 404


# --- the next generations ----------------------------------------------------------------------


def build_network(*, sales_until: date, cd_38: int = 40):
    """A CD and four stores out of stock that sell one unit a day of each size: the CD's size 38
    is scarce, its other sizes plentiful."""
    from services.stock.rules import get_rules

    # Lots large enough that one week covers a cell's whole horizon.
    get_rules().qtd_maxima = 60
    cd = make_loja(nome="CD Cajamar", codigo="CD01", is_cd=True, lat=-23.35, lng=-46.87)
    lojas = [
        make_loja(nome=f"Loja {i}", codigo=f"SP{i:02d}", lat=-23.55 + i * 0.01, lng=-46.63 - i * 0.01)
        for i in range(4)
    ]
    produto = make_produto(nome="Tênis Corrida", sku="TC-01", tamanhos=("38", "39", "40"))
    set_stock(cd, produto, **{"38": cd_38, "39": 300, "40": 300})
    for loja in lojas:
        set_stock(loja, produto, **{"38": 0, "39": 0, "40": 0})
        for tamanho in ("38", "39", "40"):
            add_sales(loja, produto, tamanho, [1] * 40, end=sales_until)
    return {"cd": cd, "lojas": lojas, "produto": produto}


def generate(runner, on: date):
    result = runner.invoke(args=["batches", "generate", "--date", on.isoformat()])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result


def batch_recs(client, headers, on: date) -> list[dict]:
    from services.stock.batches import iso_week

    lote = next(
        x for x in client.get(f"{API}/lotes", headers=headers).get_json() if x["semana"] == iso_week(on)[0]
    )
    return client.get(f"{API}/lotes/{lote['id']}/recomendacoes", headers=headers).get_json()


def decide_all(client, headers, recs, *acoes):
    for rec in recs:
        for acao in acoes:
            assert client.post(f"{API}/recomendacoes/{rec['id']}/{acao}", headers=headers).status_code == 200


def cells(recs) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for r in recs:
        key = (r["lojaDestinoId"], r["tamanho"])
        out[key] = out.get(key, 0) + r["quantidade"]
    return out


def test_week_two_neither_resends_nor_overdraws(client, runner, ctx, planner, tmp_path):
    """Units in transit count as on the destination's shelf and gone from the origin: week 2
    proposes exactly what it would once the goods arrived, and takes nothing already committed."""
    week2 = ON + timedelta(days=7)
    network = build_network(sales_until=week2)
    generate(runner, ON)
    week1 = batch_recs(client, planner, ON)
    assert {r["tamanho"] for r in week1} == {"38", "39", "40"}
    assert sum(r["quantidade"] for r in week1 if r["tamanho"] == "38") == 40, "size 38 takes the whole CD"
    decide_all(client, planner, week1, "aprovar", "executar")

    generate(runner, week2)  # no stock load came in between
    in_transit = batch_recs(client, planner, week2)
    cd = str(network["cd"].id)
    assert not [r for r in in_transit if r["origemId"] == cd and r["tamanho"] == "38"], (
        "the CD's 38 is committed"
    )
    sent = cells(week1)
    for rec in in_transit:
        assert rec["quantidade"] < sent[(rec["lojaDestinoId"], rec["tamanho"])], "re-sends the same goods"
        if rec["origemId"] == cd:  # what the origin shows is its stock after what is in transit
            assert rec["estoqueOrigem"] == 300 - sum(q for (_, t), q in sent.items() if t == rec["tamanho"])

    # The goods arrive and a stock load shows them: it closes every transfer, and the batch
    # proposes the same as while they were on their way.
    lines = ["loja,sku,tamanho,qtd"]
    for loja in network["lojas"]:
        lines += [f"{loja.codigo},TC-01,{t},{sent.get((str(loja.id), t), 0)}" for t in ("38", "39", "40")]
    lines += [
        f"CD01,TC-01,{t},{(40 if t == '38' else 300) - sum(q for (_, s), q in sent.items() if s == t)}"
        for t in ("38", "39", "40")
    ]
    path = tmp_path / "stock.csv"
    path.write_text("\n".join(lines) + "\n")
    result = runner.invoke(args=["import", "stock", str(path)])
    assert f"{len(week1)} transfer(s) in transit closed as received" in result.output, result.output
    generate(runner, week2)
    arrived = batch_recs(client, planner, week2)
    assert cells(arrived) == cells(in_transit)
    assert cells(in_transit), "week 2 tops the cells up a little: the comparison means something"


def test_regenerating_the_week_does_not_count_its_approved_ones_twice(client, runner, ctx, planner):
    network = build_network(sales_until=ON)
    generate(runner, ON)
    first = batch_recs(client, planner, ON)
    approved = [r for r in first if r["tamanho"] == "38"]
    assert sum(r["quantidade"] for r in approved) == 40, "every unit of the CD's 38"
    decide_all(client, planner, approved, "aprovar")
    # Another CD now has plenty of 38: the stores' approved units still cover them.
    other_cd = make_loja(nome="CD Extrema", codigo="CD02", is_cd=True, lat=-22.85, lng=-46.32)
    set_stock(other_cd, network["produto"], **{"38": 400})
    generate(runner, ON)
    after = batch_recs(client, planner, ON)
    # The approved ones are kept as they were. The new CD only tops the stores' 38 up: they
    # hold the approved units already, so each gets less than a store holding none (its 39).
    kept = [r for r in after if r["tamanho"] == "38" and r["status"] == "aprovada"]
    assert sorted(r["id"] for r in kept) == sorted(r["id"] for r in approved)
    empty = cells(r for r in after if r["tamanho"] == "39")
    topped = cells(r for r in after if r["tamanho"] == "38" and r["status"] == "pendente")
    for (loja, _), units in topped.items():
        assert units < empty[(loja, "39")], "the approved units are not counted at the destination"
    # The other sizes are proposed again to every store.
    for tamanho in ("39", "40"):
        assert {r["lojaDestinoId"] for r in after if r["tamanho"] == tamanho} == {
            str(loja.id) for loja in network["lojas"]
        }


# --- the stock import that shows the goods arrived ---------------------------------------------


def test_a_stock_load_showing_the_goods_closes_the_transfer(client, runner, net, planner, tmp_path):
    lote, produto, a = net["lote"], net["produto"], net["a"]
    set_stock(a, produto, **{"38": 1, "39": 1, "40": 2})
    older = make_rec(lote, produto, net["cd"], a, tamanho="38", quantidade=5, status="executada")
    newer = make_rec(lote, produto, net["b"], a, tamanho="38", quantidade=4, status="executada")
    short = make_rec(lote, produto, net["cd"], a, tamanho="39", quantidade=5, status="executada")
    approved = make_rec(lote, produto, net["cd"], a, tamanho="40", quantidade=3, status="aprovada")
    elsewhere = make_rec(lote, produto, net["cd"], net["c"], tamanho="38", quantidade=3, status="executada")
    older.executada_em = datetime.now(UTC) - timedelta(days=3)
    newer.executada_em = datetime.now(UTC) - timedelta(days=1)
    db.session.flush()
    # 38 rose by 7: the older transfer (5) is covered, the newer (4) is not. 39 rose by 3 of 5
    # (sales may hide it: stays open). 40 is only approved. Curitiba is not in the file.
    path = tmp_path / "stock.csv"
    path.write_text("loja,sku,tamanho,qtd\nSP01,TC-01,38,8\nSP01,TC-01,39,4\nSP01,TC-01,40,9\n")
    result = runner.invoke(args=["import", "stock", str(path)])
    assert result.exit_code == 0, result.output
    assert "1 transfer(s) in transit closed as received" in result.output

    def shown(rec):
        return client.get(f"{API}/recomendacoes/{rec.id}", headers=planner).get_json()

    assert shown(older)["quantidadeRecebida"] == 5 and shown(older)["recebidaEm"]
    for rec in (newer, short, approved, elsewhere):
        assert shown(rec)["recebidaEm"] is None
    log = db.session.scalars(
        select(AcaoRecomendacao).where(AcaoRecomendacao.recomendacao_id == older.id)
    ).one()
    assert log.acao == "receber" and log.usuario_nome == "Importação de estoque"
    listed = {i["id"] for i in em_transito(client, a, planner).get_json()["itens"]}
    assert listed == {str(newer.id), str(short.id), str(approved.id)}

    # The same file again changes nothing; a later load with the rest closes the newer one.
    result = runner.invoke(args=["import", "stock", str(path)])
    assert "closed as received" not in result.output
    path.write_text("loja,sku,tamanho,qtd\nSP01,TC-01,38,12\nSP01,TC-01,39,4\nSP01,TC-01,40,9\n")
    assert "1 transfer(s) in transit closed" in runner.invoke(args=["import", "stock", str(path)]).output
    assert shown(newer)["quantidadeRecebida"] == 4


# --- the national campaign ---------------------------------------------------------------------


def test_a_national_campaign_locks_stores_not_cds(client, runner, ctx, planner):
    network = build_network(sales_until=ON)
    # A store that could give, were its stock not locked by the campaign.
    rich = make_loja(nome="Loja Rica", codigo="SP99", lat=-23.56, lng=-46.64)
    set_stock(rich, network["produto"], **{"38": 200, "39": 200, "40": 200})
    make_campanha(network["produto"], inicio=ON - timedelta(days=3), fim=ON + timedelta(days=10))
    generate(runner, ON)
    recs = batch_recs(client, planner, ON)
    assert recs, "a product on national campaign still gets recommendations from a CD"
    assert {r["origemId"] for r in recs} == {str(network["cd"].id)}
    assert all(r["emCampanha"] for r in recs)


def test_a_cds_cell_is_not_in_a_national_campaign(client, net, planner):
    make_campanha(net["produto"], inicio=today() - timedelta(days=1), fim=today() + timedelta(days=5))

    def flag(loja):
        query = f"lojaId={loja.id}&produtoId={net['produto'].id}&tamanho=38"
        return client.get(f"/api/v1/estoque/cell?{query}", headers=planner).get_json()["emCampanha"]

    assert flag(net["a"]) is True and flag(net["cd"]) is False
    make_campanha(net["produto"], loja=net["cd"], inicio=today(), fim=today())
    assert flag(net["cd"]) is True, "a campaign named at the CD still is one"
