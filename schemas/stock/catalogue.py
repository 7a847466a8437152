"""Stores, products and stock."""

from __future__ import annotations

from marshmallow import fields

from schemas.common import QuerySchema, StockSchema
from schemas.fields import Text


class LojaOut(StockSchema):
    id = fields.UUID(required=True)
    codigo = fields.String(metadata={"description": "The retailer's own store code (import key)"})
    nome = fields.String(required=True)
    cidade = fields.String(required=True)
    bloqueada = fields.Boolean(required=True)
    isCd = fields.Boolean(attribute="is_cd", dump_default=False)
    lat = fields.Float(allow_none=True)
    lng = fields.Float(allow_none=True)


class ProdutoOut(StockSchema):
    id = fields.UUID(required=True)
    nome = fields.String(required=True)
    sku = fields.String(required=True)
    marca = fields.String(required=True)
    categoria = fields.String(required=True)
    colecao = fields.String(required=True)
    imagem = fields.String(allow_none=True)
    cor = fields.String(metadata={"description": "Colour of this SKU"})
    tamanhos = fields.List(fields.String(), metadata={"description": "Size run in grid order"})


class PorTamanho(StockSchema):
    tamanho = fields.String(required=True)
    qtd = fields.Integer(required=True)


class EstoqueItem(StockSchema):
    produtoId = fields.UUID(required=True)
    porTamanho = fields.List(fields.Nested(PorTamanho), required=True)
    total = fields.Integer(required=True)


class EstoqueQuery(QuerySchema):
    lojaId = fields.UUID(required=True)


class CellQuery(QuerySchema):
    lojaId = fields.UUID(required=True)
    produtoId = fields.UUID(required=True)
    tamanho = Text(required=True, max_length=20)


class VendaDia(StockSchema):
    data = fields.Date(required=True)
    qtd = fields.Integer(required=True)


class EstoqueCell(StockSchema):
    """One store x product x size: stock, sales over the rules' period and cover."""

    lojaId = fields.UUID(required=True)
    lojaNome = fields.String(required=True)
    produtoId = fields.UUID(required=True)
    sku = fields.String(required=True)
    produtoNome = fields.String(required=True)
    tamanho = fields.String(required=True)
    estoque = fields.Integer(required=True, metadata={"description": "Units on hand now"})
    periodoDias = fields.Integer(
        required=True, metadata={"description": "Days of history behind the average (rules' periodo)"}
    )
    vendasPeriodo = fields.Integer(required=True, metadata={"description": "Units sold in those days"})
    vendaMediaDiaria = fields.Float(required=True, metadata={"description": "vendasPeriodo / periodoDias"})
    diasCobertura = fields.Float(
        allow_none=True,
        required=True,
        metadata={"description": "estoque / vendaMediaDiaria; null when nothing sold"},
    )
    emCampanha = fields.Boolean(required=True)
    ultimasVendas = fields.List(
        fields.Nested(VendaDia),
        required=True,
        metadata={"description": "Units sold on each of the last 14 days, oldest first, zeros included"},
    )
