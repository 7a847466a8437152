"""The batch writer against the recommendation table: every column of the model gets its value."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from extensions import db
from models.stock_batches import Recomendacao
from services.stock import storage
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
