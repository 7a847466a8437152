"""The size grid of one product across the network, with a batch's moves applied."""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import func, select

from extensions import db
from models.stock import Estoque, Loja, Produto, Venda
from models.stock_batches import Recomendacao
from services.clock import today
from services.stock.catalogue import get_produto
from services.stock.engine_demand import KEY_SIZES
from services.stock.recommendations import active_condition, get_lote, newest_lote

# Runs shorter than this have no key sizes (as in the engine).
MIN_RUN_FOR_KEYS = 3


def key_sizes(produto: Produto) -> list[str]:
    """The product's key sizes: its KEY_SIZES best sellers over the network in the rules' ``periodo``
    (the engine's definition), the middle of the grid when it sold nothing; none for runs under 3 sizes."""
    from services.stock.rules import get_rules, history_days  # rules imports the batches' services

    tamanhos = list(dict.fromkeys(produto.tamanhos or []))
    if len(tamanhos) < MIN_RUN_FOR_KEYS:
        return []
    on = today()
    start = on - timedelta(days=history_days(get_rules()))
    sold = dict(
        db.session.execute(
            select(Venda.tamanho, func.sum(Venda.qtd))
            .join(Loja, Loja.id == Venda.loja_id)
            .where(
                Venda.produto_id == produto.id, Venda.data >= start, Venda.data < on, Loja.is_cd.is_(False)
            )
            .group_by(Venda.tamanho)
        ).all()
    )
    middle = (len(tamanhos) - 1) / 2
    # best sellers first; without sales, the sizes nearest the middle of the grid
    ranked = sorted(range(len(tamanhos)), key=lambda i: (-(sold.get(tamanhos[i]) or 0), abs(i - middle), i))
    return [tamanhos[i] for i in sorted(ranked[:KEY_SIZES])]


def run_state(quantities: dict[str, int], keys: list[str]) -> str | None:
    """ "completa" when every key size is in stock, "quebrada" when the store holds some of the
    product but a key size is out, None when it holds none (or the run has no key sizes)."""
    if not keys or sum(max(q, 0) for q in quantities.values()) <= 0:
        return None
    return "completa" if all(quantities.get(k, 0) > 0 for k in keys) else "quebrada"


@dataclass(frozen=True)
class GradeCell:
    loja_id: uuid.UUID
    tamanho: str
    atual: int
    delta: int  # net move of the batch's active recommendations

    @property
    def final(self) -> int:
        return self.atual + self.delta

    @property
    def ruptura(self) -> bool:
        return self.final <= 0


@dataclass(frozen=True)
class GradeRow:
    loja_id: uuid.UUID
    cells: list[GradeCell]
    grade_atual: str | None = None  # run_state of the store's stock now
    grade: str | None = None  # run_state after the batch's moves

    @property
    def total_atual(self) -> int:
        return sum(c.atual for c in self.cells)

    @property
    def total_final(self) -> int:
        return sum(c.final for c in self.cells)


@dataclass(frozen=True)
class GradeMatrix:
    produto_id: uuid.UUID
    tamanhos: list[str]
    rows: list[GradeRow]
    lote_id: uuid.UUID | None  # the batch the deltas come from
    tamanhos_chave: list[str] = field(default_factory=list)  # key sizes of the run (see key_sizes)

    def column_totals(self, attribute: str) -> list[int]:
        """Network total of each size's ``atual`` or ``delta``."""
        return [sum(getattr(r.cells[i], attribute) for r in self.rows) for i in range(len(self.tamanhos))]


def grade(produto_id: uuid.UUID, lote_id: uuid.UUID | None = None) -> GradeMatrix:
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
    keys = key_sizes(produto)
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
    # Only the ids, in the grid's order: a network has hundreds of stores, no object needed.
    loja_ids = db.session.scalars(select(Loja.id).order_by(Loja.is_cd.desc(), Loja.nome, Loja.codigo))
    rows = []
    for loja_id in loja_ids:
        cells = [
            GradeCell(loja_id, tamanho, atual.get((loja_id, tamanho), 0), delta.get((loja_id, tamanho), 0))
            for tamanho in tamanhos
        ]
        rows.append(
            GradeRow(
                loja_id,
                cells,
                grade_atual=run_state({c.tamanho: c.atual for c in cells}, keys),
                grade=run_state({c.tamanho: c.final for c in cells}, keys),
            )
        )
    return GradeMatrix(produto.id, tamanhos, rows, lote.id if lote else None, tamanhos_chave=keys)
