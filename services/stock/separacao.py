"""Pick lists (listas de separação): a batch's approved transfers, grouped by the origin that ships them.

A CSV file a warehouse or store team opens in a spreadsheet: one section per
origin (CDs first, then stores, by name), its rows by destination, SKU and size in
the product's grid order, and the section's total. Vetoed transfers are not picked.
"""

from __future__ import annotations

import csv
import io
import uuid
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from models.auth import User
from models.stock import Loja, Produto
from models.stock_batches import Recomendacao
from services.stock import catalogue
from services.stock.recommendations import FiltroRecomendacoes, get_lote, list_recomendacoes

HEADER = ("SKU", "Produto", "Cor", "Tamanho", "Quantidade", "Destino", "Cidade do destino")
# What a spreadsheet would run as a formula starts with one of these.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


@dataclass
class Secao:
    """One origin's part of the list."""

    origem: Loja
    linhas: list[tuple[Recomendacao, Produto, Loja]]

    @property
    def total(self) -> int:
        return sum(rec.quantidade for rec, _produto, _destino in self.linhas)


def secoes(lote_id: uuid.UUID, user: User, origem_id: uuid.UUID | None = None) -> list[Secao]:
    """The approved, not vetoed transfers ``user`` may see, per origin (only ``origem_id``'s when given)."""
    return _group(_approved(lote_id, user, origem_id), {loja.id: loja for loja in catalogue.list_lojas()})


def _approved(lote_id: uuid.UUID, user: User, origem_id: uuid.UUID | None) -> list[Recomendacao]:
    filtro = FiltroRecomendacoes(lote_id=lote_id, status="aprovada", vetado=False, origem_id=origem_id)
    return list_recomendacoes(user, filtro)


def _group(recs: list[Recomendacao], lojas: dict[uuid.UUID, Loja]) -> list[Secao]:
    produtos = catalogue.produtos_by_id(rec.produto_id for rec in recs)
    by_origin: dict[uuid.UUID, list[Recomendacao]] = defaultdict(list)
    for rec in recs:
        by_origin[rec.origem_id].append(rec)

    def row_order(rec: Recomendacao) -> tuple:
        produto = produtos[rec.produto_id]
        return (lojas[rec.destino_id].nome, produto.sku, catalogue.size_order(produto, rec.tamanho))

    origins = sorted(by_origin, key=lambda oid: (not lojas[oid].is_cd, lojas[oid].nome))
    return [
        Secao(
            lojas[oid],
            [
                (rec, produtos[rec.produto_id], lojas[rec.destino_id])
                for rec in sorted(by_origin[oid], key=row_order)
            ],
        )
        for oid in origins
    ]


def _cell(value: Any) -> Any:
    """Text that a spreadsheet would run as a formula is kept as text."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_file(lote_id: uuid.UUID, user: User, origem_id: uuid.UUID | None = None) -> tuple[str, str]:
    """``(file name, contents)`` of the batch's pick list (one origin's, with ``origem_id``)."""
    lote = get_lote(lote_id)
    lojas = {loja.id: loja for loja in catalogue.list_lojas()}
    parts = _group(_approved(lote_id, user, origem_id), lojas)
    buffer = io.StringIO()
    # Semicolons and a BOM: what spreadsheet software in Brazil opens as columns, accents intact.
    buffer.write("\ufeff")
    out = csv.writer(buffer, delimiter=";", lineterminator="\r\n")
    out.writerow(
        ["Lista de separação", f"Lote {lote.semana}", f"{lote.inicio.isoformat()}/{lote.fim.isoformat()}"]
    )
    if not parts:
        out.writerow(["Nenhuma transferência aprovada."])
    for secao in parts:
        origem = secao.origem
        out.writerow([])
        out.writerow(["Origem", _cell(f"{origem.nome} ({origem.codigo})"), _cell(origem.cidade)])
        out.writerow(HEADER)
        for rec, produto, destino in secao.linhas:
            values = (
                produto.sku,
                produto.nome,
                rec.cor,
                rec.tamanho,
                rec.quantidade,
                destino.nome,
                destino.cidade,
            )
            out.writerow([_cell(v) for v in values])
        out.writerow(["Total", "", "", "", secao.total, "", ""])
    suffix = f"-{lojas[origem_id].codigo}" if origem_id in lojas else ""
    return f"separacao-{lote.semana}{suffix}.csv", buffer.getvalue()
