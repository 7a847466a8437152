"""Unique keys of the remanejamento side written at once: the rules row and the CSV imports."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from sqlalchemy import func, select

from blueprints.stock import cli_data
from extensions import db
from models.stock import Estoque, Loja, Produto, RegrasRemanejamento, Venda
from tests.factories import auth_headers, make_user
from tests.racing import RACERS, race, together
from tests.stock.support import API
from tests.stock.test_import import PRODUCTS, STORES, days_ago, write

pytestmark = pytest.mark.committing


def rows(app, model) -> int:
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(model))


def test_first_rules_saved_at_once_make_one_row(app, client):
    with app.app_context():
        admin = SimpleNamespace(email=make_user(papel="admin").email)
        db.session.commit()
    headers = auth_headers(client, admin)
    assert rows(app, RegrasRemanejamento) == 0
    # Reading the defaults writes nothing.
    assert client.get(f"{API}/regras", headers=headers).get_json()["qtdMinima"] == 3
    assert rows(app, RegrasRemanejamento) == 0

    results = race(
        app,
        [
            lambda c, n=n: c.put(f"{API}/regras", json={"qtdMinima": n + 1}, headers=headers)
            for n in range(RACERS)
        ],
    )

    assert [status for status, _ in results] == [200] * RACERS, results
    assert rows(app, RegrasRemanejamento) == 1
    saved = client.get(f"{API}/regras", headers=headers).get_json()
    assert 1 <= saved["qtdMinima"] <= RACERS


def _import(app, kind: str, path) -> str:
    """What ``flask import KIND FILE`` does, in an app context of its own."""
    with app.app_context():
        cli_data._run_import(kind, str(path))
    return "ok"


@pytest.mark.parametrize(
    ("kind", "model", "expected"),
    [("stores", Loja, 3), ("products", Produto, 2), ("stock", Estoque, 3), ("sales", Venda, 3)],
)
def test_the_same_new_rows_imported_at_once_are_stored_once(app, tmp_path, kind, model, expected):
    files = {
        "stores": STORES,
        "products": PRODUCTS,
        "stock": "loja,sku,tamanho,qtd\nLJ001,TEN-001-PRT,38,4\nLJ001,TEN-001-PRT,39,2\nLJ002,CAM-002-BCO,M,7\n",
        "sales": (
            "data,loja,sku,tamanho,qtd\n"
            f"{days_ago(app, 1)},LJ001,TEN-001-PRT,38,1\n"
            f"{days_ago(app, 1)},LJ002,CAM-002-BCO,M,2\n"
            f"{days_ago(app, 2)},LJ001,TEN-001-PRT,39,3\n"
        ),
    }
    if kind in ("stock", "sales"):
        for needed in ("stores", "products"):
            _import(app, needed, write(tmp_path, f"{needed}.csv", files[needed]))
    path = write(tmp_path, f"{kind}-race.csv", files[kind])

    results = together([lambda: _import(app, kind, path)] * RACERS)

    # The imports queue: each one after the first finds the rows stored and changes nothing.
    assert results == ["ok"] * RACERS
    assert rows(app, model) == expected
