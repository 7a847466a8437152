"""What the engine reads from the transfer ledger, through the CLI and the API: the units each
cell received and the days it sat empty before them, and the units each cell sent away and
when (docs/engine.md §1, days on the shelf and sizes a store was never given)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
import sqlalchemy as sa

from extensions import db
from models.stock import Loja
from services.stock.engine_demand import estimate_demand
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
from tests.stock.test_batches import ON, generate
from tests.stock.test_engine_choices import _units_to, never_given_network
from tests.stock.test_engine_sim import _one_product_network
from tests.stock.test_rules import batch_recs, put_rules


@pytest.fixture
def admin(client, ctx):
    return auth_headers(client, make_user(papel="admin"))


def test_the_snapshot_counts_the_units_each_cell_received_in_the_window(ctx):
    """Receipts reach the engine cell by cell: 2 units into Nunca's 42 five days ago, 5 into
    Loja 0's 38 ten days ago (3 more 40 days ago, before the window); every other cell none."""
    from services.stock.rules import get_rules
    from services.stock.snapshot import read_inputs

    cd, nunca, _ruptura, produto = never_given_network()
    loja_0 = db.session.scalar(sa.select(Loja).where(Loja.nome == "Loja 0"))
    lote = make_lote(ON - timedelta(days=45))
    for destino, tamanho, units, days_ago in (
        (nunca, "42", 2, 5),
        (loja_0, "38", 5, 10),
        (loja_0, "38", 3, 40),
    ):
        make_rec(
            lote,
            produto,
            cd,
            destino,
            tamanho=tamanho,
            quantidade=units,
            status="executada",
            recebida_data=ON - timedelta(days=days_ago),
            quantidade_recebida=units,
        )
    inputs, net = read_inputs(ON, get_rules())

    def cell(loja, tamanho):
        item = next(k for k, size in enumerate(net.item_size) if size == tamanho)
        return net.node_ids.index(loja.id), item

    expected = np.zeros(inputs.stock.shape, dtype=np.int64)
    expected[cell(nunca, "42")] = 2
    expected[cell(loja_0, "38")] = 5
    assert inputs.received.tolist() == expected.tolist()


def refilled_after_a_long_stock_out(client, admin):
    """Loja Reabastecida sold a unit a day for 8 days, sat empty for 19, and 3 days ago received
    12 units from the CD, of which it has sold one a day since: 9 on the shelf. Loja Vazia, which
    sells a unit a day too, is out. Read as in stock all month (11 sold in 30 days, 0.37 a day),
    the refilled store has units to spare for its neighbour; read from the receipt ledger (11 sold
    in the 11 days it had stock), it has fewer than its own next 14 days need."""
    cd = make_loja(nome="CD Cajamar", is_cd=True, lat=-23.35, lng=-46.87)
    refilled = make_loja(nome="Loja Reabastecida", lat=-23.55, lng=-46.63)
    empty = make_loja(nome="Loja Vazia", lat=-23.56, lng=-46.64)
    produto = make_produto(nome="Boné", tamanhos=("U",))
    set_stock(cd, produto, U=0)
    set_stock(refilled, produto, U=9)
    add_sales(refilled, produto, "U", [1] * 8 + [0] * 19 + [1] * 3, end=ON)
    set_stock(empty, produto, U=0)
    add_sales(empty, produto, "U", [1] * 27 + [0] * 3, end=ON)
    last_week = make_lote(ON - timedelta(days=7))
    make_rec(
        last_week,
        produto,
        cd,
        refilled,
        tamanho="U",
        quantidade=12,
        status="executada",
        executada_data=ON - timedelta(days=5),
        quantidade_recebida=12,
        recebida_em=datetime(2026, 11, 15, 14, 0, tzinfo=UTC),
        recebida_data=ON - timedelta(days=3),
    )
    put_rules(client, admin, custoEnvio=0, custoKm=0, qtdMinima=1)
    return refilled, empty


def test_goods_received_after_a_long_stock_out_are_not_read_as_a_slow_seller(client, runner, admin):
    refilled, _ = refilled_after_a_long_stock_out(client, admin)
    generate(runner)
    assert [r for r in batch_recs(client, admin) if r["origemId"] == str(refilled.id)] == []


def test_without_its_receipt_the_same_store_reads_as_a_slow_seller(client, runner, admin):
    """The control of the test above: the same history with no receipt recorded (a stock import
    refilled the store) is all the engine can see, and it moves the spare units."""
    from extensions import db
    from models.stock_batches import Recomendacao

    refilled, empty = refilled_after_a_long_stock_out(client, admin)
    db.session.execute(sa.delete(Recomendacao))
    generate(runner)
    moved = [r for r in batch_recs(client, admin) if r["origemId"] == str(refilled.id)]
    assert [r["lojaDestinoId"] for r in moved] == [str(empty.id)]


def a_store_that_sent_its_units_away_unsold(client, admin, *, recorded: bool = True):
    """Loja Parada sold a cap on each of the month's first two days, none in the 25 after, and 3
    days ago sent its 8 left to Loja Outlet; Loja Ativa sold one a day and is out; the
    CD holds 10. ``recorded``: the transfer is in the database (else a stock import took them)."""
    cd = make_loja(nome="CD Cajamar", is_cd=True, lat=-23.35, lng=-46.87)
    parada = make_loja(nome="Loja Parada", lat=-23.55, lng=-46.63)
    ativa = make_loja(nome="Loja Ativa", lat=-23.56, lng=-46.64)
    outlet = make_loja(nome="Loja Outlet", lat=-23.60, lng=-46.70)
    produto = make_produto(nome="Boné", tamanhos=("U",))
    set_stock(cd, produto, U=10)
    set_stock(parada, produto, U=0)
    add_sales(parada, produto, "U", [1, 1] + [0] * 28, end=ON)
    set_stock(ativa, produto, U=0)
    add_sales(ativa, produto, "U", [1] * 30, end=ON)
    set_stock(outlet, produto, U=0)
    if recorded:
        make_rec(
            make_lote(ON - timedelta(days=7)),
            produto,
            parada,
            outlet,
            tamanho="U",
            quantidade=8,
            status="executada",
            executada_data=ON - timedelta(days=3),
        )
    put_rules(client, admin, custoEnvio=0, custoKm=0, qtdMinima=1)
    return parada, ativa


def test_a_store_that_sent_its_units_away_unsold_is_not_read_as_sold_out(client, runner, admin):
    """Read from its last sale alone, Loja Parada has been out for 28 days after selling two caps
    in two: the fastest seller of the network, and the CD's caps went back to the store that had
    just sent its own away. The transfer out says they sat on its shelf until 3 days ago: two
    sold in 27 days, and the CD's caps go to Loja Ativa."""
    parada, ativa = a_store_that_sent_its_units_away_unsold(client, admin)
    generate(runner)
    assert _units_to(client, admin, parada) == 0
    assert _units_to(client, admin, ativa) == 10


def test_without_the_transfer_out_the_same_store_reads_as_sold_out(client, runner, admin):
    """The control of the test above: with no transfer recorded, the last sale is all the engine
    can see, and it sends Loja Parada caps."""
    parada, _ativa = a_store_that_sent_its_units_away_unsold(client, admin, recorded=False)
    generate(runner)
    assert _units_to(client, admin, parada) > 0


def test_the_snapshot_counts_the_units_each_cell_sent_and_when(ctx):
    """Transfers out reach the engine cell by cell: Loja 0's 38 sent 5 units 10 days ago (executed)
    and has 2 approved to go; its 40 sent 3 units 40 days ago, before the window (in the quarter);
    a vetoed transfer takes nothing."""
    from services.stock.rules import get_rules
    from services.stock.snapshot import read_inputs

    _cd, nunca, _ruptura, produto = never_given_network()
    loja_0 = db.session.scalar(sa.select(Loja).where(Loja.nome == "Loja 0"))
    add_sales(loja_0, produto, "36", [1] + [0] * 29, end=ON - timedelta(days=30))  # its quarter: 60 days
    lote = make_lote(ON - timedelta(days=45))
    for tamanho, units, status, days_ago, vetado in (
        ("38", 5, "executada", 10, False),
        ("38", 2, "aprovada", None, False),
        ("40", 3, "executada", 40, False),
        ("36", 4, "executada", 10, True),
    ):
        executada = None if days_ago is None else ON - timedelta(days=days_ago)
        make_rec(
            lote,
            produto,
            loja_0,
            nunca,
            tamanho=tamanho,
            quantidade=units,
            status=status,
            executada_data=executada,
            vetado=vetado,
        )
    inputs, net = read_inputs(ON, get_rules())
    n = net.node_ids.index(loja_0.id)
    k = {size: net.item_size.index(size) for size in ("36", "38", "40", "42")}
    assert inputs.sent[n].tolist() == [0, 7, 0, 0] and inputs.sent.sum() == 7
    assert inputs.estimate_history.sent[n].tolist() == [0, 7, 3, 0]
    # the approved transfer takes its units today: the last day the cell had them is yesterday
    assert [int(inputs.last_sent_age[n, k[size]]) for size in ("38", "40")] == [0, 39]
    assert int(inputs.last_sent_age[n, k["36"]]) > 91


def test_units_a_store_sent_away_were_given_to_it():
    """24 stores were given 4 units of each of 4 sizes and sell them; store 1 has none of the
    last size and never sold it. Read from its stock and sales alone it was never given the size,
    while it got the rest: its customers do not buy it. It was given 4 and sent them away 25 days
    ago (5 days on the shelf say little): the allocation's word stands, and so does the size."""
    n = 25
    stock = np.full((n, 4), 4)
    sales = np.full((n, 4), 6.0)
    stock[0], sales[0] = [0, 0, 0, 100], 0  # the CD
    stock[1, 3], sales[1, 3] = 0, 0
    net = _one_product_network(stock, sales)
    sent = np.zeros(stock.shape, dtype=np.int32)
    sent[1, 3] = 4
    age = np.full(stock.shape, 32767, dtype=np.int16)
    age[1, 3] = 25
    given = replace(net, sent=sent, last_sent_age=age)
    assert estimate_demand(net).alive[1, 3] < 0.1
    assert estimate_demand(given).alive[1, 3] > 0.5
