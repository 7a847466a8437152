"""Dashboard metrics and the history of decided recommendations, computed from the stored data."""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import numpy as np
from flask import current_app
from sqlalchemy import and_, case, false, func, or_, select, true
from sqlalchemy.orm import aliased

from extensions import db
from models.auth import User
from models.stock import Estoque, Loja, Produto, Venda
from models.stock_batches import Lote, Recomendacao
from services.clock import today
from services.stock import learning
from services.stock.engine_contract import EngineInput
from services.stock.recommendations import active_condition, newest_lote, visible_condition
from services.stock.rules import get_rules, history_days

RISK_COVER_DAYS = 7  # a cell with less cover than this is "at risk"
VALIDACAO_ITEMS = 100
_active_pending = (Recomendacao.status == "pendente") & (Recomendacao.vetado == false())


@dataclass(frozen=True)
class Kpis:
    """Headline numbers of the dashboard (``KpisDashboard`` on the wire)."""

    lote_atual_id: uuid.UUID | None
    semana_atual: str | None
    lote_atual_status: str | None
    pendentes: int
    aprovadas: int
    executadas: int
    recusadas: int
    vetadas: int
    taxa_aprovacao: float | None
    itens_lote_atual: int
    unidades_lote_atual: int
    unidades_pendentes_lote_atual: int
    alta_prioridade_pendentes: int
    lojas_em_risco: int
    tamanhos_em_risco: int
    rupturas: int
    risco_em: date
    periodo_dias: int


@dataclass(frozen=True)
class ValidacaoItem:
    """One executed transfer and how it sold at its destination since."""

    recomendacao_id: uuid.UUID
    produto: str
    tamanho: str
    origem: str
    destino: str
    qtd: int
    executada_em: date | None
    vendidas_destino: int
    sell_through: float
    estoque_destino_atual: int


@dataclass(frozen=True)
class Validacao:
    transferencias_executadas: int
    unidades_transferidas: int
    unidades_vendidas_destino: int
    sell_through_medio: float | None
    com_venda: int
    sem_venda: int
    itens: list[ValidacaoItem]


@dataclass(frozen=True)
class SemanaEfetividade:
    """One ISO week's batch: what it proposed and what came of it."""

    semana: str
    lote_id: uuid.UUID
    geradas: int
    aprovadas: int
    executadas: int
    recusadas: int
    vetadas: int
    pendentes: int
    unidades_movidas: int
    rupturas_evitadas: int
    taxa_aprovacao: float | None


@dataclass(frozen=True)
class EfetividadeSemanal:
    semanas: list[SemanaEfetividade]  # newest week first


@dataclass(frozen=True)
class ResultadoDetalhe:
    """What happened after a decision, in numbers."""

    executada_em: date | None
    dias_desde_execucao: int | None
    vendidas_destino: int | None
    sell_through: float | None
    estoque_destino_atual: int


@dataclass(frozen=True)
class HistoricoItem:
    """One decided recommendation as the history shows it."""

    id: uuid.UUID
    data: date
    produto: str  # name, colour and size
    destino: str
    origem: str
    qtd: int
    usuario: str
    status: str  # ``vetada`` when vetoed, else the recommendation's status
    resultado: str
    resultado_detalhe: ResultadoDetalhe
    motivo_veto: str | None
    lote_id: uuid.UUID
    motivo_recusa: str | None = None
    motivo_recusa_texto: str | None = None


def _count(cond):
    return func.coalesce(func.sum(case((cond, 1), else_=0)), 0)


def _sold_since_execution(extra_where) -> dict[uuid.UUID, int]:
    """Units of each executed recommendation's product and size sold at its destination since execution."""
    stmt = (
        select(Recomendacao.id, func.coalesce(func.sum(Venda.qtd), 0))
        .select_from(Recomendacao)
        .outerjoin(
            Venda,
            and_(
                Venda.loja_id == Recomendacao.destino_id,
                Venda.produto_id == Recomendacao.produto_id,
                Venda.tamanho == Recomendacao.tamanho,
                Venda.data >= Recomendacao.executada_data,
            ),
        )
        .where(Recomendacao.status == "executada", *extra_where)
        .group_by(Recomendacao.id)
    )
    return {rid: int(q) for rid, q in db.session.execute(stmt)}


def _stock_at_destination(rec_ids: list[uuid.UUID]) -> dict[uuid.UUID, int]:
    if not rec_ids:
        return {}
    stmt = (
        select(Recomendacao.id, Estoque.qtd)
        .join(
            Estoque,
            and_(
                Estoque.loja_id == Recomendacao.destino_id,
                Estoque.produto_id == Recomendacao.produto_id,
                Estoque.tamanho == Recomendacao.tamanho,
            ),
        )
        .where(Recomendacao.id.in_(rec_ids))
    )
    return {rid: int(q) for rid, q in db.session.execute(stmt)}


# --- kpis-dashboard --------------------------------------------------------------------------


def kpis_dashboard() -> Kpis:
    ref = today()
    periodo = history_days(get_rules())
    counts = db.session.execute(
        select(
            _count(_active_pending),
            _count((Recomendacao.status == "aprovada") & (Recomendacao.vetado == false())),
            _count(Recomendacao.status == "executada"),
            _count((Recomendacao.status == "recusada") & (Recomendacao.vetado == false())),
            _count(Recomendacao.vetado == true()),
        )
    ).one()
    pendentes, aprovadas, executadas, recusadas, vetadas = (int(c) for c in counts)
    decididas = aprovadas + executadas + recusadas + vetadas
    lote = newest_lote()
    itens = unidades = unidades_pendentes = alta = 0
    status = None
    if lote is not None:
        row = db.session.execute(
            select(
                func.count(),
                func.coalesce(func.sum(Recomendacao.quantidade), 0),
                func.coalesce(
                    func.sum(case((Recomendacao.status == "pendente", Recomendacao.quantidade), else_=0)), 0
                ),
                _count((Recomendacao.status == "pendente") & (Recomendacao.prioridade == "alta")),
            ).where(Recomendacao.lote_id == lote.id, active_condition())
        ).one()
        itens, unidades, unidades_pendentes, alta = (int(v) for v in row)
        status = "aberto" if unidades_pendentes else "concluido"

    if lote is not None and lote.tamanhos_em_risco is not None:
        risk = (lote.tamanhos_em_risco, lote.lojas_em_risco, lote.rupturas)
        risk_day = lote.data
    else:
        risk, risk_day = _live_risk(ref, periodo), ref
    return Kpis(
        lote_atual_id=lote.id if lote else None,
        semana_atual=lote.semana if lote else None,
        lote_atual_status=status,
        pendentes=pendentes,
        aprovadas=aprovadas,
        executadas=executadas,
        recusadas=recusadas,
        vetadas=vetadas,
        taxa_aprovacao=round((aprovadas + executadas) / decididas, 4) if decididas else None,
        itens_lote_atual=itens,
        unidades_lote_atual=unidades,
        unidades_pendentes_lote_atual=unidades_pendentes,
        alta_prioridade_pendentes=alta,
        lojas_em_risco=int(risk[1]),
        tamanhos_em_risco=int(risk[0]),
        rupturas=int(risk[2]),
        risco_em=risk_day,
        periodo_dias=periodo,
    )


def risk_figures(inputs: EngineInput) -> tuple[int, int, int]:
    """(cells at risk, stores with one, stock-outs among them) from the engine's arrays.

    A store (not a CD) x item cell is at risk when it sold in the window and its stock
    covers under ``RISK_COVER_DAYS`` days at that pace.
    """
    stores = ~inputs.node_is_cd
    stock = inputs.stock[stores].astype(np.float64)
    sold = inputs.sales[stores].astype(np.float64)
    at_risk = (sold > 0) & (stock * inputs.history_days < RISK_COVER_DAYS * sold)
    return int(at_risk.sum()), int(at_risk.any(axis=1).sum()), int((at_risk & (stock <= 0)).sum())


def _live_risk(ref: date, periodo: int) -> tuple[int, int, int]:
    """The same figures straight from the tables, for a network without any batch yet."""
    sold = (
        select(
            Venda.loja_id.label("loja_id"),
            Venda.produto_id.label("produto_id"),
            Venda.tamanho.label("tamanho"),
            func.sum(Venda.qtd).label("vendido"),
        )
        .where(Venda.data >= ref - timedelta(days=periodo), Venda.data < ref)
        .group_by(Venda.loja_id, Venda.produto_id, Venda.tamanho)
        .subquery()
    )
    qtd = func.coalesce(Estoque.qtd, 0)
    # cover = qtd / (vendido / periodo) < RISK_COVER_DAYS, without dividing.
    row = db.session.execute(
        select(func.count(), func.count(func.distinct(sold.c.loja_id)), _count(qtd <= 0))
        .select_from(sold)
        .join(Loja, Loja.id == sold.c.loja_id)
        .outerjoin(
            Estoque,
            and_(
                Estoque.loja_id == sold.c.loja_id,
                Estoque.produto_id == sold.c.produto_id,
                Estoque.tamanho == sold.c.tamanho,
            ),
        )
        .where(Loja.is_cd == false(), sold.c.vendido > 0, qtd * periodo < RISK_COVER_DAYS * sold.c.vendido)
    ).one()
    return int(row[0]), int(row[1]), int(row[2])


# --- validacao -------------------------------------------------------------------------------


def validacao() -> Validacao:
    sold = _sold_since_execution([])
    origem, destino = aliased(Loja), aliased(Loja)
    recs = db.session.execute(
        select(Recomendacao, Produto.nome, origem.nome, destino.nome)
        .join(Produto, Produto.id == Recomendacao.produto_id)
        .join(origem, origem.id == Recomendacao.origem_id)
        .join(destino, destino.id == Recomendacao.destino_id)
        .where(Recomendacao.status == "executada")
        .order_by(Recomendacao.executada_em.desc().nulls_last(), Recomendacao.id)
    ).all()
    total_qtd = sum(r.Recomendacao.quantidade for r in recs)
    vendidas = sum(sold.get(r.Recomendacao.id, 0) for r in recs)
    absorbed = sum(min(sold.get(r.Recomendacao.id, 0), r.Recomendacao.quantidade) for r in recs)
    com_venda = sum(1 for r in recs if sold.get(r.Recomendacao.id, 0) > 0)
    shown = recs[:VALIDACAO_ITEMS]
    stock = _stock_at_destination([r.Recomendacao.id for r in shown])
    itens = []
    for rec, produto_nome, origem_nome, destino_nome in shown:
        v = sold.get(rec.id, 0)
        itens.append(
            ValidacaoItem(
                recomendacao_id=rec.id,
                produto=produto_nome,
                tamanho=rec.tamanho,
                origem=origem_nome,
                destino=destino_nome,
                qtd=rec.quantidade,
                executada_em=rec.executada_data,
                vendidas_destino=v,
                sell_through=round(min(v, rec.quantidade) / rec.quantidade, 4),
                estoque_destino_atual=stock.get(rec.id, 0),
            )
        )
    return Validacao(
        transferencias_executadas=len(recs),
        unidades_transferidas=total_qtd,
        unidades_vendidas_destino=vendidas,
        sell_through_medio=round(absorbed / total_qtd, 4) if total_qtd else None,
        com_venda=com_venda,
        sem_venda=len(recs) - com_venda,
        itens=itens,
    )


# --- efetividade-semanal ---------------------------------------------------------------------


def efetividade_semanal() -> EfetividadeSemanal:
    rows = db.session.execute(
        select(
            Lote.id,
            Lote.semana,
            func.count(Recomendacao.id),
            _count(Recomendacao.status.in_(("aprovada", "executada")) & (Recomendacao.vetado == false())),
            _count(Recomendacao.status == "executada"),
            _count(Recomendacao.status == "recusada"),
            _count(Recomendacao.vetado == true()),
            _count(_active_pending),
            func.coalesce(
                func.sum(case((Recomendacao.status == "executada", Recomendacao.quantidade), else_=0)), 0
            ),
        )
        .select_from(Lote)
        .outerjoin(Recomendacao, Recomendacao.lote_id == Lote.id)
        .group_by(Lote.id, Lote.semana, Lote.inicio)
        .order_by(Lote.inicio.desc())
    ).all()
    sold = _sold_since_execution([Recomendacao.dias_ate_ruptura <= RISK_COVER_DAYS])
    avoided: dict[uuid.UUID, int] = defaultdict(int)
    if sold:
        for rid, lote_id in db.session.execute(
            select(Recomendacao.id, Recomendacao.lote_id).where(
                Recomendacao.status == "executada", Recomendacao.dias_ate_ruptura <= RISK_COVER_DAYS
            )
        ):
            if sold.get(rid, 0) > 0:
                avoided[lote_id] += 1
    semanas = []
    for lote_id, semana, geradas, aprovadas, executadas, recusadas, vetadas, pendentes, unidades in rows:
        decididas = int(aprovadas) + int(recusadas) + int(vetadas)
        semanas.append(
            SemanaEfetividade(
                semana=semana,
                lote_id=lote_id,
                geradas=int(geradas),
                aprovadas=int(aprovadas),
                executadas=int(executadas),
                recusadas=int(recusadas),
                vetadas=int(vetadas),
                pendentes=int(pendentes),
                unidades_movidas=int(unidades),
                rupturas_evitadas=avoided.get(lote_id, 0),
                taxa_aprovacao=round(int(aprovadas) / decididas, 4) if decididas else None,
            )
        )
    return EfetividadeSemanal(semanas)


def aprendizado() -> learning.Aprendizado:
    return learning.aprendizado(today())


# --- historico -------------------------------------------------------------------------------


def _business_day(moment: datetime | None, fallback: date) -> date:
    if moment is None:
        return fallback
    return moment.astimezone(ZoneInfo(current_app.config["TIMEZONE"])).date()


def _resultado(
    rec: Recomendacao, vendidas: int | None, estoque: int, ref: date
) -> tuple[str, ResultadoDetalhe]:
    executada = rec.status == "executada"
    detalhe = ResultadoDetalhe(
        executada_em=rec.executada_data,
        dias_desde_execucao=(ref - rec.executada_data).days if rec.executada_data else None,
        vendidas_destino=vendidas if executada else None,
        sell_through=round(min(vendidas or 0, rec.quantidade) / rec.quantidade, 4) if executada else None,
        estoque_destino_atual=estoque,
    )
    if rec.vetado:
        texto = f"Vetada ({rec.motivo_veto}); nada foi movido. Estoque atual no destino: {estoque}."
    elif rec.status == "executada" and rec.executada_data is None:
        # Executions always record their day; a row written outside the API may lack it.
        texto = f"Executada (data não registrada). Estoque atual no destino: {estoque}."
    elif rec.status == "executada":
        texto = (
            f"{vendidas} de {rec.quantidade} unidades vendidas no destino desde a execução em "
            f"{rec.executada_data.isoformat()} ({detalhe.dias_desde_execucao} dias); estoque atual no destino: {estoque}."
        )
    elif rec.status == "aprovada":
        texto = f"Aprovada, aguardando execução. Estoque atual no destino: {estoque}."
    else:
        texto = f"Recusada; nada foi movido. Estoque atual no destino: {estoque}."
    return texto, detalhe


def historico(user: User, status: str | None, limit: int) -> list[HistoricoItem]:
    """Decided recommendations (approved, executed, refused or vetoed), latest decision first."""
    origem, destino = aliased(Loja), aliased(Loja)
    stmt = (
        select(Recomendacao, Produto.nome, origem.nome, destino.nome)
        .join(Produto, Produto.id == Recomendacao.produto_id)
        .join(origem, origem.id == Recomendacao.origem_id)
        .join(destino, destino.id == Recomendacao.destino_id)
    )
    if status is None:
        stmt = stmt.where(or_(Recomendacao.status != "pendente", Recomendacao.vetado == true()))
    elif status == "vetada":
        stmt = stmt.where(Recomendacao.vetado == true())
    else:
        stmt = stmt.where(Recomendacao.status == status, Recomendacao.vetado == false())
    cond = visible_condition(user)
    if cond is not None:
        stmt = stmt.where(cond)
    stmt = stmt.order_by(Recomendacao.ultima_acao_em.desc().nulls_last(), Recomendacao.id).limit(limit)
    rows = db.session.execute(stmt).all()
    ids = [r.Recomendacao.id for r in rows]
    executed = [r.Recomendacao.id for r in rows if r.Recomendacao.status == "executada"]
    sold = _sold_since_execution([Recomendacao.id.in_(executed)]) if executed else {}
    stock = _stock_at_destination(ids)
    ref = today()
    out = []
    for rec, produto_nome, origem_nome, destino_nome in rows:
        texto, detalhe = _resultado(rec, sold.get(rec.id, 0), stock.get(rec.id, 0), ref)
        out.append(
            HistoricoItem(
                id=rec.id,
                data=_business_day(rec.ultima_acao_em, rec.data),
                produto=f"{produto_nome} {rec.cor} {rec.tamanho}",
                destino=destino_nome,
                origem=origem_nome,
                qtd=rec.quantidade,
                usuario=rec.ultima_acao_por_nome or "",
                status="vetada" if rec.vetado else rec.status,
                resultado=texto,
                resultado_detalhe=detalhe,
                motivo_veto=rec.motivo_veto,
                lote_id=rec.lote_id,
                motivo_recusa=rec.motivo_recusa,
                motivo_recusa_texto=rec.motivo_recusa_texto,
            )
        )
    return out
