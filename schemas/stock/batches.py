"""Wire shapes of batches, recommendations, rules, cadence, metrics, history and the grade matrix."""

from __future__ import annotations

from datetime import UTC

import sqlalchemy as sa
from marshmallow import fields, post_load

from models.stock_batches import MOTIVOS_RECUSA, PRIORIDADES, STATUS_RECOMENDACAO, TIPOS_ORIGEM
from schemas.common import QuerySchema, StockSchema
from schemas.fast import sql_quoted, sql_text
from schemas.fields import Boolean, Integer, List, Text, choice
from services.stock.outcome import AGRUPAMENTOS
from services.stock.recommendations import FiltroRecomendacoes
from services.stock.rules import CADENCIAS, RULES, NovasRegras

STATUS_HISTORICO = ("aprovada", "executada", "recusada", "vetada")
MAX_INT = 2_147_483_647
MAX_LOJAS_BLOQUEADAS = 1000
MAX_MARCAS_BLOQUEADAS = 500


def _d(text: str) -> dict:
    return {"description": text}


class UtcTimestamp(fields.String):
    """A moment as ISO 8601 text in UTC to the second, ``2026-11-16T09:30:00Z``."""

    @staticmethod
    def fast_convert(value):
        if value is None:
            return None
        return value.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")

    @staticmethod
    def sql_json(column):
        # The JSON string on PostgreSQL (schemas.fast.sql_json_object): to_char truncates the
        # fraction as isoformat(timespec="seconds") does.
        if not getattr(getattr(column.type, "impl", column.type), "timezone", False):
            raise TypeError("UtcTimestamp needs a column with a time zone")
        utc = sa.func.timezone(sql_text("UTC"), column)
        return sql_quoted(sa.func.to_char(utc, sql_text('YYYY-MM-DD"T"HH24:MI:SS"Z"')))

    def _serialize(self, value, attr, obj, **kwargs):
        return self.fast_convert(value)


# --- recommendations and batches -------------------------------------------------------------


class RecomendacaoOut(StockSchema):
    id = fields.UUID(required=True)
    produto_id = fields.UUID(data_key="produtoId", required=True)
    cor = fields.String(required=True)
    tamanho = fields.String(required=True)
    destino_id = fields.UUID(data_key="lojaDestinoId", required=True)
    origem_id = fields.UUID(data_key="origemId", required=True)
    tipo_origem = fields.String(
        data_key="tipoOrigem",
        required=True,
        metadata={"description": "`cd` or `loja`", "enum": TIPOS_ORIGEM},
    )
    quantidade = fields.Integer(required=True)
    estoque_destino = fields.Integer(data_key="estoqueDestino", required=True)
    venda_media_destino = fields.Float(
        data_key="vendaMediaDestino",
        required=True,
        metadata={"description": "Units/day over the rules' periodo"},
    )
    estoque_origem = fields.Integer(data_key="estoqueOrigem", required=True)
    venda_media_origem = fields.Float(data_key="vendaMediaOrigem", required=True)
    distancia_km = fields.Float(data_key="distanciaKm", required=True)
    justificativa = fields.String(required=True)
    prioridade = fields.String(required=True, metadata={"enum": PRIORIDADES})
    status = fields.String(
        required=True,
        metadata={
            "enum": STATUS_RECOMENDACAO,
            "description": "pendente → aprovada → executada; pendente/aprovada → recusada",
        },
    )
    dias_ate_ruptura = fields.Integer(
        data_key="diasAteRuptura", required=True, metadata={"description": "Destination's days of cover"}
    )
    em_campanha = fields.Boolean(data_key="emCampanha", required=True)
    score = fields.Integer(required=True, metadata={"description": "0–100, after the learning adjustment"})
    data = fields.Date(
        required=True, metadata={"description": "Date of the batch generation that proposed it"}
    )
    vetado = fields.Boolean(dump_default=False)
    motivo_veto = fields.String(data_key="motivoVeto", allow_none=True)
    motivo_recusa = fields.String(
        data_key="motivoRecusa",
        allow_none=True,
        metadata={
            "description": "Why it was refused, when a reason was given (extension to the spec)",
            "enum": [*MOTIVOS_RECUSA, None],
        },
    )
    motivo_recusa_texto = fields.String(
        data_key="motivoRecusaTexto",
        allow_none=True,
        metadata={"description": "The refuser's words about the reason (extension to the spec)"},
    )
    quantidade_recebida = fields.Integer(
        data_key="quantidadeRecebida",
        allow_none=True,
        metadata={"description": "Units the destination received; null until received (extension)"},
    )
    recebida_em = UtcTimestamp(
        data_key="recebidaEm",
        allow_none=True,
        metadata={"description": "ISO 8601 UTC time of the receipt; null until received (extension)"},
    )
    venda_extra_esperada = fields.Float(
        data_key="vendaExtraEsperada",
        allow_none=True,
        metadata={
            "description": "The engine's expected extra units sold at the destination over 14 days (the ESI "
            "of `/metricas/resultado`, the figure the justification quotes); null on recommendations "
            "generated before it was stored (extension)"
        },
    )


class LoteOut(StockSchema):
    id = fields.UUID(required=True)
    semana = fields.String(required=True, metadata={"description": "ISO week, e.g. `2026-W47`"})
    periodo = fields.String(
        required=True, metadata={"description": "ISO interval of the week, e.g. `2026-11-16/2026-11-22`"}
    )
    criado_em = UtcTimestamp(
        data_key="criadoEm", required=True, metadata={"description": "ISO 8601 UTC timestamp of creation"}
    )
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
    lote_id = fields.UUID(
        data_key="loteId",
        metadata={"description": "Batch to list; the newest batch when absent (extension to the spec)"},
    )
    produto_id = fields.UUID(data_key="produtoId")
    destino_id = fields.UUID(data_key="lojaDestinoId")
    origem_id = fields.UUID(data_key="origemId")
    prioridade = choice(PRIORIDADES)
    status = choice(STATUS_RECOMENDACAO)
    tipo_origem = choice(TIPOS_ORIGEM, data_key="tipoOrigem")
    q = Text(
        max_length=100,
        metadata={
            "description": "Words searched, case-insensitively, in the SKU and product name and in the "
            "origin's and destination's names and codes; every word must match one of them "
            "(extension to the spec)"
        },
    )

    @post_load
    def to_filter(self, data: dict, **kwargs) -> FiltroRecomendacoes:
        return FiltroRecomendacoes(**data)


class AtivasQuery(PagingQuery):
    ativas = Boolean(
        load_default=False, metadata={"description": "Only recommendations not vetoed and not `recusada`"}
    )


class VetoRequest(StockSchema):
    motivo = Text(required=True, min_length=1, max_length=2000, multiline=True)


class RecusaRequest(StockSchema):
    """Optional body of ``recusar``: why the recommendation is refused."""

    # The parser lets this body be absent (the spec's ``recusar`` has none).
    OPTIONAL_BODY = True

    motivo = choice(
        MOTIVOS_RECUSA,
        metadata={
            "description": "`estoque_errado` (the stock figures were wrong: not held against the route "
            "by the learning step), `loja_recusa`, `custo` or `outro` (then `motivoTexto` is required)"
        },
    )
    motivo_texto = Text(
        data_key="motivoTexto",
        max_length=2000,
        multiline=True,
        metadata={"description": "The reason in words; required with `outro`"},
    )


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
    atrasada = fields.Boolean(required=True, metadata=_d("`idadeDias` above `diasAlerta`"))


class TransitoLoja(StockSchema):
    loja_id = fields.UUID(data_key="lojaId", required=True)
    dias_alerta = fields.Integer(
        data_key="diasAlerta", required=True, metadata=_d("TRANSIT_ALERT_DAYS: older than this is `atrasada`")
    )
    itens = fields.List(fields.Nested(ItemTransito), required=True)


class NodoFluxo(StockSchema):
    id = fields.UUID(required=True)
    nome = fields.String(required=True)
    is_cd = fields.Boolean(data_key="isCd", required=True)
    total_enviado = fields.Integer(
        data_key="totalEnviado", required=True, metadata={"description": "Units leaving the node"}
    )
    total_recebido = fields.Integer(
        data_key="totalRecebido", required=True, metadata={"description": "Units arriving at the node"}
    )
    itens_enviados = fields.Integer(
        data_key="itensEnviados", required=True, metadata={"description": "Recommendations leaving"}
    )
    itens_recebidos = fields.Integer(
        data_key="itensRecebidos", required=True, metadata={"description": "Recommendations arriving"}
    )


class TotaisLote(StockSchema):
    total_itens = fields.Integer(
        data_key="totalItens", required=True, metadata={"description": "Active recommendations"}
    )
    total_unidades = fields.Integer(data_key="totalUnidades", required=True)
    origens = fields.Integer(required=True, metadata={"description": "Distinct origins"})
    destinos = fields.Integer(required=True, metadata={"description": "Distinct destinations"})
    alta_prioridade = fields.Integer(data_key="altaPrioridade", required=True)
    via_cd = fields.Integer(
        data_key="viaCd", required=True, metadata={"description": "Recommendations whose origin is a CD"}
    )
    via_loja = fields.Integer(
        data_key="viaLoja", required=True, metadata={"description": "Recommendations from store to store"}
    )


# --- rules and cadence -----------------------------------------------------------------------


def _rule(name: str, **kwargs) -> fields.Field:
    """The field of rule ``name``: default, bounds and choices from ``services.stock.rules``."""
    rule = RULES[name]
    kwargs = {"data_key": name, **kwargs}
    if rule.choices is not None:
        return choice(rule.choices, load_default=rule.default, **kwargs)
    if rule.minimum is not None:
        return Integer(load_default=rule.default, minimum=rule.minimum, maximum=rule.maximum, **kwargs)
    return Boolean(load_default=rule.default, **kwargs)


class RegrasPayload(StockSchema):
    priorizar_cd = _rule("priorizarCd")
    qtd_minima = _rule("qtdMinima")
    periodo = _rule("periodo", metadata={"description": "Days of sales history behind the averages"})
    peso_distancia = _rule("pesoDistancia")
    peso_giro = _rule("pesoGiro")
    peso_estoque = _rule("pesoEstoque")
    bloqueio_campanha = _rule("bloqueioCampanha")
    qtd_maxima = _rule("qtdMaxima")
    lojas_bloqueadas = List(
        # Parsed by the service, which reports a malformed id with the other rule errors.
        Text(min_length=1, max_length=64, metadata={"format": "uuid"}),
        max_items=MAX_LOJAS_BLOQUEADAS,
        load_default=list,
        data_key="lojasBloqueadas",
        metadata={"description": "Store ids (uuid) never used as origin or destination"},
    )
    marcas_bloqueadas = List(
        Text(min_length=1, max_length=100),
        max_items=MAX_MARCAS_BLOQUEADAS,
        load_default=list,
        data_key="marcasBloqueadas",
        metadata={"description": "Brand names never moved"},
    )
    custo_envio = _rule(
        "custoEnvio",
        metadata={
            "description": "Cost of one shipment (one origin -> destination route in a batch, shared by "
            "every item it carries), in thousandths of an expected unit sold: 300 means a trip must add "
            "0.3 units sold over 14 days to be worth making. 0 = shipments are free."
        },
    )
    custo_km = _rule(
        "custoKm",
        metadata={
            "description": "Cost per km of a shipment, in thousandths of an expected unit sold: 1 means a "
            "500 km trip costs 0.5 units sold more than custoEnvio. 0 = distance costs nothing."
        },
    )

    @post_load
    def to_rules(self, data: dict, **kwargs) -> NovasRegras:
        return NovasRegras(**data)


class CadencePayload(StockSchema):
    cadence = choice(CADENCIAS, required=True)
    proximo_lote = fields.Date(
        data_key="proximoLote",
        dump_only=True,
        allow_none=True,
        metadata={"description": "First day on which `flask batches run-due` generates the next batch"},
    )


# --- history ---------------------------------------------------------------------------------


class ResultadoDetalhe(StockSchema):
    """What happened after the decision, in numbers."""

    executada_em = fields.Date(
        data_key="executadaEm",
        allow_none=True,
        required=True,
        metadata=_d("Business day it was executed; null if not executed"),
    )
    dias_desde_execucao = fields.Integer(
        data_key="diasDesdeExecucao",
        allow_none=True,
        required=True,
        metadata=_d("Days from the execution to today; null if not executed"),
    )
    vendidas_destino = fields.Integer(
        data_key="vendidasDestino",
        allow_none=True,
        required=True,
        metadata=_d("Units of the product and size sold at the destination since the execution day"),
    )
    sell_through = fields.Float(
        data_key="sellThrough",
        allow_none=True,
        required=True,
        metadata=_d("min(vendidasDestino, qtd) / qtd, 0–1; null if not executed"),
    )
    estoque_destino_atual = fields.Integer(
        data_key="estoqueDestinoAtual",
        required=True,
        metadata=_d("Units of the product and size at the destination now"),
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
    resultado_detalhe = fields.Nested(
        ResultadoDetalhe, data_key="resultadoDetalhe", required=True, metadata=_d("The same, in numbers")
    )
    motivo_veto = fields.String(
        data_key="motivoVeto", allow_none=True, metadata=_d("Reason of the veto, when vetoed")
    )
    motivo_recusa = fields.String(
        data_key="motivoRecusa",
        allow_none=True,
        metadata={**_d("Reason code of the refusal, when refused with one"), "enum": [*MOTIVOS_RECUSA, None]},
    )
    motivo_recusa_texto = fields.String(
        data_key="motivoRecusaTexto", allow_none=True, metadata=_d("The refusal's reason in words")
    )
    lote_id = fields.UUID(data_key="loteId", required=True, metadata=_d("Batch of the recommendation"))


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

    lote_atual_id = fields.UUID(
        data_key="loteAtualId", allow_none=True, required=True, metadata=_d("Newest batch; null when none")
    )
    semana_atual = fields.String(
        data_key="semanaAtual", allow_none=True, required=True, metadata=_d("ISO week of the newest batch")
    )
    lote_atual_status = fields.String(
        data_key="loteAtualStatus",
        allow_none=True,
        required=True,
        metadata=_d("`aberto` or `concluido`, of the newest batch"),
    )
    pendentes = fields.Integer(required=True, metadata=_d("Pending and not vetoed, every batch"))
    aprovadas = fields.Integer(required=True, metadata=_d("Approved, not yet executed, not vetoed"))
    executadas = fields.Integer(required=True, metadata=_d("Executed, every batch"))
    recusadas = fields.Integer(required=True, metadata=_d("Refused (and not vetoed), every batch"))
    vetadas = fields.Integer(required=True, metadata=_d("Vetoed, every batch"))
    taxa_aprovacao = fields.Float(
        data_key="taxaAprovacao",
        allow_none=True,
        required=True,
        metadata=_d("(aprovadas + executadas) / (aprovadas + executadas + recusadas + vetadas), 0–1"),
    )
    itens_lote_atual = fields.Integer(
        data_key="itensLoteAtual", required=True, metadata=_d("Active recommendations of the newest batch")
    )
    unidades_lote_atual = fields.Integer(
        data_key="unidadesLoteAtual", required=True, metadata=_d("Units of those active recommendations")
    )
    unidades_pendentes_lote_atual = fields.Integer(
        data_key="unidadesPendentesLoteAtual", required=True, metadata=_d("Units still pending among them")
    )
    alta_prioridade_pendentes = fields.Integer(
        data_key="altaPrioridadePendentes",
        required=True,
        metadata=_d("Pending `alta` priority ones in the newest batch"),
    )
    lojas_em_risco = fields.Integer(
        data_key="lojasEmRisco", required=True, metadata=_d("Stores with at least one size at risk")
    )
    tamanhos_em_risco = fields.Integer(
        data_key="tamanhosEmRisco",
        required=True,
        metadata=_d(
            "Store x product x size cells (stores, not CDs) that sold in the rules' periodo "
            "and have under 7 days of cover at that pace"
        ),
    )
    rupturas = fields.Integer(required=True, metadata=_d("Of those, cells with no stock"))
    risco_em = fields.Date(
        data_key="riscoEm",
        required=True,
        metadata=_d(
            "Day the risk figures describe: the newest batch's generation date (figures computed from "
            "the stock and sales the engine read), or today when no batch exists yet"
        ),
    )
    periodo_dias = fields.Integer(
        data_key="periodoDias", required=True, metadata=_d("Days of sales behind the risk figures")
    )


class ValidacaoItem(StockSchema):
    recomendacao_id = fields.UUID(
        data_key="recomendacaoId", required=True, metadata=_d("Executed recommendation")
    )
    produto = fields.String(required=True, metadata=_d("Product name"))
    tamanho = fields.String(required=True, metadata=_d("Size"))
    origem = fields.String(required=True, metadata=_d("Origin name"))
    destino = fields.String(required=True, metadata=_d("Destination name"))
    qtd = fields.Integer(required=True, metadata=_d("Units moved"))
    executada_em = fields.Date(
        data_key="executadaEm", required=True, metadata=_d("Business day of the execution")
    )
    vendidas_destino = fields.Integer(
        data_key="vendidasDestino", required=True, metadata=_d("Units sold at the destination since")
    )
    sell_through = fields.Float(
        data_key="sellThrough", required=True, metadata=_d("min(vendidasDestino, qtd) / qtd, 0–1")
    )
    estoque_destino_atual = fields.Integer(
        data_key="estoqueDestinoAtual", required=True, metadata=_d("Units at the destination now")
    )


class Validacao(StockSchema):
    """How the executed transfers sold at their destinations afterwards."""

    transferencias_executadas = fields.Integer(
        data_key="transferenciasExecutadas", required=True, metadata=_d("Executed recommendations")
    )
    unidades_transferidas = fields.Integer(
        data_key="unidadesTransferidas", required=True, metadata=_d("Units they moved")
    )
    unidades_vendidas_destino = fields.Integer(
        data_key="unidadesVendidasDestino",
        required=True,
        metadata=_d("Units of those products and sizes sold at the destinations since each execution"),
    )
    sell_through_medio = fields.Float(
        data_key="sellThroughMedio",
        allow_none=True,
        required=True,
        metadata=_d("Σ min(vendidas, qtd) / Σ qtd over executed transfers, 0–1; null when none"),
    )
    com_venda = fields.Integer(
        data_key="comVenda", required=True, metadata=_d("Executed transfers that sold at least one unit")
    )
    sem_venda = fields.Integer(
        data_key="semVenda", required=True, metadata=_d("Executed transfers that sold nothing yet")
    )
    itens = fields.List(
        fields.Nested(ValidacaoItem),
        required=True,
        metadata=_d("The 100 most recent executions, newest first"),
    )


class SemanaEfetividade(StockSchema):
    semana = fields.String(required=True, metadata=_d("ISO week"))
    lote_id = fields.UUID(data_key="loteId", required=True, metadata=_d("The week's batch"))
    geradas = fields.Integer(required=True, metadata=_d("Recommendations in the batch"))
    aprovadas = fields.Integer(
        required=True, metadata=_d("Approved at some point and not vetoed (status aprovada or executada)")
    )
    executadas = fields.Integer(required=True, metadata=_d("Executed"))
    recusadas = fields.Integer(required=True, metadata=_d("Refused"))
    vetadas = fields.Integer(required=True, metadata=_d("Vetoed"))
    pendentes = fields.Integer(required=True, metadata=_d("Still pending and not vetoed"))
    unidades_movidas = fields.Integer(
        data_key="unidadesMovidas", required=True, metadata=_d("Units of the executed ones")
    )
    rupturas_evitadas = fields.Integer(
        data_key="rupturasEvitadas",
        required=True,
        metadata=_d(
            "Executed ones whose destination had at most 7 days of cover and sold the size after execution"
        ),
    )
    taxa_aprovacao = fields.Float(
        data_key="taxaAprovacao",
        allow_none=True,
        required=True,
        metadata=_d("aprovadas / (aprovadas + recusadas + vetadas); null when none"),
    )


class EfetividadeSemanal(StockSchema):
    """Per ISO week (one batch each), what was proposed and what came of it."""

    semanas = fields.List(fields.Nested(SemanaEfetividade), required=True, metadata=_d("Newest week first"))


class FatorAprendizado(StockSchema):
    chave = fields.String(required=True, metadata=_d("Route `origem → destino`, brand or category"))
    origem_id = fields.UUID(
        data_key="origemId", allow_none=True, metadata=_d("Origin of a route; null for brands and categories")
    )
    destino_id = fields.UUID(
        data_key="destinoId", allow_none=True, metadata=_d("Destination of a route; null otherwise")
    )
    decididas = fields.Integer(required=True, metadata=_d("Decided recommendations in the window"))
    aceitas = fields.Integer(required=True, metadata=_d("aprovada or executada, not vetoed"))
    rejeitadas = fields.Integer(required=True, metadata=_d("recusada or vetoed"))
    taxa_aceitacao = fields.Float(
        data_key="taxaAceitacao", required=True, metadata=_d("aceitas / decididas, 0–1")
    )
    fator_decisoes = fields.Float(
        data_key="fatorDecisoes",
        required=True,
        metadata=_d("From refusals and vetoes: 1 − 0.5 × rejeitadas / (decididas + 2), (0.5, 1]"),
    )
    transferencias_medidas = fields.Integer(
        data_key="transferenciasMedidas",
        required=True,
        metadata=_d(
            "Executed transfers of the window with a complete 14-day outcome window and a prediction "
            "(routes and categories; 0 for brands)"
        ),
    )
    esi = fields.Float(
        allow_none=True, required=True, metadata=_d("Their expected sales increase; null when none measured")
    )
    asi = fields.Integer(
        allow_none=True,
        required=True,
        metadata=_d("Their moved units sold in 14 days beyond the destination's own stock; null when none"),
    )
    razao_resultado = fields.Float(
        data_key="razaoResultado", allow_none=True, required=True, metadata=_d("asi / esi, unshrunk")
    )
    fator_resultado = fields.Float(
        data_key="fatorResultado",
        required=True,
        metadata=_d(
            "clip((asi + 20) / (esi + 20), 0.5, 1.5): the ratio shrunk toward 1; 1 when none measured"
        ),
    )
    fator = fields.Float(
        required=True,
        metadata=_d(
            "Score multiplier applied in the next batch: min(1, fatorDecisoes × fatorResultado), (0.25, 1]"
        ),
    )
    ajuste_percentual = fields.Float(
        data_key="ajustePercentual",
        required=True,
        metadata=_d("Score reduction the factor causes, in percent"),
    )


class Aprendizado(StockSchema):
    """Acceptance by route, brand and category and the score adjustment it causes."""

    janela_dias = fields.Integer(
        data_key="janelaDias", required=True, metadata=_d("Days of decisions considered")
    )
    metodo = fields.String(required=True, metadata=_d("How the factors are computed"))
    decididas = fields.Integer(required=True, metadata=_d("Decided recommendations in the window"))
    taxa_aceitacao = fields.Float(
        data_key="taxaAceitacao", allow_none=True, required=True, metadata=_d("Overall acceptance, 0–1")
    )
    rotas = fields.List(
        fields.Nested(FatorAprendizado), required=True, metadata=_d("Per route, strongest penalty first")
    )
    marcas = fields.List(
        fields.Nested(FatorAprendizado), required=True, metadata=_d("Per brand, strongest penalty first")
    )
    categorias = fields.List(
        fields.Nested(FatorAprendizado), required=True, metadata=_d("Per category, strongest penalty first")
    )


# --- outcome (ESI against ASI) ---------------------------------------------------------------


class ResultadoQuery(QuerySchema):
    agrupar = choice(
        AGRUPAMENTOS,
        load_default="lote",
        metadata=_d("Group by batch (`lote`, newest first), route `origem → destino`, brand or category"),
    )
    lote_id = fields.UUID(data_key="loteId", metadata=_d("Only the transfers of this batch (404 if unknown)"))
    limite = Integer(
        load_default=100, minimum=1, maximum=1000, metadata=_d("Groups returned; `total` covers them all")
    )


class ResultadoParciais(StockSchema):
    transferencias = fields.Integer(required=True, metadata=_d("Transfers whose window is still open"))
    unidades = fields.Integer(required=True, metadata=_d("Units they moved"))
    esi = fields.Float(allow_none=True, required=True, metadata=_d("Their ESI; null without a prediction"))
    asi = fields.Integer(required=True, metadata=_d("Units of the moved ones sold so far"))
    dias_decorridos_min = fields.Integer(
        data_key="diasDecorridosMin", allow_none=True, required=True, metadata=_d("Fewest days elapsed")
    )
    dias_decorridos_max = fields.Integer(
        data_key="diasDecorridosMax", allow_none=True, required=True, metadata=_d("Most days elapsed")
    )


class ResultadoJanela(StockSchema):
    dias = fields.Integer(required=True, metadata=_d("Window length: 14 or 28 days from the receipt"))
    parcial = fields.Boolean(
        required=True, metadata=_d("Some transfer's window is still open (see `parciais`)")
    )
    transferencias = fields.Integer(required=True, metadata=_d("Transfers whose window is complete"))
    unidades = fields.Integer(required=True, metadata=_d("Units they moved"))
    esi = fields.Float(
        allow_none=True, required=True, metadata=_d("Their ESI (those with a prediction); null when none")
    )
    asi = fields.Integer(
        required=True, metadata=_d("Units of the moved ones sold in the window (vendido do movimentado)")
    )
    pct_vendido = fields.Float(
        data_key="pctVendido", allow_none=True, required=True, metadata=_d("asi / unidades, 0–1")
    )
    razao = fields.Float(
        allow_none=True,
        required=True,
        metadata=_d(
            "ASI / ESI over complete windows of transfers with a prediction; the ESI is over the "
            "engine's 14-day horizon, so the 28-day ratio also counts later sales"
        ),
    )
    parciais = fields.Nested(ResultadoParciais, required=True, metadata=_d("The open windows, apart"))


class ResultadoGrupo(StockSchema):
    chave = fields.String(
        required=True,
        metadata=_d("ISO week of the batch, route `origem → destino`, brand, category or `total`"),
    )
    lote_id = fields.UUID(
        data_key="loteId", allow_none=True, required=True, metadata=_d("Batch; null otherwise")
    )
    origem_id = fields.UUID(
        data_key="origemId", allow_none=True, required=True, metadata=_d("Route's origin")
    )
    destino_id = fields.UUID(
        data_key="destinoId", allow_none=True, required=True, metadata=_d("Route's destination")
    )
    transferencias = fields.Integer(required=True, metadata=_d("Executed transfers"))
    unidades_movidas = fields.Integer(
        data_key="unidadesMovidas",
        required=True,
        metadata=_d("Units received (quantity sent until received)"),
    )
    nao_recebidas = fields.Integer(
        data_key="naoRecebidas",
        required=True,
        metadata=_d("Executed and not yet received: windows from execution"),
    )
    sem_previsao = fields.Integer(
        data_key="semPrevisao",
        required=True,
        metadata=_d("Generated before the prediction was stored: no ESI"),
    )
    esi = fields.Float(
        allow_none=True,
        required=True,
        metadata=_d("Expected sales increase of all of them, units over 14 days"),
    )
    janela_14 = fields.Nested(ResultadoJanela, data_key="janela14", required=True)
    janela_28 = fields.Nested(ResultadoJanela, data_key="janela28", required=True)


class Resultado(StockSchema):
    """Expected (ESI) against actual (ASI) sales increase of the executed transfers."""

    agrupar = fields.String(required=True, metadata={**_d("Grouping"), "enum": list(AGRUPAMENTOS)})
    referencia = fields.Date(required=True, metadata=_d("Today: windows ending before it are complete"))
    horizonte_dias = fields.Integer(
        data_key="horizonteDias", required=True, metadata=_d("The engine's horizon, the ESI's days")
    )
    metodo = fields.String(required=True, metadata=_d("How ESI and ASI are computed"))
    total = fields.Nested(ResultadoGrupo, required=True, metadata=_d("Every visible transfer"))
    grupos = fields.List(
        fields.Nested(ResultadoGrupo), required=True, metadata=_d("Per group, up to `limite`")
    )


# --- grade matrix ----------------------------------------------------------------------------


class GradeQuery(QuerySchema):
    lote_id = fields.UUID(
        data_key="loteId", metadata={"description": "Batch whose deltas to show; the newest when absent"}
    )


class GradeCell(StockSchema):
    loja_id = fields.UUID(data_key="lojaId", required=True)
    tamanho = fields.String(required=True)
    atual = fields.Integer(required=True)
    delta = fields.Integer(required=True, metadata={"description": "Net move of the batch's active ones"})
    final = fields.Integer(required=True)
    ruptura = fields.Boolean(required=True, metadata={"description": "final <= 0"})


class GradeRow(StockSchema):
    loja_id = fields.UUID(data_key="lojaId", required=True)
    cells = fields.List(fields.Nested(GradeCell), required=True)
    total_atual = fields.Integer(data_key="totalAtual", required=True)
    total_final = fields.Integer(data_key="totalFinal", required=True)
    grade_atual = fields.String(
        data_key="gradeAtual",
        required=True,
        allow_none=True,
        metadata={
            "enum": ["completa", "quebrada", None],
            "description": "The store's run of the product now: `completa` when every key size "
            "(`tamanhosChave`) is in stock, `quebrada` when the store holds some of the product but a key "
            "size is out (it then sells less of the sizes it has), null when it holds none",
        },
    )
    grade = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "enum": ["completa", "quebrada", None],
            "description": "`gradeAtual` after the batch's moves",
        },
    )


class GradeMatrix(StockSchema):
    produto_id = fields.UUID(data_key="produtoId", required=True)
    tamanhos = fields.List(fields.String(), required=True)
    tamanhos_chave = fields.List(
        fields.String(),
        data_key="tamanhosChave",
        required=True,
        metadata={
            "description": "Key sizes of the run: the 2 best sellers over the network in the rules' "
            "`periodo` (the middle of the grid when nothing sold); empty for runs of fewer than 3 sizes"
        },
    )
    rows = fields.List(fields.Nested(GradeRow), required=True)
    lote_id = fields.UUID(
        data_key="loteId", allow_none=True, metadata={"description": "Batch the deltas come from"}
    )
