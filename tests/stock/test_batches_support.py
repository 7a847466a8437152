"""Builders shared by the batch, decision, rule, metric and grade tests (no tests here).

``make_lote``/``make_rec`` insert a batch and its recommendations directly, so the
decision and metric tests do not depend on the engine's choices.
"""

from __future__ import annotations

import itertools
from datetime import date, timedelta

from extensions import db
from models.remanejamento import PRIORIDADE_RANK, Lote, Recomendacao
from models.stock import Loja, Produto
from services.stock.batches import iso_week

API = "/api/v1/remanejamento"
_pos = itertools.count()


def make_lote(on: date = date(2026, 11, 18)) -> Lote:
    semana, inicio, fim = iso_week(on)
    lote = Lote(semana=semana, inicio=inicio, fim=fim, data=on, geracoes=1)
    db.session.add(lote)
    db.session.flush()
    return lote


def make_rec(
    lote: Lote,
    produto: Produto,
    origem: Loja,
    destino: Loja,
    *,
    tamanho: str = "38",
    quantidade: int = 5,
    prioridade: str = "media",
    score: int = 50,
    status: str = "pendente",
    vetado: bool = False,
    dias_ate_ruptura: int = 3,
    executada_data: date | None = None,
) -> Recomendacao:
    rec = Recomendacao(
        lote_id=lote.id,
        produto_id=produto.id,
        tamanho=tamanho,
        cor=produto.cor,
        origem_id=origem.id,
        destino_id=destino.id,
        tipo_origem="cd" if origem.is_cd else "loja",
        quantidade=quantidade,
        estoque_destino=1,
        venda_media_destino=1.5,
        estoque_origem=30,
        venda_media_origem=0.1,
        distancia_km=12.0,
        justificativa="Destino vende 1,5/dia e tem 1 unidade; origem tem 30 e vende 0,1/dia.",
        prioridade=prioridade,
        prioridade_rank=PRIORIDADE_RANK[prioridade],
        score=score,
        posicao=next(_pos),
        dias_ate_ruptura=dias_ate_ruptura,
        em_campanha=False,
        data=lote.data,
        status=status,
        vetado=vetado,
        motivo_veto="motivo" if vetado else None,
        executada_data=executada_data,
    )
    db.session.add(rec)
    db.session.flush()
    return rec


def week_days(monday: date) -> list[date]:
    return [monday + timedelta(days=i) for i in range(7)]
