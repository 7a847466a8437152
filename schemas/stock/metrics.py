"""Wire shapes of the metrics: dashboard KPIs, validation, weekly effectiveness, learning, and the
outcome of executed transfers (expected against actual sales)."""

from __future__ import annotations

from marshmallow import fields

from schemas.common import QuerySchema, StockSchema
from schemas.fields import Integer, choice
from services.stock.outcome import AGRUPAMENTOS


def _d(text: str) -> dict:
    return {"description": text}


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
