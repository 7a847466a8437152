"""The size grid of one product across the network, with a batch's moves applied."""

from __future__ import annotations

import uuid
from collections import defaultdict

from sqlalchemy import select

from extensions import db
from models.remanejamento import Recomendacao
from models.stock import Estoque, Loja
from services.stock.catalogue import get_produto
from services.stock.decisions import active_condition, get_lote, newest_lote


def grade(produto_id: uuid.UUID, lote_id: uuid.UUID | None = None) -> dict:
    """GradeMatrix of a product.

    One row per store and CD (CDs first, then stores, each by name), one cell per
    size of the product's grid. ``delta`` is the net move of the batch's active
    recommendations (received minus sent; the newest batch when ``lote_id`` is
    None, zero when there is no batch), ``final = atual + delta`` and
    ``ruptura`` is ``final <= 0``.
    """
    produto = get_produto(produto_id)
    lote = get_lote(lote_id) if lote_id is not None else newest_lote()
    tamanhos = list(produto.tamanhos or [])
    atual: dict[tuple[uuid.UUID, str], int] = {
        (loja_id, tamanho): qtd
        for loja_id, tamanho, qtd in db.session.execute(
            select(Estoque.loja_id, Estoque.tamanho, Estoque.qtd).where(Estoque.produto_id == produto.id)
        )
    }
    delta: dict[tuple[uuid.UUID, str], int] = defaultdict(int)
    if lote is not None:
        for origem, destino, tamanho, qtd in db.session.execute(
            select(
                Recomendacao.origem_id, Recomendacao.destino_id, Recomendacao.tamanho, Recomendacao.quantidade
            ).where(
                Recomendacao.lote_id == lote.id, Recomendacao.produto_id == produto.id, active_condition()
            )
        ):
            delta[(origem, tamanho)] -= qtd
            delta[(destino, tamanho)] += qtd
    lojas = db.session.scalars(select(Loja).order_by(Loja.is_cd.desc(), Loja.nome, Loja.codigo))
    rows = []
    for loja in lojas:
        cells = []
        for tamanho in tamanhos:
            a = atual.get((loja.id, tamanho), 0)
            d = delta.get((loja.id, tamanho), 0)
            cells.append(
                {
                    "lojaId": loja.id,
                    "tamanho": tamanho,
                    "atual": a,
                    "delta": d,
                    "final": a + d,
                    "ruptura": a + d <= 0,
                }
            )
        rows.append(
            {
                "lojaId": loja.id,
                "cells": cells,
                "totalAtual": sum(c["atual"] for c in cells),
                "totalFinal": sum(c["final"] for c in cells),
            }
        )
    return {"produtoId": produto.id, "tamanhos": tamanhos, "rows": rows, "loteId": lote.id if lote else None}
