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
    is_cd = fields.Boolean(data_key="isCd", dump_default=False)
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
    produto_id = fields.UUID(required=True, data_key="produtoId")
    por_tamanho = fields.List(fields.Nested(PorTamanho), required=True, data_key="porTamanho")
    total = fields.Integer(required=True)


class EstoqueQuery(QuerySchema):
    loja_id = fields.UUID(required=True, data_key="lojaId")


class CellQuery(QuerySchema):
    loja_id = fields.UUID(required=True, data_key="lojaId")
    produto_id = fields.UUID(required=True, data_key="produtoId")
    tamanho = Text(required=True, max_length=20)


class VendaDia(StockSchema):
    data = fields.Date(required=True)
    qtd = fields.Integer(required=True)


class EstoqueCell(StockSchema):
    """One store x product x size: stock, sales over the rules' period and cover."""

    loja_id = fields.UUID(required=True, data_key="lojaId", attribute="loja.id")
    loja_nome = fields.String(required=True, data_key="lojaNome", attribute="loja.nome")
    produto_id = fields.UUID(required=True, data_key="produtoId", attribute="produto.id")
    sku = fields.String(required=True, attribute="produto.sku")
    produto_nome = fields.String(required=True, data_key="produtoNome", attribute="produto.nome")
    tamanho = fields.String(required=True)
    estoque = fields.Integer(required=True, metadata={"description": "Units on hand now"})
    periodo_dias = fields.Integer(
        required=True,
        data_key="periodoDias",
        metadata={"description": "Days of history behind the average (rules' periodo)"},
    )
    vendas_periodo = fields.Integer(
        required=True, data_key="vendasPeriodo", metadata={"description": "Units sold in those days"}
    )
    venda_media_diaria = fields.Float(
        required=True, data_key="vendaMediaDiaria", metadata={"description": "vendasPeriodo / periodoDias"}
    )
    dias_cobertura = fields.Float(
        allow_none=True,
        required=True,
        data_key="diasCobertura",
        metadata={"description": "estoque / vendaMediaDiaria; null when nothing sold"},
    )
    em_campanha = fields.Boolean(required=True, data_key="emCampanha")
    ultimas_vendas = fields.List(
        fields.Nested(VendaDia),
        required=True,
        data_key="ultimasVendas",
        metadata={"description": "Units sold on each of the last 14 days, oldest first, zeros included"},
    )
