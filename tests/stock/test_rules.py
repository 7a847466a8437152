"""Rules and cadence: validation, permissions, and each rule's effect on a generated batch."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import delete

from extensions import db
from models.stock import Venda
from tests.factories import (
    add_sales,
    auth_headers,
    make_campanha,
    make_loja,
    make_produto,
    make_user,
    set_stock,
)
from tests.stock.support import API
from tests.stock.test_batches import ON, build_network, generate

DEFAULTS = {
    "priorizarCd": True,
    "qtdMinima": 3,
    "periodo": "30",
    "pesoDistancia": 40,
    "pesoGiro": 35,
    "pesoEstoque": 25,
    "bloqueioCampanha": True,
    "qtdMaxima": 15,
    "lojasBloqueadas": [],
    "marcasBloqueadas": [],
    "custoEnvio": 300,
    "custoKm": 1,
    "ganhoMinimo": 150,
    "projetoOperacoes": None,
}


@pytest.fixture
def admin(client, ctx):
    return auth_headers(client, make_user(papel="admin"))


@pytest.fixture
def planner(client, ctx):
    return auth_headers(client, make_user(papel="planejador"))


def put_rules(client, headers, **fields):
    r = client.put(f"{API}/regras", headers=headers, json=fields)
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def batch_recs(client, headers):
    lote = client.get(f"{API}/lotes", headers=headers).get_json()[0]
    return client.get(f"{API}/lotes/{lote['id']}/recomendacoes", headers=headers).get_json()


# --- reading, replacing, permissions ---------------------------------------------------------


def test_defaults_then_replace_then_partial_put_resets(client, admin, planner):
    assert client.get(f"{API}/regras", headers=planner).get_json() == DEFAULTS
    body = put_rules(
        client, admin, qtdMinima=2, qtdMaxima=9, periodo="14", marcasBloqueadas=["X", " X ", "Y"]
    )
    assert body["qtdMinima"] == 2 and body["periodo"] == "14"
    assert body["marcasBloqueadas"] == ["X", "Y"]
    assert client.get(f"{API}/regras", headers=planner).get_json() == body
    # PUT replaces: what is left out takes the documented default again.
    assert put_rules(client, admin, pesoGiro=10) == {**DEFAULTS, "pesoGiro": 10}


def test_only_admin_changes_rules_and_cadence(client, ctx, planner):
    assert client.put(f"{API}/regras", headers=planner, json={}).status_code == 403
    assert client.put(f"{API}/config/cadence", headers=planner, json={"cadence": "diaria"}).status_code == 403
    gerente = auth_headers(client, make_user(papel="gerente_loja", loja=make_loja()))
    assert client.put(f"{API}/regras", headers=gerente, json={}).status_code == 403
    assert client.get(f"{API}/regras").status_code == 401


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"pesoDistancia": 101}, ["body", "pesoDistancia"]),
        ({"pesoGiro": -1}, ["body", "pesoGiro"]),
        ({"pesoEstoque": 12.5}, ["body", "pesoEstoque"]),
        ({"pesoEstoque": "20"}, ["body", "pesoEstoque"]),
        ({"qtdMinima": 0}, ["body", "qtdMinima"]),
        ({"qtdMaxima": 0}, ["body", "qtdMaxima"]),
        ({"qtdMinima": 10, "qtdMaxima": 5}, ["body", "qtdMinima"]),
        ({"periodo": "45"}, ["body", "periodo"]),
        ({"periodo": 30}, ["body", "periodo"]),
        ({"priorizarCd": "talvez"}, ["body", "priorizarCd"]),
        ({"lojasBloqueadas": ["nao-e-uuid"]}, ["body", "lojasBloqueadas", 0]),
        ({"lojasBloqueadas": [str(uuid.uuid4())]}, ["body", "lojasBloqueadas", 0]),
        ({"lojasBloqueadas": "abc"}, ["body", "lojasBloqueadas"]),
        ({"marcasBloqueadas": [""]}, ["body", "marcasBloqueadas", 0]),
        ({"pesoDistancia": 0, "pesoGiro": 0, "pesoEstoque": 0}, ["body", "pesoDistancia"]),
        ({"custoEnvio": -1}, ["body", "custoEnvio"]),
        ({"custoEnvio": 100_001}, ["body", "custoEnvio"]),
        ({"custoEnvio": 0.5}, ["body", "custoEnvio"]),
        ({"custoEnvio": "300"}, ["body", "custoEnvio"]),
        ({"custoKm": -1}, ["body", "custoKm"]),
        ({"custoKm": 10_001}, ["body", "custoKm"]),
        ({"custoKm": None}, ["body", "custoKm"]),
        ({"ganhoMinimo": 9}, ["body", "ganhoMinimo"]),
        ({"ganhoMinimo": 1_001}, ["body", "ganhoMinimo"]),
        ({"ganhoMinimo": 0.15}, ["body", "ganhoMinimo"]),
        ({"ganhoMinimo": "150"}, ["body", "ganhoMinimo"]),
        ({"ganhoMinimo": None}, ["body", "ganhoMinimo"]),
    ],
)
def test_invalid_rules_are_422_pointing_at_the_field(client, admin, body, loc):
    r = client.put(f"{API}/regras", headers=admin, json=body)
    assert r.status_code == 422, r.get_json()
    assert loc in [d["loc"] for d in r.get_json()["detail"]]
    assert client.get(f"{API}/regras", headers=admin).get_json() == DEFAULTS


def test_blocked_store_ids_are_stored_normalised(client, ctx, admin):
    loja = make_loja()
    body = put_rules(client, admin, lojasBloqueadas=[str(loja.id).upper(), str(loja.id)])
    assert body["lojasBloqueadas"] == [str(loja.id)]


def test_cadence_read_and_replace(client, admin, planner):
    assert client.get(f"{API}/config/cadence", headers=planner).get_json()["cadence"] == "semanal"
    for cadence in ("diaria", "quinzenal", "mensal", "semanal"):
        r = client.put(f"{API}/config/cadence", headers=admin, json={"cadence": cadence})
        assert r.status_code == 200 and r.get_json()["cadence"] == cadence
    r = client.put(f"{API}/config/cadence", headers=admin, json={"cadence": "anual"})
    assert r.status_code == 422 and r.get_json()["detail"][0]["loc"] == ["body", "cadence"]
    r = client.put(f"{API}/config/cadence", headers=admin, json={})
    assert r.status_code == 422 and r.get_json()["detail"][0]["loc"] == ["body", "cadence"]


def test_the_api_document_and_the_rules_page_state_the_rules_table(client, ctx, admin):
    """Each rule's default, bounds and choices come from ``services.stock.rules`` alone."""
    from services.stock.rules import CADENCIAS, RULE_FIELDS
    from tests.test_pages_remanejamento import sign_in

    document = client.get("/api/v1/openapi.json").get_json()["components"]["schemas"]
    properties = document["RegrasPayload"]["properties"]
    # The engine's rules, then the operations project (not an engine rule).
    assert list(properties) == [rule.name for rule in RULE_FIELDS] + ["projetoOperacoes"]
    assert document["CadencePayload"]["properties"]["cadence"]["enum"] == list(CADENCIAS)
    stored = client.get(f"{API}/regras", headers=admin).get_json()
    sign_in(client, make_user(papel="admin"))
    page = client.get("/regras").get_data(as_text=True)
    for rule in RULE_FIELDS:
        documented = properties[rule.name]
        if rule.is_list:
            assert stored[rule.name] == list(rule.default)
            continue
        assert stored[rule.name] == documented["default"] == rule.default
        if rule.minimum is not None:
            assert (documented["minimum"], documented["maximum"]) == (rule.minimum, rule.maximum)
            assert f'name="{rule.name}" type="number" inputmode="numeric" min="{rule.minimum}" ' in page
            assert f'max="{rule.maximum}" step="1" value="{rule.default}"' in page
        if rule.choices is not None:
            assert documented["enum"] == list(rule.choices)
            options = re.findall(rf'<select id="{rule.name}".*?</select>', page, re.S)[0]
            assert re.findall(r'<option value="([^"]*)"', options) == list(rule.choices)


# --- each rule's effect on a generated batch -------------------------------------------------


def test_blocked_store_is_never_origin_nor_destination(client, runner, admin):
    net = build_network()
    blocked = net["lojas"][0]
    generate(runner)
    assert any(r["lojaDestinoId"] == str(blocked.id) for r in batch_recs(client, admin))
    put_rules(client, admin, lojasBloqueadas=[str(blocked.id)])
    generate(runner)
    recs = batch_recs(client, admin)
    assert recs
    assert all(str(blocked.id) not in (r["lojaDestinoId"], r["origemId"]) for r in recs)


def test_blocked_brand_is_never_moved(client, runner, admin):
    build_network(marca="Marca A")
    other = build_network(marca="Marca B")
    generate(runner)
    assert {r["produtoId"] for r in batch_recs(client, admin)} >= {str(other["produto"].id)}
    put_rules(client, admin, marcasBloqueadas=["Marca B"])
    generate(runner)
    recs = batch_recs(client, admin)
    assert recs and all(r["produtoId"] != str(other["produto"].id) for r in recs)


def test_quantities_stay_between_minimum_and_maximum(client, runner, admin):
    build_network()
    put_rules(client, admin, qtdMinima=5, qtdMaxima=6)
    generate(runner)
    recs = batch_recs(client, admin)
    assert recs and all(5 <= r["quantidade"] <= 6 for r in recs)
    put_rules(client, admin, qtdMinima=1, qtdMaxima=2)
    generate(runner)
    recs = batch_recs(client, admin)
    assert recs and all(1 <= r["quantidade"] <= 2 for r in recs)


def test_campaign_stock_is_not_taken_out_of_the_origin(client, runner, admin):
    net = build_network()
    make_campanha(net["produto"], loja=net["cd"], inicio=ON - timedelta(days=3), fim=ON + timedelta(days=3))
    put_rules(client, admin, bloqueioCampanha=True)
    generate(runner)
    assert all(r["origemId"] != str(net["cd"].id) for r in batch_recs(client, admin))
    put_rules(client, admin, bloqueioCampanha=False)
    generate(runner)
    recs = [r for r in batch_recs(client, admin) if r["origemId"] == str(net["cd"].id)]
    assert recs and all(r["emCampanha"] for r in recs)


def test_priorizar_cd_prefers_the_cd_over_a_nearer_store(client, runner, admin):
    cd = make_loja(nome="CD Longe", is_cd=True, lat=-22.0, lng=-47.0)
    sobra = make_loja(nome="Loja Sobra", lat=-23.551, lng=-46.631)
    falta = make_loja(nome="Loja Falta", lat=-23.55, lng=-46.63)
    produto = make_produto(tamanhos=("38",))
    set_stock(cd, produto, **{"38": 300})
    set_stock(sobra, produto, **{"38": 300})
    set_stock(falta, produto, **{"38": 0})
    add_sales(falta, produto, "38", [3] * 30, end=ON)
    add_sales(sobra, produto, "38", [0] * 29 + [1], end=ON)

    def lots_by_origin():
        generate(runner)
        recs = [r for r in batch_recs(client, admin) if r["lojaDestinoId"] == str(falta.id)]
        return {r["origemId"]: r["quantidade"] for r in recs}

    # ~42 units needed over the horizon: more than one lot of qtdMaxima (15), so a second
    # origin adds a lot; the preferred origin sends the full first one
    put_rules(client, admin, priorizarCd=True, qtdMaxima=15)
    lots = lots_by_origin()
    assert lots.get(str(cd.id)) == 15 and set(lots) <= {str(cd.id), str(sobra.id)}
    put_rules(client, admin, priorizarCd=False, qtdMaxima=15)
    lots = lots_by_origin()
    assert lots.get(str(sobra.id)) == 15 and set(lots) <= {str(cd.id), str(sobra.id)}
    # with lots large enough for the whole need, one origin serves: the preferred one
    put_rules(client, admin, priorizarCd=True, qtdMaxima=100)
    assert set(lots_by_origin()) == {str(cd.id)}
    put_rules(client, admin, priorizarCd=False, qtdMaxima=100)
    assert set(lots_by_origin()) == {str(sobra.id)}


def test_periodo_sets_the_sales_history_behind_the_average(client, runner, admin):
    net = build_network(stores=1)
    loja = net["lojas"][0]
    generate(runner)
    media_30 = batch_recs(client, admin)[0]["vendaMediaDestino"]
    assert media_30 == pytest.approx(2.0)
    # Sales stop a week before the batch date: a 7-day window sees none of them.
    db.session.execute(delete(Venda).where(Venda.loja_id == loja.id, Venda.data >= ON - timedelta(days=7)))
    put_rules(client, admin, periodo="30")
    generate(runner)
    recs = batch_recs(client, admin)
    assert recs and recs[0]["vendaMediaDestino"] == pytest.approx(2.0 * 23 / 30, abs=0.01)
    put_rules(client, admin, periodo="7")
    generate(runner)
    assert all(r["vendaMediaDestino"] == 0 for r in batch_recs(client, admin))


def test_weights_change_the_scores(client, runner, admin):
    build_network(stores=6)
    put_rules(client, admin, pesoDistancia=100, pesoGiro=0, pesoEstoque=0)
    generate(runner)
    by_distance = {(r["lojaDestinoId"], r["tamanho"]): r["score"] for r in batch_recs(client, admin)}
    put_rules(client, admin, pesoDistancia=0, pesoGiro=0, pesoEstoque=100)
    generate(runner)
    by_stock = {(r["lojaDestinoId"], r["tamanho"]): r["score"] for r in batch_recs(client, admin)}
    common = set(by_distance) & set(by_stock)
    assert common and any(by_distance[k] != by_stock[k] for k in common)
    assert all(0 <= s <= 100 for s in [*by_distance.values(), *by_stock.values()])


def test_shipping_costs_keep_trips_that_do_not_pay_out_of_the_batch(client, runner, admin):
    """A store ~2,000 km from the CD, short of a size that sells about 0.5 a day."""
    cd = make_loja(nome="CD Cajamar", is_cd=True, lat=-23.32, lng=-46.82)
    longe = make_loja(nome="Loja Manaus", lat=-3.10, lng=-60.02)
    produto = make_produto(tamanhos=("38",))
    set_stock(cd, produto, **{"38": 100})
    set_stock(longe, produto, **{"38": 0})
    add_sales(longe, produto, "38", [0, 1] * 15, end=ON)

    put_rules(client, admin, custoEnvio=0, custoKm=0)
    generate(runner)
    recs = batch_recs(client, admin)
    assert [(r["origemId"], r["lojaDestinoId"]) for r in recs] == [(str(cd.id), str(longe.id))]
    # 20 units sold per trip: more than the lot can add over 14 days
    put_rules(client, admin, custoEnvio=20_000, custoKm=0)
    generate(runner)
    assert batch_recs(client, admin) == []
    # 0.01 unit sold per km: about 27 units for this trip
    put_rules(client, admin, custoEnvio=0, custoKm=10)
    generate(runner)
    assert batch_recs(client, admin) == []
    # the defaults (0.3 + 0.001/km, about 3 units) still let a badly needed lot travel
    put_rules(client, admin)
    generate(runner)
    assert len(batch_recs(client, admin)) == 1


def slow_seller_out_of_stock():
    """Loja Lenta, out of the size 38 it sells every third day, and a CD 30 km away with 100 of them."""
    cd = make_loja(nome="CD Cajamar", is_cd=True, lat=-23.35, lng=-46.87)
    loja = make_loja(nome="Loja Lenta", lat=-23.55, lng=-46.63)
    produto = make_produto(tamanhos=("38",))
    set_stock(cd, produto, **{"38": 100})
    set_stock(loja, produto, **{"38": 0})
    add_sales(loja, produto, "38", [0, 0, 1] * 10, end=ON)
    return cd, loja


def test_the_minimum_gain_per_unit_decides_how_many_units_travel(client, runner, admin):
    """Each further unit sent to a slow seller is less likely to sell within 14 days.
    ``ganhoMinimo`` is where the lot stops: every unit sent adds at least that much; a lower bar
    sends more units, and no lot can clear a bar of a whole sale per unit."""
    cd, loja = slow_seller_out_of_stock()

    def sent(ganho_minimo: int) -> tuple[int, float]:
        assert put_rules(client, admin, custoEnvio=0, custoKm=0, ganhoMinimo=ganho_minimo)["ganhoMinimo"] == (
            ganho_minimo
        )
        generate(runner)
        recs = batch_recs(client, admin)
        assert all(r["origemId"] == str(cd.id) and r["lojaDestinoId"] == str(loja.id) for r in recs)
        return sum(r["quantidade"] for r in recs), sum(r["vendaExtraEsperada"] for r in recs)

    units, gain = sent(150)
    assert 3 <= units < 15 and gain >= 0.15 * units
    fewer, fewer_gain = sent(400)
    assert 3 <= fewer < units and fewer_gain >= 0.4 * fewer
    more, _ = sent(30)
    assert more > units
    assert sent(1_000) == (0, 0)
