"""The size grid of one product across the network, with a batch's moves applied."""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from typing import NamedTuple

from sqlalchemy import bindparam, func, select

from extensions import db
from models.stock import Estoque, Loja, Produto, RegrasRemanejamento, Venda
from models.stock_batches import Lote, Recomendacao
from services.clock import today
from services.errors import NotFoundError
from services.stock.engine_demand import KEY_SIZES
from services.stock.recommendations import active_condition, missing_lote, newest_lote_id_subquery

# Runs shorter than this have no key sizes (as in the engine).
MIN_RUN_FOR_KEYS = 3

# The grade's statements, built once at import: the matrix is read on every look at a product,
# and building its statements (and their cache keys) on each request cost about as much as
# running them. Values are bound per request; only ids and figures are read, no entities.
# The first reads the product, the batch (the given one, or the newest; NULL when there is
# none) and the rules' period in one round trip.
_LOTE_DADO = select(Lote.id).where(Lote.id == bindparam("lote_id")).scalar_subquery()
_PERIODO = (
    select(RegrasRemanejamento.periodo)
    .where(RegrasRemanejamento.id == bindparam("rules_id"))
    .scalar_subquery()
)
_PRODUTO = {
    newest: select(Produto.id, Produto.tamanhos, lote, _PERIODO).where(Produto.id == bindparam("produto_id"))
    for newest, lote in ((True, newest_lote_id_subquery()), (False, _LOTE_DADO))
}
_VENDAS_POR_TAMANHO = (
    select(Venda.tamanho, func.sum(Venda.qtd))
    .join(Loja, Loja.id == Venda.loja_id)
    .where(
        Venda.produto_id == bindparam("produto_id"),
        Venda.data >= bindparam("start"),
        Venda.data < bindparam("end"),
        Loja.is_cd.is_(False),
    )
    .group_by(Venda.tamanho)
)
# Every node in the grid's order (CDs first, then by name; codes are unique, so the order is
# total and a node's rows come together), each with the product's stock there: one round trip,
# and a node without stock still gets its row (of NULLs).
_NODOS_ESTOQUE = (
    select(Loja.id, Estoque.tamanho, Estoque.qtd)
    .select_from(Loja)
    .outerjoin(Estoque, (Estoque.loja_id == Loja.id) & (Estoque.produto_id == bindparam("produto_id")))
    .order_by(Loja.is_cd.desc(), Loja.nome, Loja.codigo)
)
_MOVES = select(
    Recomendacao.origem_id, Recomendacao.destino_id, Recomendacao.tamanho, Recomendacao.quantidade
).where(
    Recomendacao.lote_id == bindparam("lote_id"),
    Recomendacao.produto_id == bindparam("produto_id"),
    active_condition(),
)


def _history_days(periodo: str | None) -> int:
    """``history_days(get_rules())`` from the rules' period (None: no rules saved yet)."""
    from services.stock.rules import defaults  # rules imports the batches' services

    return int(periodo if periodo is not None else defaults()["periodo"])


def key_sizes(produto_id: uuid.UUID, tamanhos: list[str] | None, history_days: int) -> list[str]:
    """The product's key sizes: its KEY_SIZES best sellers over the network in the rules' ``periodo``
    (``history_days``; the engine's definition), the middle of the grid when it sold nothing; none
    for runs under 3 sizes."""
    tamanhos = list(dict.fromkeys(tamanhos or []))
    if len(tamanhos) < MIN_RUN_FOR_KEYS:
        return []
    on = today()
    start = on - timedelta(days=history_days)
    sold = dict(
        db.session.execute(_VENDAS_POR_TAMANHO, {"produto_id": produto_id, "start": start, "end": on}).all()
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


# A cell and a row are named tuples with their derived figures stored: a matrix has a cell per
# node and size (hundreds), each read several times, and the API's dumper unpacks named tuples
# by position instead of reading attributes one by one (``schemas.fast.RowDumper.dump_many``).
class GradeCell(NamedTuple):
    loja_id: uuid.UUID
    tamanho: str
    atual: int
    delta: int  # net move of the batch's active recommendations
    final: int  # atual + delta
    ruptura: bool  # final <= 0

    @classmethod
    def of(cls, loja_id: uuid.UUID, tamanho: str, atual: int, delta: int) -> GradeCell:
        final = atual + delta
        return cls(loja_id, tamanho, atual, delta, final, final <= 0)


class GradeRow(NamedTuple):
    loja_id: uuid.UUID
    cells: list[GradeCell]
    total_atual: int
    total_final: int
    grade_atual: str | None  # run_state of the store's stock now
    grade: str | None  # run_state after the batch's moves

    @classmethod
    def of(cls, loja_id: uuid.UUID, cells: list[GradeCell], keys: list[str]) -> GradeRow:
        """The row of ``cells``, with its totals and run states for the key sizes ``keys``."""
        return cls(
            loja_id,
            cells,
            sum(c.atual for c in cells),
            sum(c.final for c in cells),
            run_state({c.tamanho: c.atual for c in cells}, keys),
            run_state({c.tamanho: c.final for c in cells}, keys),
        )


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
    from services.stock.rules import RULES_ID  # rules imports the batches' services

    head = db.session.execute(
        _PRODUTO[lote_id is None], {"produto_id": produto_id, "lote_id": lote_id, "rules_id": RULES_ID}
    ).first()
    if head is None:
        raise NotFoundError("Produto não encontrado", reason="produto_not_found")
    produto_id, tamanhos, found, periodo = head
    if lote_id is not None and found is None:
        raise missing_lote()
    lote_id = found
    tamanhos = list(tamanhos or [])
    keys = key_sizes(produto_id, tamanhos, _history_days(periodo))
    # Stock by node, then size, in the grid's order; the moves by node, then size: one UUID
    # hash per node and not one per cell.
    nodes: list[tuple[uuid.UUID, dict[str, int]]] = []
    for loja_id, tamanho, qtd in db.session.execute(_NODOS_ESTOQUE, {"produto_id": produto_id}):
        if not nodes or nodes[-1][0] != loja_id:
            nodes.append((loja_id, {}))
        if tamanho is not None:
            nodes[-1][1][tamanho] = qtd
    delta: dict[uuid.UUID, defaultdict[str, int]] = defaultdict(lambda: defaultdict(int))
    if lote_id is not None:
        for origem, destino, tamanho, qtd in db.session.execute(
            _MOVES, {"lote_id": lote_id, "produto_id": produto_id}
        ):
            delta[origem][tamanho] -= qtd
            delta[destino][tamanho] += qtd
    nothing: dict[str, int] = {}
    rows = []
    for loja_id, now in nodes:
        moved = delta.get(loja_id, nothing)
        cells = [
            GradeCell.of(loja_id, tamanho, now.get(tamanho, 0), moved.get(tamanho, 0)) for tamanho in tamanhos
        ]
        rows.append(GradeRow.of(loja_id, cells, keys))
    return GradeMatrix(produto_id, tamanhos, rows, lote_id, tamanhos_chave=keys)
