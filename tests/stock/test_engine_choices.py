"""The engine's choices seen in a generated batch: sizes never on the shelf, sizes a store was
never given, shared trips, the per-unit bar net of the trip, lots riding a trip another item
pays, the origin losing least after the search (docs/engine.md §1, §2 and §4),
through the CLI and the API (the ledger it reads: test_engine_ledger.py)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

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
from tests.stock.test_batches import ON, generate
from tests.stock.test_rules import batch_recs, put_rules, slow_seller_out_of_stock


@pytest.fixture
def admin(client, ctx):
    return auth_headers(client, make_user(papel="admin"))


def test_a_size_no_store_had_on_the_shelf_is_valued_like_its_place_in_the_grid(client, runner, admin):
    """Size 40 sat in the CD all month and in no store: no store could sell it, which says
    nothing about what it would sell. It takes the share its place in the grid has (next to
    the middle, like 38), not the trace a smoothing constant gives it."""
    cd = make_loja(nome="CD Cajamar", is_cd=True, lat=-23.35, lng=-46.87)
    lojas = [make_loja(nome=f"Loja {i}", lat=-23.55 + i * 0.01, lng=-46.63 - i * 0.01) for i in range(4)]
    produto = make_produto(tamanhos=("36", "38", "40", "42"))
    set_stock(cd, produto, **{"40": 200})
    for loja in lojas:
        set_stock(loja, produto, **{"36": 40, "38": 40, "40": 0, "42": 40})
        for tamanho in ("36", "38", "42"):
            add_sales(loja, produto, tamanho, [1] * 30, end=ON)
    put_rules(client, admin, priorizarCd=True, custoEnvio=0, custoKm=0)
    generate(runner)
    sent = {}
    for r in batch_recs(client, admin):
        if r["tamanho"] == "40":
            sent[r["lojaDestinoId"]] = sent.get(r["lojaDestinoId"], 0) + r["quantidade"]
    # a size beside the middle sells about as much as 38 (14 over the horizon): more than a
    # token lot
    assert set(sent) == {str(loja.id) for loja in lojas}
    assert all(q >= 10 for q in sent.values()), sent


def test_a_trip_that_carries_several_items_beats_one_trip_per_item(client, runner, admin):
    """Two stores next door each hold one of the products a store is out of; a CD 60 km away
    holds both. Each nearby trip costs 1.1 units, the CD's 1.6: one trip from the CD carries
    both, where each product choosing its cheapest origin alone would open two trips."""
    destino = make_loja(nome="Loja Falta", lat=-23.55, lng=-46.63)
    perto_a = make_loja(nome="Loja Perto A", lat=-23.60, lng=-46.69)
    perto_b = make_loja(nome="Loja Perto B", lat=-23.50, lng=-46.57)
    cd = make_loja(nome="CD Jundiaí", is_cd=True, lat=-23.19, lng=-46.99)
    camiseta = make_produto(nome="Camiseta", tamanhos=("U",))
    bone = make_produto(nome="Boné", tamanhos=("U",))
    for produto, vizinha in ((camiseta, perto_a), (bone, perto_b)):
        set_stock(destino, produto, U=0)
        add_sales(destino, produto, "U", [1] * 30, end=ON)
        set_stock(vizinha, produto, U=40)
        set_stock(cd, produto, U=40)
    # lots large enough for the whole need: one origin per product
    put_rules(client, admin, priorizarCd=False, qtdMaxima=40, custoEnvio=1000, custoKm=10)
    generate(runner)
    recs = [r for r in batch_recs(client, admin) if r["lojaDestinoId"] == str(destino.id)]
    assert {r["produtoId"] for r in recs} == {str(camiseta.id), str(bone.id)}
    assert {r["origemId"] for r in recs} == {str(cd.id)}


def test_a_trip_must_leave_the_per_unit_bar_on_each_unit_it_carries(client, runner, admin):
    """A lot that pays its trip but leaves less than 0.15 expected units sold per unit moved
    once the trip is paid does not travel; with the trip cheaper by that margin it does."""
    cd, _loja = slow_seller_out_of_stock()
    put_rules(client, admin, custoEnvio=0, custoKm=0)
    generate(runner)
    recs = batch_recs(client, admin)
    assert len(recs) == 1
    gain, units = recs[0]["vendaExtraEsperada"], recs[0]["quantidade"]
    bar = 0.15 * units
    assert gain > bar  # the lot clears the bar without a trip to pay
    # the trip paid, half the bar left per unit: it stays home
    put_rules(client, admin, custoEnvio=math.floor(1000 * (gain - bar / 2)), custoKm=0)
    generate(runner)
    assert batch_recs(client, admin) == []
    # the trip paid, twice the bar left: it travels, the same lot
    put_rules(client, admin, custoEnvio=math.floor(1000 * (gain - 2 * bar)), custoKm=0)
    generate(runner)
    recs = batch_recs(client, admin)
    assert [(r["origemId"], r["quantidade"]) for r in recs] == [(str(cd.id), units)]


def never_given_network():
    """24 stores given every size of a product and selling them; Loja Nunca was never given 42,
    Loja Ruptura sold all of its 42s 20 days ago; the CD holds 42s."""
    cd = make_loja(nome="CD Cajamar", is_cd=True, lat=-23.35, lng=-46.87)
    lojas = [make_loja(nome=f"Loja {i}", lat=-23.55 + i * 0.01, lng=-46.63) for i in range(22)]
    nunca = make_loja(nome="Loja Nunca", lat=-23.56, lng=-46.64)
    ruptura = make_loja(nome="Loja Ruptura", lat=-23.57, lng=-46.65)
    produto = make_produto(tamanhos=("36", "38", "40", "42"))
    set_stock(cd, produto, **{"42": 100})
    for loja in [*lojas, nunca, ruptura]:
        set_stock(loja, produto, **{"36": 4, "38": 4, "40": 4, "42": 4})
        for tamanho in ("36", "38", "40") if loja in (nunca, ruptura) else ("36", "38", "40", "42"):
            add_sales(loja, produto, tamanho, [0, 0, 0, 0, 1] * 6, end=ON)
    set_stock(nunca, produto, **{"42": 0})
    set_stock(ruptura, produto, **{"42": 0})
    add_sales(ruptura, produto, "42", [1] * 10 + [0] * 20, end=ON)
    return cd, nunca, ruptura, produto


def destinations_of_42(client, runner, admin) -> set[str]:
    """The stores the batch generated now (free shipping) sends 42s to."""
    put_rules(client, admin, custoEnvio=0, custoKm=0)
    generate(runner)
    return {r["lojaDestinoId"] for r in batch_recs(client, admin) if r["tamanho"] == "42"}


def test_a_size_a_store_was_never_given_while_it_got_the_rest_of_the_run_is_not_sent_there(
    client, runner, admin
):
    """24 stores were given every size of the product and sell them. Loja Nunca got none of 42
    and Loja Ruptura sold all of its 20 days ago: the CD's 42s go to Ruptura, whose customers buy
    it. Stores are given what they sell: a size Nunca never got while it got the rest says its
    customers do not buy it, where before it was valued like any size out of stock."""
    _cd, nunca, ruptura, _produto = never_given_network()
    destinos = destinations_of_42(client, runner, admin)
    assert str(ruptura.id) in destinos
    assert str(nunca.id) not in destinos


def test_units_in_transit_to_a_size_never_given_do_not_read_as_the_store_being_given_it(
    client, runner, admin
):
    """Last week's batch sent Loja Nunca two 42s (executed, still on their way). A transfer is
    decided on the same sales the engine reads, not the allocation's word that Nunca's customers
    buy 42: the size still counts as never given, and the CD's 42s go to Ruptura only. Counted as
    given, the units in transit made 42 look like a size Nunca's customers buy, and every batch
    sent it more."""
    cd, nunca, ruptura, produto = never_given_network()
    make_rec(
        make_lote(ON - timedelta(days=7)), produto, cd, nunca, tamanho="42", quantidade=2, status="executada"
    )
    destinos = destinations_of_42(client, runner, admin)
    assert str(ruptura.id) in destinos
    assert str(nunca.id) not in destinos


def test_units_received_at_a_size_never_given_that_did_not_sell_do_not_read_as_the_store_being_given_it(
    client, runner, admin
):
    """Last week's batch sent Loja Nunca two 42s, received 5 days ago; they sit on its shelf
    unsold. The receipt says the transfer brought them, not the allocation: 42 still counts as a
    size Nunca was never given, and the CD's 42s go to Ruptura only. Read as given, the two
    units made 42 look like a size Nunca's customers buy, and the next batch sent it more."""
    cd, nunca, ruptura, produto = never_given_network()
    make_rec(
        make_lote(ON - timedelta(days=7)),
        produto,
        cd,
        nunca,
        tamanho="42",
        quantidade=2,
        status="executada",
        recebida_data=ON - timedelta(days=5),
        quantidade_recebida=2,
    )
    set_stock(nunca, produto, **{"42": 2})
    destinos = destinations_of_42(client, runner, admin)
    assert str(ruptura.id) in destinos
    assert str(nunca.id) not in destinos


def test_a_route_the_batch_pays_carries_the_items_that_could_not_pay_a_trip_of_their_own(
    client, runner, admin
):
    """Loja Falta is out of a fast seller only a far CD holds, and of a slow one a store next door
    also holds. Routing sends the slow one from next door, whose trip it cannot pay alone: that
    route is dropped. The CD's trip is paid by the fast seller, and a unit riding it costs only
    what the CD keeps for later weeks, so the slow one rides with it."""
    destino = make_loja(nome="Loja Falta", lat=-23.55, lng=-46.63)
    vizinha = make_loja(nome="Loja Vizinha", lat=-23.56, lng=-46.64)
    cd = make_loja(nome="CD Recife", is_cd=True, lat=-8.05, lng=-34.90)
    rapido = make_produto(nome="Camiseta", tamanhos=("U",))
    lento = make_produto(nome="Boné", tamanhos=("U",))
    set_stock(destino, rapido, U=0)
    add_sales(destino, rapido, "U", [2] * 30, end=ON)
    set_stock(cd, rapido, U=100)
    set_stock(destino, lento, U=0)
    add_sales(destino, lento, "U", ([0] * 9 + [1]) * 3, end=ON)
    set_stock(vizinha, lento, U=40)
    set_stock(cd, lento, U=40)
    put_rules(client, admin, priorizarCd=False, qtdMinima=1, qtdMaxima=10, custoEnvio=1500, custoKm=1)
    generate(runner)
    recs = {(r["produtoId"], r["origemId"]): r for r in batch_recs(client, admin)}
    assert (str(rapido.id), str(cd.id)) in recs
    assert str(vizinha.id) not in {origem for _, origem in recs}
    lote = recs.get((str(lento.id), str(cd.id)))
    assert lote is not None and lote["lojaDestinoId"] == str(destino.id)
    # each unit riding the paid trip clears the bar net of what the CD keeps for later weeks
    assert lote["vendaExtraEsperada"] >= (0.15 + 0.05) * lote["quantidade"]


def two_twin_stores_one_of_which_got_goods_that_did_not_sell(client, admin, *, received: bool = True):
    """Two stores with the same month of sales, a unit a day, both out; a CD holds 12 units for
    both. Seven weeks ago one of them received 10 units the engine expected to sell 8 more over
    14 days; in those 14 days it sold none of them (ASI 0 against ESI 8)."""
    cd = make_loja(nome="CD Cajamar", is_cd=True, lat=-23.35, lng=-46.87)
    burnt = make_loja(nome="Loja Encalhe", lat=-23.55, lng=-46.63)
    twin = make_loja(nome="Loja Gêmea", lat=-23.55, lng=-46.63)
    produto = make_produto(nome="Boné", tamanhos=("U",))
    set_stock(cd, produto, U=12)
    for loja in (burnt, twin):
        set_stock(loja, produto, U=0)
        add_sales(loja, produto, "U", [1] * 30, end=ON)
    if received:
        earlier = make_lote(ON - timedelta(days=55))
        make_rec(
            earlier,
            produto,
            cd,
            burnt,
            tamanho="U",
            quantidade=10,
            status="executada",
            executada_data=ON - timedelta(days=52),
            quantidade_recebida=10,
            recebida_em=datetime(2026, 9, 29, 14, 0, tzinfo=UTC),
            recebida_data=ON - timedelta(days=50),
            estoque_destino=0,
            venda_extra_esperada=8.0,
        )
    put_rules(client, admin, custoEnvio=0, custoKm=0, qtdMinima=1, priorizarCd=True)
    return burnt, twin


def _units_to(client, admin, loja) -> int:
    return sum(r["quantidade"] for r in batch_recs(client, admin) if r["lojaDestinoId"] == str(loja.id))


def test_a_store_whose_moved_units_did_not_sell_is_rated_lower_next_time(client, runner, admin):
    burnt, twin = two_twin_stores_one_of_which_got_goods_that_did_not_sell(client, admin)
    generate(runner)
    assert _units_to(client, admin, burnt) < _units_to(client, admin, twin)
    learned = client.get(f"{API}/metricas/aprendizado", headers=admin).get_json()
    assert "rates of each destination store" in learned["metodo"]


def test_twin_stores_without_that_outcome_share_the_cd_evenly(client, runner, admin):
    """The control: the same two stores with no earlier transfer get the same units (±1)."""
    burnt, twin = two_twin_stores_one_of_which_got_goods_that_did_not_sell(client, admin, received=False)
    generate(runner)
    assert abs(_units_to(client, admin, burnt) - _units_to(client, admin, twin)) <= 1


def test_a_lot_comes_from_the_origin_that_loses_least_not_the_nearest(client, runner, admin):
    """Loja Falta needs one lot. Loja Vizinha, 4 km away, holds three units beyond what its own
    next 14 days need, but each of them would still sell there now and then; the CD, 100 km
    away, keeps nothing back. Routing picks the cheaper trip, next door; the search after it
    moves the lot to the CD: its trip costs 0.1 expected units sold more, and the neighbour
    keeps more sales than the CD gives up (0.05 a unit, kept for later weeks)."""
    destino = make_loja(nome="Loja Falta", lat=-23.55, lng=-46.63)
    vizinha = make_loja(nome="Loja Vizinha", lat=-23.59, lng=-46.63)
    cd = make_loja(nome="CD Campinas", is_cd=True, lat=-22.65, lng=-46.63)
    produto = make_produto(nome="Boné", tamanhos=("U",))
    set_stock(destino, produto, U=5)
    add_sales(destino, produto, "U", [1, 0] * 15, end=ON)
    set_stock(vizinha, produto, U=12)
    add_sales(vizinha, produto, "U", [1, 1, 0, 1, 0] * 6, end=ON)
    set_stock(cd, produto, U=30)
    put_rules(client, admin, priorizarCd=False, qtdMinima=3, qtdMaxima=3, custoEnvio=0, custoKm=1)
    generate(runner)
    recs = batch_recs(client, admin)
    assert [(r["origemId"], r["lojaDestinoId"], r["quantidade"]) for r in recs] == [
        (str(cd.id), str(destino.id), 3)
    ]


# The estimate reads a quarter of sales, each cell from its store's first sale of the product
# (docs/engine.md §1); ENGINE_HISTORY_DAYS = 30 reads the rules' window alone.


def a_steady_seller_after_a_quiet_month(client, admin, *, quarter: bool = True):
    """Loja Firme sold a unit a day for two months, then 10 units in the window's 30 days (every
    third day), and holds 12; Loja Vazia, which sells a unit a day, is out. Read over the window
    alone, Firme needs 5 of its 12 for its next 14 days; read over the quarter, about twice that."""
    firme = make_loja(nome="Loja Firme", lat=-23.55, lng=-46.63)
    vazia = make_loja(nome="Loja Vazia", lat=-23.56, lng=-46.64)
    produto = make_produto(nome="Boné", tamanhos=("U",))
    set_stock(firme, produto, U=12)
    before = [1] * 60 if quarter else [0] * 60
    add_sales(firme, produto, "U", before + [0, 0, 1] * 10, end=ON)
    set_stock(vazia, produto, U=0)
    add_sales(vazia, produto, "U", [1] * 30, end=ON)
    put_rules(client, admin, custoEnvio=0, custoKm=0, qtdMinima=1)
    return firme


def _units_from(client, admin, loja) -> int:
    return sum(r["quantidade"] for r in batch_recs(client, admin) if r["origemId"] == str(loja.id))


@pytest.mark.parametrize("history_days", [91, 30])
def test_a_quiet_month_after_a_steady_quarter_does_not_empty_a_store(
    app, client, runner, admin, monkeypatch, history_days
):
    monkeypatch.setitem(app.config, "ENGINE_HISTORY_DAYS", history_days)
    firme = a_steady_seller_after_a_quiet_month(client, admin)
    generate(runner)
    given = _units_from(client, admin, firme)
    if history_days == 30:  # the window alone: its 10 units in 30 days are all the engine sees
        assert given >= 6
    else:
        assert given <= 4


@pytest.mark.parametrize("history_days", [91, 30])
def test_the_quarter_is_read_only_from_the_stores_first_sale_of_the_product(
    app, client, runner, admin, monkeypatch, history_days
):
    """Loja Nova got a product 20 days ago, sold a unit a day and is out; the CD holds 30. Read
    from its first sale, not as 91 days on the shelf and 71 of them without a sale, the quarter
    sends it what the window sends."""
    monkeypatch.setitem(app.config, "ENGINE_HISTORY_DAYS", history_days)
    cd = make_loja(nome="CD Cajamar", is_cd=True, lat=-23.35, lng=-46.87)
    nova = make_loja(nome="Loja Nova", lat=-23.55, lng=-46.63)
    produto = make_produto(nome="Boné", tamanhos=("U",))
    set_stock(cd, produto, U=30)
    set_stock(nova, produto, U=0)
    add_sales(nova, produto, "U", [1] * 20, end=ON)
    put_rules(client, admin, custoEnvio=0, custoKm=0, qtdMinima=1, priorizarCd=True)
    generate(runner)
    assert _units_to(client, admin, nova) == 13


def _sales_on(days_ago: set[int], days: int = 91) -> list[int]:
    """One unit on each of ``days_ago`` (days before ON), nothing on the other of ``days`` days."""
    return [1 if days - i in days_ago else 0 for i in range(days)]


def test_the_sale_that_opened_a_stores_quarter_is_not_counted_in_its_rate(client, runner, admin):
    """Two stores sold a cap 40 and 10 days ago and are out; Loja Antiga also sold one 60 days ago
    and one on the quarter's first day, Loja Recente's first sale was 60 days ago. Read from that
    sale on, Recente sold 2 units in 50 days on the shelf, not 3: counting the sale it starts from
    would rate it above Antiga (4 in 81 days), and the CD's only unit would go there."""
    cd = make_loja(nome="CD Cajamar", is_cd=True, lat=-23.35, lng=-46.87)
    antiga = make_loja(nome="Loja Antiga", lat=-23.55, lng=-46.63)
    recente = make_loja(nome="Loja Recente", lat=-23.56, lng=-46.64)
    produto = make_produto(nome="Boné", tamanhos=("U",))
    set_stock(cd, produto, U=1)
    for loja, days_ago in ((antiga, {91, 60, 40, 10}), (recente, {60, 40, 10})):
        set_stock(loja, produto, U=0)
        add_sales(loja, produto, "U", _sales_on(days_ago), end=ON)
    put_rules(client, admin, custoEnvio=0, custoKm=0, qtdMinima=1, priorizarCd=True)
    generate(runner)
    assert (_units_to(client, admin, antiga), _units_to(client, admin, recente)) == (1, 0)


def test_a_key_size_is_worth_more_where_broken_runs_were_seen_to_sell_less(client, runner, admin):
    """Six stores ran out of sizes 38 and 40, the best sellers, of a shoe and of a sandal ten
    days ago. Since then the shoe's other sizes sold half as much, the sandal's as before: the
    sales tell that a broken run costs shoes and not sandals (docs/engine.md §1). Sending 38
    back completes the shoe's run too, so it adds more than the sandal's; a fixed effect would
    read the shoe's quieter weeks as a slower seller and value it less."""
    cd = make_loja(nome="CD Cajamar", is_cd=True, lat=-23.35, lng=-46.87)
    lojas = [make_loja(nome=f"Loja {i}", lat=-23.55 + i * 0.01, lng=-46.63) for i in range(6)]
    sizes = ("36", "38", "40", "42")
    tenis = make_produto(nome="Tênis", categoria="Tênis", tamanhos=sizes)
    sandalia = make_produto(nome="Sandália", categoria="Sandália", tamanhos=sizes)
    for produto, later in ((tenis, 1), (sandalia, 2)):
        set_stock(cd, produto, **{"38": 200, "40": 200})
        for loja in lojas:
            set_stock(loja, produto, **{"36": 20, "38": 0, "40": 0, "42": 20})
            for key in ("38", "40"):
                add_sales(loja, produto, key, [3] * 20 + [0] * 10, end=ON)
            for other in ("36", "42"):
                add_sales(loja, produto, other, [2] * 20 + [later] * 10, end=ON)
    put_rules(client, admin, priorizarCd=True, custoEnvio=0, custoKm=0)
    generate(runner)
    gain = {str(tenis.id): [], str(sandalia.id): []}
    for r in batch_recs(client, admin):
        if r["tamanho"] == "38":
            gain[r["produtoId"]].append(r["vendaExtraEsperada"] / r["quantidade"])
    assert len(gain[str(tenis.id)]) == len(gain[str(sandalia.id)]) == 6, gain
    assert min(gain[str(tenis.id)]) > 1.1 * max(gain[str(sandalia.id)]), gain
