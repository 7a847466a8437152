"""Wire shapes of batches, recommendations, rules, cadence, metrics, history and the grade matrix."""

from __future__ import annotations

from marshmallow import fields

from models.remanejamento import PRIORIDADES, STATUS_RECOMENDACAO, TIPOS_ORIGEM
from schemas.common import QuerySchema, StockSchema
from schemas.fields import Boolean, Integer, List, Text, choice
from services.stock.rules import CADENCIAS, RULES

STATUS_HISTORICO = ("aprovada", "executada", "recusada", "vetada")
MAX_INT = 2_147_483_647
MAX_LOJAS_BLOQUEADAS = 1000
MAX_MARCAS_BLOQUEADAS = 500


def _d(text: str) -> dict:
    return {"description": text}


# --- recommendations and batches -------------------------------------------------------------


class RecomendacaoOut(StockSchema):
    id = fields.UUID(required=True)
    produtoId = fields.UUID(required=True, attribute="produto_id")
    cor = fields.String(required=True)
    tamanho = fields.String(required=True)
    lojaDestinoId = fields.UUID(required=True, attribute="destino_id")
    origemId = fields.UUID(required=True, attribute="origem_id")
    tipoOrigem = fields.String(
        required=True,
        attribute="tipo_origem",
        metadata={"description": "`cd` or `loja`", "enum": TIPOS_ORIGEM},
    )
    quantidade = fields.Integer(required=True)
    estoqueDestino = fields.Integer(required=True, attribute="estoque_destino")
    vendaMediaDestino = fields.Float(
        required=True,
        attribute="venda_media_destino",
        metadata={"description": "Units/day over the rules' periodo"},
    )
    estoqueOrigem = fields.Integer(required=True, attribute="estoque_origem")
    vendaMediaOrigem = fields.Float(required=True, attribute="venda_media_origem")
    distanciaKm = fields.Float(required=True, attribute="distancia_km")
    justificativa = fields.String(required=True)
    prioridade = fields.String(required=True, metadata={"enum": PRIORIDADES})
    status = fields.String(
        required=True,
        metadata={
            "enum": STATUS_RECOMENDACAO,
            "description": "pendente → aprovada → executada; pendente/aprovada → recusada",
        },
    )
    diasAteRuptura = fields.Integer(
        required=True, attribute="dias_ate_ruptura", metadata={"description": "Destination's days of cover"}
    )
    emCampanha = fields.Boolean(required=True, attribute="em_campanha")
    score = fields.Integer(required=True, metadata={"description": "0–100, after the learning adjustment"})
    data = fields.Date(
        required=True, metadata={"description": "Date of the batch generation that proposed it"}
    )
    vetado = fields.Boolean(dump_default=False)
    motivoVeto = fields.String(allow_none=True, attribute="motivo_veto")


class LoteOut(StockSchema):
    id = fields.UUID(required=True)
    semana = fields.String(required=True, metadata={"description": "ISO week, e.g. `2026-W47`"})
    periodo = fields.String(
        required=True, metadata={"description": "ISO interval of the week, e.g. `2026-11-16/2026-11-22`"}
    )
    criadoEm = fields.String(required=True, metadata={"description": "ISO 8601 UTC timestamp of creation"})
    status = fields.String(
        required=True,
        metadata={
            "enum": ("aberto", "concluido"),
            "description": "`aberto` while any active recommendation is `pendente`",
        },
    )
    novo = fields.Boolean(
        dump_default=False, metadata={"description": "The newest batch, until it is 7 days old"}
    )
    recomendacoes = fields.List(fields.Nested(RecomendacaoOut), dump_default=list)


class PagingQuery(QuerySchema):
    """`limite`/`offset` paging of recommendation lists (an extension to the spec)."""

    limite = Integer(
        minimum=1,
        maximum=10000,
        metadata={"description": "Page size (extension to the spec); every match when absent"},
    )
    offset = Integer(
        load_default=0,
        minimum=0,
        maximum=MAX_INT,
        metadata={"description": "Matches to skip, in list order (extension to the spec)"},
    )


class RecomendacoesQuery(PagingQuery):
    loteId = fields.UUID(
        metadata={"description": "Batch to list; the newest batch when absent (extension to the spec)"}
    )
    produtoId = fields.UUID()
    lojaDestinoId = fields.UUID()
    origemId = fields.UUID()
    prioridade = choice(PRIORIDADES)
    status = choice(STATUS_RECOMENDACAO)
    tipoOrigem = choice(TIPOS_ORIGEM)


class AtivasQuery(PagingQuery):
    ativas = Boolean(
        load_default=False, metadata={"description": "Only recommendations not vetoed and not `recusada`"}
    )


class VetoRequest(StockSchema):
    motivo = Text(required=True, min_length=1, max_length=2000, multiline=True)


class NodoFluxo(StockSchema):
    id = fields.UUID(required=True)
    nome = fields.String(required=True)
    isCd = fields.Boolean(required=True)
    totalEnviado = fields.Integer(required=True, metadata={"description": "Units leaving the node"})
    totalRecebido = fields.Integer(required=True, metadata={"description": "Units arriving at the node"})
    itensEnviados = fields.Integer(required=True, metadata={"description": "Recommendations leaving"})
    itensRecebidos = fields.Integer(required=True, metadata={"description": "Recommendations arriving"})


class TotaisLote(StockSchema):
    totalItens = fields.Integer(required=True, metadata={"description": "Active recommendations"})
    totalUnidades = fields.Integer(required=True)
    origens = fields.Integer(required=True, metadata={"description": "Distinct origins"})
    destinos = fields.Integer(required=True, metadata={"description": "Distinct destinations"})
    altaPrioridade = fields.Integer(required=True)
    viaCd = fields.Integer(required=True, metadata={"description": "Recommendations whose origin is a CD"})
    viaLoja = fields.Integer(required=True, metadata={"description": "Recommendations from store to store"})


# --- rules and cadence -----------------------------------------------------------------------


def _rule(name: str, **kwargs) -> fields.Field:
    """The field of rule ``name``: default, bounds and choices from ``services.stock.rules``."""
    rule = RULES[name]
    if rule.choices is not None:
        return choice(rule.choices, load_default=rule.default, **kwargs)
    if rule.minimum is not None:
        return Integer(load_default=rule.default, minimum=rule.minimum, maximum=rule.maximum, **kwargs)
    return Boolean(load_default=rule.default, **kwargs)


class RegrasPayload(StockSchema):
    priorizarCd = _rule("priorizarCd")
    qtdMinima = _rule("qtdMinima")
    periodo = _rule("periodo", metadata={"description": "Days of sales history behind the averages"})
    pesoDistancia = _rule("pesoDistancia")
    pesoGiro = _rule("pesoGiro")
    pesoEstoque = _rule("pesoEstoque")
    bloqueioCampanha = _rule("bloqueioCampanha")
    qtdMaxima = _rule("qtdMaxima")
    lojasBloqueadas = List(
        # Parsed by the service, which reports a malformed id with the other rule errors.
        Text(min_length=1, max_length=64, metadata={"format": "uuid"}),
        max_items=MAX_LOJAS_BLOQUEADAS,
        load_default=list,
        metadata={"description": "Store ids (uuid) never used as origin or destination"},
    )
    marcasBloqueadas = List(
        Text(min_length=1, max_length=100),
        max_items=MAX_MARCAS_BLOQUEADAS,
        load_default=list,
        metadata={"description": "Brand names never moved"},
    )


class CadencePayload(StockSchema):
    cadence = choice(CADENCIAS, required=True)
    proximoLote = fields.Date(
        dump_only=True,
        allow_none=True,
        metadata={"description": "First day on which `flask batches run-due` generates the next batch"},
    )


# --- history ---------------------------------------------------------------------------------


class ResultadoDetalhe(StockSchema):
    """What happened after the decision, in numbers."""

    executadaEm = fields.Date(
        allow_none=True, required=True, metadata=_d("Business day it was executed; null if not executed")
    )
    diasDesdeExecucao = fields.Integer(
        allow_none=True, required=True, metadata=_d("Days from the execution to today; null if not executed")
    )
    vendidasDestino = fields.Integer(
        allow_none=True,
        required=True,
        metadata=_d("Units of the product and size sold at the destination since the execution day"),
    )
    sellThrough = fields.Float(
        allow_none=True,
        required=True,
        metadata=_d("min(vendidasDestino, qtd) / qtd, 0–1; null if not executed"),
    )
    estoqueDestinoAtual = fields.Integer(
        required=True, metadata=_d("Units of the product and size at the destination now")
    )


class HistoricoItem(StockSchema):
    id = fields.UUID(required=True, metadata=_d("Recommendation id"))
    data = fields.Date(required=True, metadata=_d("Business day of the latest decision"))
    produto = fields.String(required=True, metadata=_d("Product name, colour and size"))
    destino = fields.String(required=True, metadata=_d("Destination store name"))
    origem = fields.String(required=True, metadata=_d("Origin store or CD name"))
    qtd = fields.Integer(required=True, metadata=_d("Units of the transfer"))
    usuario = fields.String(required=True, metadata=_d("Who took the latest decision"))
    status = fields.String(
        required=True,
        metadata={**_d("`vetada` when vetoed, else the recommendation's status"), "enum": STATUS_HISTORICO},
    )
    resultado = fields.String(required=True, metadata=_d("What happened after, in words"))
    resultadoDetalhe = fields.Nested(ResultadoDetalhe, required=True, metadata=_d("The same, in numbers"))
    motivoVeto = fields.String(allow_none=True, metadata=_d("Reason of the veto, when vetoed"))
    loteId = fields.UUID(required=True, metadata=_d("Batch of the recommendation"))


class HistoricoQuery(QuerySchema):
    status = choice(
        STATUS_HISTORICO,
        metadata={"description": "`vetada` selects vetoed recommendations; the others match `status`"},
    )
    limite = Integer(
        load_default=500,
        minimum=1,
        maximum=5000,
        metadata={"description": "Most recent decisions returned (extension to the spec)"},
    )


# --- metrics ---------------------------------------------------------------------------------


class KpisDashboard(StockSchema):
    """Headline numbers of the dashboard."""

    loteAtualId = fields.UUID(allow_none=True, required=True, metadata=_d("Newest batch; null when none"))
    semanaAtual = fields.String(allow_none=True, required=True, metadata=_d("ISO week of the newest batch"))
    loteAtualStatus = fields.String(
        allow_none=True, required=True, metadata=_d("`aberto` or `concluido`, of the newest batch")
    )
    pendentes = fields.Integer(required=True, metadata=_d("Pending and not vetoed, every batch"))
    aprovadas = fields.Integer(required=True, metadata=_d("Approved, not yet executed, not vetoed"))
    executadas = fields.Integer(required=True, metadata=_d("Executed, every batch"))
    recusadas = fields.Integer(required=True, metadata=_d("Refused (and not vetoed), every batch"))
    vetadas = fields.Integer(required=True, metadata=_d("Vetoed, every batch"))
    taxaAprovacao = fields.Float(
        allow_none=True,
        required=True,
        metadata=_d("(aprovadas + executadas) / (aprovadas + executadas + recusadas + vetadas), 0–1"),
    )
    itensLoteAtual = fields.Integer(required=True, metadata=_d("Active recommendations of the newest batch"))
    unidadesLoteAtual = fields.Integer(required=True, metadata=_d("Units of those active recommendations"))
    unidadesPendentesLoteAtual = fields.Integer(required=True, metadata=_d("Units still pending among them"))
    altaPrioridadePendentes = fields.Integer(
        required=True, metadata=_d("Pending `alta` priority ones in the newest batch")
    )
    lojasEmRisco = fields.Integer(required=True, metadata=_d("Stores with at least one size at risk"))
    tamanhosEmRisco = fields.Integer(
        required=True,
        metadata=_d(
            "Store x product x size cells (stores, not CDs) that sold in the rules' periodo "
            "and have under 7 days of cover at that pace"
        ),
    )
    rupturas = fields.Integer(required=True, metadata=_d("Of those, cells with no stock"))
    riscoEm = fields.Date(
        required=True,
        metadata=_d(
            "Day the risk figures describe: the newest batch's generation date (figures computed from "
            "the stock and sales the engine read), or today when no batch exists yet"
        ),
    )
    periodoDias = fields.Integer(required=True, metadata=_d("Days of sales behind the risk figures"))


class ValidacaoItem(StockSchema):
    recomendacaoId = fields.UUID(required=True, metadata=_d("Executed recommendation"))
    produto = fields.String(required=True, metadata=_d("Product name"))
    tamanho = fields.String(required=True, metadata=_d("Size"))
    origem = fields.String(required=True, metadata=_d("Origin name"))
    destino = fields.String(required=True, metadata=_d("Destination name"))
    qtd = fields.Integer(required=True, metadata=_d("Units moved"))
    executadaEm = fields.Date(required=True, metadata=_d("Business day of the execution"))
    vendidasDestino = fields.Integer(required=True, metadata=_d("Units sold at the destination since"))
    sellThrough = fields.Float(required=True, metadata=_d("min(vendidasDestino, qtd) / qtd, 0–1"))
    estoqueDestinoAtual = fields.Integer(required=True, metadata=_d("Units at the destination now"))


class Validacao(StockSchema):
    """How the executed transfers sold at their destinations afterwards."""

    transferenciasExecutadas = fields.Integer(required=True, metadata=_d("Executed recommendations"))
    unidadesTransferidas = fields.Integer(required=True, metadata=_d("Units they moved"))
    unidadesVendidasDestino = fields.Integer(
        required=True,
        metadata=_d("Units of those products and sizes sold at the destinations since each execution"),
    )
    sellThroughMedio = fields.Float(
        allow_none=True,
        required=True,
        metadata=_d("Σ min(vendidas, qtd) / Σ qtd over executed transfers, 0–1; null when none"),
    )
    comVenda = fields.Integer(required=True, metadata=_d("Executed transfers that sold at least one unit"))
    semVenda = fields.Integer(required=True, metadata=_d("Executed transfers that sold nothing yet"))
    itens = fields.List(
        fields.Nested(ValidacaoItem),
        required=True,
        metadata=_d("The 100 most recent executions, newest first"),
    )


class SemanaEfetividade(StockSchema):
    semana = fields.String(required=True, metadata=_d("ISO week"))
    loteId = fields.UUID(required=True, metadata=_d("The week's batch"))
    geradas = fields.Integer(required=True, metadata=_d("Recommendations in the batch"))
    aprovadas = fields.Integer(
        required=True, metadata=_d("Approved at some point and not vetoed (status aprovada or executada)")
    )
    executadas = fields.Integer(required=True, metadata=_d("Executed"))
    recusadas = fields.Integer(required=True, metadata=_d("Refused"))
    vetadas = fields.Integer(required=True, metadata=_d("Vetoed"))
    pendentes = fields.Integer(required=True, metadata=_d("Still pending and not vetoed"))
    unidadesMovidas = fields.Integer(required=True, metadata=_d("Units of the executed ones"))
    rupturasEvitadas = fields.Integer(
        required=True,
        metadata=_d(
            "Executed ones whose destination had at most 7 days of cover and sold the size after execution"
        ),
    )
    taxaAprovacao = fields.Float(
        allow_none=True,
        required=True,
        metadata=_d("aprovadas / (aprovadas + recusadas + vetadas); null when none"),
    )


class EfetividadeSemanal(StockSchema):
    """Per ISO week (one batch each), what was proposed and what came of it."""

    semanas = fields.List(fields.Nested(SemanaEfetividade), required=True, metadata=_d("Newest week first"))


class FatorAprendizado(StockSchema):
    chave = fields.String(required=True, metadata=_d("Route `origem → destino`, brand or category"))
    origemId = fields.UUID(allow_none=True, metadata=_d("Origin of a route; null for brands and categories"))
    destinoId = fields.UUID(allow_none=True, metadata=_d("Destination of a route; null otherwise"))
    decididas = fields.Integer(required=True, metadata=_d("Decided recommendations in the window"))
    aceitas = fields.Integer(required=True, metadata=_d("aprovada or executada, not vetoed"))
    rejeitadas = fields.Integer(required=True, metadata=_d("recusada or vetoed"))
    taxaAceitacao = fields.Float(required=True, metadata=_d("aceitas / decididas, 0–1"))
    fator = fields.Float(required=True, metadata=_d("Score multiplier applied in the next batch, (0.5, 1]"))
    ajustePercentual = fields.Float(
        required=True, metadata=_d("Score reduction the factor causes, in percent")
    )


class Aprendizado(StockSchema):
    """Acceptance by route, brand and category and the score adjustment it causes."""

    janelaDias = fields.Integer(required=True, metadata=_d("Days of decisions considered"))
    metodo = fields.String(required=True, metadata=_d("How the factors are computed"))
    decididas = fields.Integer(required=True, metadata=_d("Decided recommendations in the window"))
    taxaAceitacao = fields.Float(allow_none=True, required=True, metadata=_d("Overall acceptance, 0–1"))
    rotas = fields.List(
        fields.Nested(FatorAprendizado), required=True, metadata=_d("Per route, strongest penalty first")
    )
    marcas = fields.List(
        fields.Nested(FatorAprendizado), required=True, metadata=_d("Per brand, strongest penalty first")
    )
    categorias = fields.List(
        fields.Nested(FatorAprendizado), required=True, metadata=_d("Per category, strongest penalty first")
    )


# --- grade matrix ----------------------------------------------------------------------------


class GradeQuery(QuerySchema):
    loteId = fields.UUID(metadata={"description": "Batch whose deltas to show; the newest when absent"})


class GradeCell(StockSchema):
    lojaId = fields.UUID(required=True)
    tamanho = fields.String(required=True)
    atual = fields.Integer(required=True)
    delta = fields.Integer(required=True, metadata={"description": "Net move of the batch's active ones"})
    final = fields.Integer(required=True)
    ruptura = fields.Boolean(required=True, metadata={"description": "final <= 0"})


class GradeRow(StockSchema):
    lojaId = fields.UUID(required=True)
    cells = fields.List(fields.Nested(GradeCell), required=True)
    totalAtual = fields.Integer(required=True)
    totalFinal = fields.Integer(required=True)


class GradeMatrix(StockSchema):
    produtoId = fields.UUID(required=True)
    tamanhos = fields.List(fields.String(), required=True)
    rows = fields.List(fields.Nested(GradeRow), required=True)
    loteId = fields.UUID(allow_none=True, metadata={"description": "Batch the deltas come from"})
