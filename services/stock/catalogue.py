"""Read side of the catalogue: stores, products, stock per size, one cell's detail."""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, timedelta

from sqlalchemy import and_, func, or_, select

from extensions import db
from models.stock import Campanha, Estoque, Loja, Produto, Venda
from services.clock import today
from services.errors import FieldError, NotFoundError, ValidationFailed
from services.stock.rules import get_rules, history_days
from services.text import contains_any

RECENT_DAYS = 14


@dataclass(frozen=True)
class Contagem:
    """How many stores, CDs and products the network has."""

    lojas: int
    cds: int
    produtos: int


@dataclass(frozen=True)
class PorTamanho:
    tamanho: str
    qtd: int


@dataclass(frozen=True)
class EstoqueItem:
    """A store's stock of one product, every grid size listed (then any size outside the grid)."""

    produto: Produto
    por_tamanho: list[PorTamanho]

    @property
    def produto_id(self) -> uuid.UUID:
        return self.produto.id

    @property
    def total(self) -> int:
        return sum(c.qtd for c in self.por_tamanho)


@dataclass(frozen=True)
class VendaDia:
    data: date
    qtd: int


@dataclass(frozen=True)
class CelulaEstoque:
    """One store x product x size: stock, sales over the rules' period and cover."""

    loja: Loja
    produto: Produto
    tamanho: str
    estoque: int
    periodo_dias: int
    vendas_periodo: int
    venda_media_diaria: float
    dias_cobertura: float | None  # None when nothing sold
    em_campanha: bool
    ultimas_vendas: list[VendaDia]  # oldest first, zeros included


def list_lojas(q: str | None = None) -> list[Loja]:
    """CDs first, then stores, each group by name; ``q`` keeps those whose name, city or code
    contains it (ignoring case)."""
    stmt = select(Loja).order_by(Loja.is_cd.desc(), Loja.nome, Loja.codigo)
    found = contains_any(q, Loja.nome, Loja.cidade, Loja.codigo)
    return list(db.session.scalars(stmt if found is None else stmt.where(found)))


def list_produtos(q: str | None = None) -> list[Produto]:
    """By name, then SKU; ``q`` keeps those whose name, SKU, brand or colour contains it."""
    stmt = select(Produto).order_by(Produto.nome, Produto.sku)
    found = contains_any(q, Produto.nome, Produto.sku, Produto.marca, Produto.cor)
    return list(db.session.scalars(stmt if found is None else stmt.where(found)))


def produtos_by_id(produto_ids) -> dict[uuid.UUID, Produto]:
    """The products of ``produto_ids`` that exist."""
    ids = set(produto_ids)
    if not ids:
        return {}
    return {p.id: p for p in db.session.scalars(select(Produto).where(Produto.id.in_(ids)))}


def counts() -> Contagem:
    """How many stores, CDs and products the network has."""
    lojas = dict(db.session.execute(select(Loja.is_cd, func.count()).group_by(Loja.is_cd)).all())
    return Contagem(
        lojas=lojas.get(False, 0),
        cds=lojas.get(True, 0),
        produtos=db.session.scalar(select(func.count()).select_from(Produto)) or 0,
    )


def get_loja(loja_id: uuid.UUID) -> Loja:
    loja = db.session.get(Loja, loja_id)
    if loja is None:
        raise NotFoundError("Loja não encontrada", reason="loja_not_found")
    return loja


def get_produto(produto_id: uuid.UUID) -> Produto:
    produto = db.session.get(Produto, produto_id)
    if produto is None:
        raise NotFoundError("Produto não encontrado", reason="produto_not_found")
    return produto


def size_order(produto: Produto, tamanho: str) -> tuple[int, str]:
    """Grid position of a size; sizes outside the grid go last, alphabetically."""
    try:
        return (produto.tamanhos.index(tamanho), tamanho)
    except ValueError:
        return (len(produto.tamanhos), tamanho)


def estoque_da_loja(loja_id: uuid.UUID, q: str | None = None) -> list[EstoqueItem]:
    """One entry per product the store has a stock record of, by name and SKU; ``q`` keeps the
    products whose name, SKU or brand contains it (ignoring case)."""
    get_loja(loja_id)
    stmt = (
        select(Estoque.produto_id, Estoque.tamanho, Estoque.qtd)
        .join(Produto, Produto.id == Estoque.produto_id)
        .where(Estoque.loja_id == loja_id)
    )
    found = contains_any(q, Produto.nome, Produto.sku, Produto.marca)
    rows = db.session.execute(stmt if found is None else stmt.where(found)).all()
    per_product: dict[uuid.UUID, dict[str, int]] = defaultdict(dict)
    for produto_id, tamanho, qtd in rows:
        per_product[produto_id][tamanho] = qtd
    items = []
    for produto in sorted(produtos_by_id(per_product).values(), key=lambda p: (p.nome, p.sku)):
        held = per_product[produto.id]
        sizes = list(produto.tamanhos) + sorted(set(held) - set(produto.tamanhos))
        items.append(EstoqueItem(produto, [PorTamanho(t, held.get(t, 0)) for t in sizes]))
    return items


def in_campaign(produto_id: uuid.UUID, loja: Loja, on: date) -> bool:
    """A campaign at the store, or a national one (no store): those reach stores, never CDs."""
    at_node = Campanha.loja_id == loja.id
    found = db.session.scalar(
        select(Campanha.id)
        .where(
            Campanha.produto_id == produto_id,
            at_node if loja.is_cd else or_(Campanha.loja_id.is_(None), at_node),
            and_(Campanha.inicio <= on, Campanha.fim >= on),
        )
        .limit(1)
    )
    return found is not None


def cell_detail(loja_id: uuid.UUID, produto_id: uuid.UUID, tamanho: str) -> CelulaEstoque:
    """Stock, recent sales and cover of one store x product x size."""
    loja = get_loja(loja_id)
    produto = get_produto(produto_id)
    if tamanho not in produto.tamanhos:
        raise ValidationFailed(
            [
                FieldError(
                    ("query", "tamanho"),
                    f"Tamanho fora da grade do produto ({', '.join(produto.tamanhos)})",
                    "enum",
                    reason="tamanho_outside_grade",
                )
            ]
        )
    ref = today()
    periodo = history_days(get_rules())
    start = ref - timedelta(days=periodo)
    qtd = db.session.scalar(
        select(Estoque.qtd).where(
            Estoque.loja_id == loja_id, Estoque.produto_id == produto_id, Estoque.tamanho == tamanho
        )
    )
    sales = dict(
        db.session.execute(
            select(Venda.data, func.sum(Venda.qtd))
            .where(
                Venda.loja_id == loja_id,
                Venda.produto_id == produto_id,
                Venda.tamanho == tamanho,
                Venda.data >= min(start, ref - timedelta(days=RECENT_DAYS)),
                Venda.data < ref,
            )
            .group_by(Venda.data)
        ).all()
    )
    vendas_periodo = sum(q for d, q in sales.items() if d >= start)
    media = vendas_periodo / periodo
    estoque = qtd or 0
    recent = [
        VendaDia(ref - timedelta(days=i), int(sales.get(ref - timedelta(days=i), 0)))
        for i in range(RECENT_DAYS, 0, -1)
    ]
    return CelulaEstoque(
        loja=loja,
        produto=produto,
        tamanho=tamanho,
        estoque=estoque,
        periodo_dias=periodo,
        vendas_periodo=int(vendas_periodo),
        venda_media_diaria=round(media, 3),
        dias_cobertura=round(estoque / media, 1) if media > 0 else None,
        em_campanha=in_campaign(produto.id, loja, ref),
        ultimas_vendas=recent,
    )
