"""A load into an empty (or nearly empty) sales or stock table rebuilds the table's indexes and
keys once at the end instead of row by row: the table comes out with every one of them, and a
failure on the way leaves it as it was."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect

from extensions import db
from models.stock import Estoque, Venda
from services.stock import import_sync
from tests.stock.test_import import catalogue, days_ago, ok, run_import, sales_rows, snapshot  # noqa: F401


def table_shape(app, table: str) -> dict:
    """The primary key, foreign keys and indexes of ``table``, as the test's transaction sees them."""
    with app.app_context():
        inspector = inspect(db.session.connection())
        return {
            "pk": inspector.get_pk_constraint(table),
            "fks": sorted(inspector.get_foreign_keys(table), key=lambda fk: fk["name"]),
            "indexes": sorted(inspector.get_indexes(table), key=lambda ix: ix["name"]),
        }


def sales_file(app) -> str:
    d1, d2 = days_ago(app, 3), days_ago(app, 2)
    return (
        "data,loja,sku,tamanho,qtd\n"
        f"{d1},LJ001,TEN-001-PRT,38,2\n{d1},LJ001,TEN-001-PRT,39,1\n"
        f"{d2},LJ001,TEN-001-PRT,38,5\n{d1},LJ002,CAM-002-BCO,M,3\n"
    )


@pytest.mark.usefixtures("catalogue")
def test_a_first_load_keeps_every_key_and_index(app, runner, tmp_path):
    shapes = {table: table_shape(app, table) for table in (Venda.__tablename__, Estoque.__tablename__)}
    assert shapes["vendas"]["fks"] and shapes["vendas"]["indexes"]

    output = ok(run_import(runner, tmp_path, "sales", sales_file(app)))
    assert "3 (day, store) pair(s) replaced: 4 inserted" in output
    stock = "loja,sku,tamanho,qtd\nLJ001,TEN-001-PRT,38,4\nLJ002,CAM-002-BCO,M,1\n"
    assert "2 store(s) replaced: 2 inserted" in ok(run_import(runner, tmp_path, "stock", stock))

    assert {table: table_shape(app, table) for table in shapes} == shapes
    d1, d2 = days_ago(app, 3), days_ago(app, 2)
    assert sales_rows(app) == {
        (d1, "LJ001", "TEN-001-PRT", "38", 2),
        (d1, "LJ001", "TEN-001-PRT", "39", 1),
        (d2, "LJ001", "TEN-001-PRT", "38", 5),
        (d1, "LJ002", "CAM-002-BCO", "M", 3),
    }
    # The rebuilt primary key finds every row again: the same file changes nothing.
    output = ok(run_import(runner, tmp_path, "sales", sales_file(app), name="again.csv"))
    assert "3 (day, store) pair(s) replaced: 0 inserted, 0 updated, 4 unchanged, 0 removed" in output


@pytest.mark.usefixtures("catalogue")
def test_a_failure_while_rebuilding_leaves_the_table_as_it_was(app, runner, tmp_path, monkeypatch):
    shape = table_shape(app, "vendas")
    before = snapshot(app)
    with app.app_context():
        postgres = db.engine.dialect.name == "postgresql"
    name = "_drop_postgres_indexes" if postgres else "_drop_sqlite_indexes"
    drop = getattr(import_sync, name)

    def drop_then_fail(cur, table):
        return [*drop(cur, table), "SELECT no_such_column FROM vendas"]

    monkeypatch.setattr(import_sync, name, drop_then_fail)
    result = run_import(runner, tmp_path, "sales", sales_file(app))
    assert result.exit_code == 1
    assert "the database refused the import, nothing was imported" in result.output
    assert snapshot(app) == before
    assert table_shape(app, "vendas") == shape


@pytest.mark.usefixtures("catalogue")
def test_hundreds_of_rows_arrive_whole(app, runner, tmp_path):
    """Rows are written many to a statement: every row of a file arrives, whatever its count."""
    grid = {"TEN-001-PRT": ["38", "39", "40", "41"], "CAM-002-BCO": ["PP", "P", "M", "G", "GG"]}
    items = [
        (loja, sku, size) for loja in ("LJ001", "LJ002") for sku, sizes in grid.items() for size in sizes
    ]

    def rows(first_day: int, days: int) -> set[tuple[str, str, str, str, int]]:
        return {
            (days_ago(app, first_day + d), loja, sku, size, (d + i) % 7)
            for d in range(days)
            for i, (loja, sku, size) in enumerate(items)
        }

    def csv_of(wanted) -> str:
        return "data,loja,sku,tamanho,qtd\n" + "".join(
            f"{','.join(map(str, row))}\n" for row in sorted(wanted)
        )

    first = rows(20, 13)  # 234 rows into the empty table
    assert "234 inserted" in ok(run_import(runner, tmp_path, "sales", csv_of(first)))
    assert sales_rows(app) == first
    second = rows(2, 12)  # 216 more, while the table already holds more than that
    assert "216 inserted" in ok(run_import(runner, tmp_path, "sales", csv_of(second), name="more.csv"))
    assert sales_rows(app) == first | second
