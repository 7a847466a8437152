"""Wire shapes of batches, recommendations, rules, cadence, history and the grade matrix (metrics:
``schemas/stock/metrics.py``)."""

from __future__ import annotations

from datetime import UTC

import sqlalchemy as sa
from marshmallow import fields, post_load

from models.stock_batches import MOTIVOS_RECUSA, PRIORIDADES, STATUS_RECOMENDACAO, TIPOS_ORIGEM
from schemas.common import QuerySchema, StockSchema
from schemas.fast import sql_quoted, sql_text
from schemas.fields import Boolean, Integer, List, Text, choice
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
    periodo = _rule(
        "periodo",
        metadata={
            "description": "Days of sales behind the averages, the justifications and what an origin keeps; "
            "the demand estimate reads at least these, a quarter by default (ENGINE_HISTORY_DAYS)"
        },
    )
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
        metadata={
            "description": "Ids (uuid) of existing stores never used as origin or destination; an id "
            "that names no store is refused (422 at its index)"
        },
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
            "0.3 units sold over 14 days, beyond the ganhoMinimo per unit moved every transfer must add, to "
            "be worth making. 0 = shipments are free."
        },
    )
    custo_km = _rule(
        "custoKm",
        metadata={
            "description": "Cost per km of a shipment, in thousandths of an expected unit sold: 1 means a "
            "500 km trip costs 0.5 units sold more than custoEnvio. 0 = distance costs nothing."
        },
    )
    ganho_minimo = _rule(
        "ganhoMinimo",
        metadata={
            "description": "What each unit moved must add, in thousandths of an expected unit sold over "
            "14 days, net of what its origin loses by giving it and of its share of the trip; a minimum "
            "lot (qtdMinima) ships when its units add this much on average. 150 means about one more "
            "sale for every 7 units moved. Lower moves more units for smaller gains (more transfers to "
            "approve, pick and receive); higher keeps only the surest moves."
        },
    )

    projeto_operacoes_id = fields.UUID(
        data_key="projetoOperacoes",
        allow_none=True,
        load_default=None,
        metadata={
            "description": "The tracker project (id) where approved transfers become the stores' work: "
            "one issue per batch and origin, one sub-issue per destination, kept in step with the "
            "transfers. `null` (the default) turns it off. The admin must own or administer the "
            "project's organization (422 otherwise); the issues are written in their name."
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
