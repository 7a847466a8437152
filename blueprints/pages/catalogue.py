"""Stores and CDs, a store's stock by product and size, one cell's detail."""

from __future__ import annotations

import uuid

from flask import Blueprint, abort, request

from blueprints.pages.common import page_login_required, render_page
from services.errors import DomainError
from services.stock import catalogue

blp = Blueprint("catalogue", __name__)


@blp.route("/lojas")
@page_login_required(stock=True)
def stores():
    q = request.args.get("q", "").strip().lower()
    lojas = catalogue.list_lojas()
    if q:
        lojas = [s for s in lojas if q in s.nome.lower() or q in s.cidade.lower() or q in s.codigo.lower()]
    return render_page("catalogue/stores.html", "store_rows", lojas=lojas, q=q)


def _uuid_or_404(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except (TypeError, ValueError):
        abort(404)


@blp.route("/lojas/<loja_id>")
@page_login_required(stock=True)
def store_stock(loja_id: str):
    try:
        loja = catalogue.get_loja(_uuid_or_404(loja_id))
    except DomainError:
        abort(404, description="Loja não encontrada.")
    q = request.args.get("q", "").strip().lower()
    produtos = {p.id: p for p in catalogue.list_produtos()}
    items = []
    for item in catalogue.estoque_da_loja(loja.id):
        produto = produtos[item["produtoId"]]
        if (
            q
            and q not in produto.nome.lower()
            and q not in produto.sku.lower()
            and q not in produto.marca.lower()
        ):
            continue
        items.append((produto, item))
    return render_page("catalogue/store_stock.html", "stock_rows", loja=loja, items=items, q=q)


@blp.route("/lojas/<loja_id>/celula")
@page_login_required(stock=True)
def cell(loja_id: str):
    try:
        detail = catalogue.cell_detail(
            _uuid_or_404(loja_id),
            _uuid_or_404(request.args.get("produtoId", "")),
            request.args.get("tamanho", ""),
        )
    except DomainError as exc:
        abort(404 if exc.status == 404 else 422, description=exc.message)
    peak = max([d["qtd"] for d in detail["ultimasVendas"]] + [1])
    return render_page("catalogue/cell.html", "cell_detail", detail=detail, peak=peak)
