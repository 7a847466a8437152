"""Schemas of stock in transit: a receipt, a store's transfers in transit and the problems
reported on a transfer (``services/stock/transit.py``, ``services/stock/problems.py``)."""

from __future__ import annotations

from marshmallow import fields

from models.stock_operations import PROBLEMAS
from schemas.common import StockSchema
from schemas.fields import Integer, Text, choice
from schemas.stock.batches import MAX_INT


def _d(text: str) -> dict:
    return {"description": text}


class RecebimentoRequest(StockSchema):
    quantidade_recebida = Integer(
        data_key="quantidadeRecebida",
        required=True,
        minimum=0,
        maximum=MAX_INT,
        metadata={"description": "Units that arrived, 0 to the transfer's `quantidade` (above it: 422)"},
    )


class ItemTransito(StockSchema):
    id = fields.UUID(required=True, metadata=_d("The recommendation"))
    lote_id = fields.UUID(data_key="loteId", required=True)
    sentido = fields.String(
        required=True,
        metadata={
            "enum": ("entrada", "saida"),
            "description": "`entrada`: into the store; `saida`: out of it",
        },
    )
    status = fields.String(
        required=True,
        metadata={"enum": ("aprovada", "executada"), "description": "`aprovada`: still to send"},
    )
    produto_id = fields.UUID(data_key="produtoId", required=True)
    produto_nome = fields.String(data_key="produtoNome", required=True)
    sku = fields.String(required=True)
    cor = fields.String(required=True)
    tamanho = fields.String(required=True)
    origem_id = fields.UUID(data_key="origemId", required=True)
    origem_nome = fields.String(data_key="origemNome", required=True)
    destino_id = fields.UUID(data_key="lojaDestinoId", required=True)
    destino_nome = fields.String(data_key="destinoNome", required=True)
    quantidade = fields.Integer(required=True)
    desde = fields.Date(
        required=True, metadata=_d("Business day it was executed (approved, while only approved)")
    )
    idade_dias = fields.Integer(data_key="idadeDias", required=True, metadata=_d("Days since `desde`"))
    dias_alerta = fields.Integer(
        data_key="diasAlerta",
        required=True,
        metadata=_d(
            "Days after `desde` past which it is late: once executed, the 90th percentile (rounded up) of "
            "its route's days from execution to receipt over its receipts of the last 182 days, where it "
            "has 3; otherwise, and while only approved, the list's `diasAlerta` (TRANSIT_ALERT_DAYS)"
        ),
    )
    atrasada = fields.Boolean(required=True, metadata=_d("`idadeDias` above this transfer's `diasAlerta`"))
    previsao_chegada = fields.Date(
        data_key="previsaoChegada",
        required=True,
        allow_none=True,
        metadata=_d(
            "Expected arrival of an executed transfer: its execution day plus its route's lead time, the "
            "median days from execution to receipt (rounded up) of the route's transfers received in the "
            "last 182 days where it has 3 of them, else of all the store's routes; null while only "
            "approved, or when the store's routes have fewer than 3 receipts"
        ),
    )


class TransitoLoja(StockSchema):
    loja_id = fields.UUID(data_key="lojaId", required=True)
    dias_alerta = fields.Integer(
        data_key="diasAlerta",
        required=True,
        metadata=_d(
            "TRANSIT_ALERT_DAYS: the alert of a transfer whose route has fewer than 3 receipts, or only approved"
        ),
    )
    itens = fields.List(fields.Nested(ItemTransito), required=True)


# --- problems with a transfer ------------------------------------------------------------------


class ProblemaRequest(StockSchema):
    tipo = choice(
        PROBLEMAS,
        required=True,
        metadata={
            "description": "`avariada`, `faltando` (units missing), `tamanho_errado` or `outro` (with `texto`)"
        },
    )
    texto = Text(max_length=2000, multiline=True, allow_none=True, load_default=None)


class ProblemaOut(StockSchema):
    id = fields.UUID(required=True)
    tipo = fields.String(required=True, metadata={"enum": list(PROBLEMAS)})
    issue_key = fields.String(
        data_key="issueKey", required=True, metadata={"description": "The tracker issue, e.g. `OPS-12`"}
    )
    issue_title = fields.String(data_key="issueTitulo", required=True)
    issue_url = fields.String(data_key="issueUrl", required=True)
    relatado_por = fields.String(
        data_key="relatadoPor",
        allow_none=True,
        required=True,
        metadata={
            "description": "Who reported it; null when the receipt opened it (fewer units than shipped)"
        },
    )
    created_at = fields.DateTime(data_key="criadoEm", required=True)


class ProblemaList(StockSchema):
    problemas = fields.List(fields.Nested(ProblemaOut), required=True)
