"""The fast dump gives what marshmallow gives, and the app's JSON stays as Flask wrote it."""

from __future__ import annotations

import uuid
from collections import namedtuple
from datetime import UTC, datetime
from decimal import Decimal

import orjson
import pytest
from marshmallow import Schema, fields, post_dump
from sqlalchemy import select

from extensions import db
from models.stock_batches import Recomendacao
from schemas.fast import RowDumper
from schemas.stock.batches import RecomendacaoOut
from tests.factories import auth_headers, make_loja, make_lote, make_produto, make_rec, make_user
from tests.openapi_responses import assert_documented


def _wire(value):
    return orjson.loads(orjson.dumps(value))


@pytest.fixture
def recs(ctx):
    cd = make_loja(is_cd=True)
    loja = make_loja()
    produto = make_produto()
    lote = make_lote()
    pending = make_rec(lote, produto, cd, loja)
    vetoed = make_rec(lote, produto, cd, loja, tamanho="39", vetado=True)
    received = make_rec(lote, produto, cd, loja, tamanho="40", status="executada")
    received.quantidade_recebida = 4
    received.recebida_em = datetime(2026, 11, 20, 14, 5, 9, 123456, tzinfo=UTC)
    db.session.flush()
    return [pending, vetoed, received]


def test_rows_and_objects_dump_as_marshmallow_dumps_them(recs):
    schema = RecomendacaoOut()
    dumper = RowDumper(RecomendacaoOut)
    expected = [schema.dump(rec) for rec in recs]
    assert _wire(dumper.dump_many(recs)) == expected
    rows = db.session.execute(select(Recomendacao.__table__).order_by(Recomendacao.posicao)).all()
    assert _wire(dumper.dump_many(rows)) == expected
    assert expected[2]["recebidaEm"] == "2026-11-20T14:05:09Z"
    assert expected[1]["vetado"] is True


def test_fields_without_a_fast_path_are_serialised_by_the_field():
    class Tag(Schema):
        name = fields.String()

    class Body(Schema):
        id = fields.Integer()
        when = fields.DateTime()
        tags = fields.List(fields.Nested(Tag))
        shout = fields.Method("loud")
        ratio = fields.Float(data_key="taxa")

        def loud(self, obj):
            return obj.name.upper()

    class Obj:
        id = "7"
        name = "giro"
        when = datetime(2026, 11, 26, 9, 30, tzinfo=UTC)
        tags = [{"name": "a"}, {"name": "b"}]
        ratio = Decimal("0.25")

    assert _wire(RowDumper(Body).dump(Obj())) == Body().dump(Obj())


def test_schemas_with_dump_hooks_are_refused():
    class Hooked(Schema):
        a = fields.String()

        @post_dump
        def upper(self, data, **kwargs):
            return data

    with pytest.raises(TypeError):
        RowDumper(Hooked)


def test_json_bodies_keep_sorted_keys_and_compact_separators(client, ctx):
    # Bodies dumped by a schema go through Flask's JSON provider, which keeps Flask's form.
    r = client.get("/api/v1/remanejamento/regras", headers=auth_headers(client, make_user(papel="admin")))
    assert r.status_code == 200
    body = r.get_data(as_text=True)
    assert ": " not in body and ", " not in body
    assert list(r.get_json()) == sorted(r.get_json())


def test_a_list_answers_the_shape_its_document_declares(client, recs):
    headers = auth_headers(client, make_user(papel="planejador"))
    r = client.get("/api/v1/remanejamento/recomendacoes", headers=headers)
    assert r.status_code == 200 and len(r.get_json()) == 3
    assert_documented(client, "stock", "/api/v1/remanejamento/recomendacoes", r)
    # The check bites: a body that breaks the schema is reported.
    r.set_data(orjson.dumps([{**r.get_json()[0], "quantidade": "5"}]))
    with pytest.raises(AssertionError, match="quantidade"):
        assert_documented(client, "stock", "/api/v1/remanejamento/recomendacoes", r)


def test_rows_of_other_types_are_converted_as_marshmallow_converts_them():
    class Body(Schema):
        id = fields.UUID()
        n = fields.Integer(data_key="count")
        ratio = fields.Float()
        on = fields.Boolean()
        name = fields.String()
        day = fields.Date()

    # A row type with ``_fields`` takes the positional path; each value here needs converting.
    Row = namedtuple("Row", ["extra", "name", "day", "on", "ratio", "n", "id"])
    rows = [
        Row("x", 7, datetime(2026, 11, 26, 9, 30, tzinfo=UTC), 1, Decimal("0.25"), "12", uuid.UUID(int=5)),
        Row("y", None, None, None, None, None, None),
        Row("z", "ok", datetime(2026, 1, 2, tzinfo=UTC).date(), True, 1.5, 3, str(uuid.UUID(int=6))),
    ]
    expected = [Body().dump(row) for row in rows]
    assert _wire(RowDumper(Body).dump_many(rows)) == expected
    assert expected[0]["count"] == 12 and expected[0]["ratio"] == 0.25 and expected[0]["day"] == "2026-11-26"


def test_nested_objects_dump_as_marshmallow_dumps_them():
    from schemas.stock.batches import GradeMatrix as GradeMatrixOut
    from services.stock.grade import GradeCell, GradeMatrix, GradeRow

    loja = uuid.UUID(int=9)
    cells = [GradeCell.of(loja, "38", 2, -2), GradeCell.of(loja, "39", 0, 3)]
    matrix = GradeMatrix(
        uuid.UUID(int=1), ["38", "39"], [GradeRow(loja, cells, 2, 3, "quebrada", None)], None, ["38"]
    )
    expected = GradeMatrixOut().dump(matrix)
    assert _wire(RowDumper(GradeMatrixOut).dump(matrix)) == expected
    assert expected["rows"][0]["cells"][0] == {
        "lojaId": str(loja),
        "tamanho": "38",
        "atual": 2,
        "delta": -2,
        "final": 0,
        "ruptura": True,
    }


def test_the_sql_writer_refuses_fields_it_cannot_write_exactly():
    from sqlalchemy import Column, Date, DateTime, Float, Integer, MetaData, Numeric, String, Table, Uuid

    from schemas.fast import sql_json_object
    from schemas.stock.batches import UtcTimestamp

    table = Table(
        "t",
        MetaData(),
        Column("id", Uuid),
        Column("n", Integer),
        Column("name", String),
        Column("ratio", Float),
        Column("money", Numeric(10, 2)),
        Column("single", Float(precision=24)),
        Column("day", Date),
        Column("naive", DateTime),
        Column("aware", DateTime(timezone=True)),
    )
    cols = list(table.c)

    def schema(**declared):
        return Schema.from_dict(declared)

    ok = schema(
        id=fields.UUID(),
        n=fields.Integer(data_key="count"),
        name=fields.String(),
        ratio=fields.Float(),
        money=fields.Float(),
        day=fields.Date(),
        aware=UtcTimestamp(),
    )
    sql = str(sql_json_object(ok, cols))
    assert "'{\"id\":'" in sql and "',\"count\":'" in sql and "to_json" in sql
    assert str(sql_json_object(RecomendacaoOut, [c for c in Recomendacao.__table__.c]))
    refused = {
        "nested": schema(n=fields.Nested(schema(a=fields.String()))),
        "function": schema(n=fields.Function(lambda obj: 1)),
        "datetime": schema(aware=fields.DateTime()),
        "naive timestamp": schema(naive=UtcTimestamp()),
        "string over an integer": schema(n=fields.String()),
        "integer over a float": schema(ratio=fields.Integer()),
        "single precision": schema(single=fields.Float()),
        "decimal": schema(money=fields.Decimal()),
        "no such column": schema(missing=fields.String()),
        "raw": schema(name=fields.Raw()),
    }
    for why, refused_schema in refused.items():
        with pytest.raises(TypeError):
            sql_json_object(refused_schema, cols)
            pytest.fail(why)
