"""The batch writer against the recommendation table: every column of the model gets its value."""

from __future__ import annotations

import math

import pytest
from sqlalchemy import select

from extensions import db
from models.stock_batches import Recomendacao
from services.stock import storage
from services.stock.engine import Justifications
from tests.factories import auth_headers, make_user
from tests.stock.support import API
from tests.stock.test_batches import ON, build_network, generate


@pytest.fixture
def planner(client, ctx):
    return auth_headers(client, make_user(papel="planejador"))


def test_a_new_batch_fills_every_column_but_the_decisions(client, runner, ctx, planner):
    build_network()
    generate(runner)
    assert {c.name for c in Recomendacao.__table__.columns} == {
        *storage.REC_COLUMNS,
        *storage.DECISION_COLUMNS,
    }
    rows = db.session.execute(select(Recomendacao.__table__)).mappings().all()
    assert rows and len(rows) == len(client.get(f"{API}/recomendacoes", headers=planner).get_json())
    for row in rows:
        assert [name for name in storage.REC_COLUMNS if row[name] is None] == []
        assert [name for name in storage.DECISION_COLUMNS if row[name] is not None] == []
        assert row["status"] == "pendente" and row["vetado"] is False and row["data"] == ON


def test_a_model_column_the_writer_does_not_fill_fails_the_generation(
    client, runner, ctx, planner, monkeypatch
):
    build_network()
    # What a column added to Recomendacao without a value in the writer looks like to it.
    monkeypatch.setattr(storage, "REC_COLUMNS", (*storage.REC_COLUMNS, "coluna_nova"))
    result = runner.invoke(args=["batches", "generate", "--date", ON.isoformat()])
    assert result.exit_code != 0
    assert "coluna_nova" in str(result.exception)
    assert client.get(f"{API}/lotes", headers=planner).get_json() == []


def test_demo_batch_texts_built_chunk_by_chunk_quote_their_own_rows(
    client, runner, ctx, planner, monkeypatch
):
    """``flask demo load`` writes its first batch in one run of the engine, whose texts the
    writer builds a chunk at a time: a chunk boundary never shifts a text onto another row."""
    monkeypatch.setattr(Justifications, "CHUNK", 7)
    result = runner.invoke(args=["demo", "load", "--stores", "4", "--products", "8", "--seed", "3"])
    assert result.exit_code == 0, result.output
    lote = client.get(f"{API}/lotes", headers=planner).get_json()[0]
    recs = client.get(f"{API}/lotes/{lote['id']}/recomendacoes", headers=planner).get_json()
    assert len(recs) > 3 * Justifications.CHUNK
    for rec in recs:
        # the daily sales are whole units over 30 days: never near a rounding boundary
        venda = f"{math.floor(rec['vendaMediaDestino'] * 100 + 0.5) / 100:.2f}".replace(".", ",")
        assert rec["justificativa"].startswith(
            f"Destino com {rec['estoqueDestino']} un. e venda média de {venda}/dia"
        ), rec
        assert f"Enviar {rec['quantidade']} un." in rec["justificativa"], rec
