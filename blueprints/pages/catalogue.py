"""Stores and CDs, a store's stock by product and size, one cell's detail."""

from __future__ import annotations

import uuid

from flask import Blueprint, abort, request

from blueprints.pages.common import page_login_required, render_page
from blueprints.pages.messages import domain_message
from services.errors import DomainError
from services.stock import catalogue

blp = Blueprint("catalogue", __name__)


def _search() -> str:
    return request.args.get("q", "").strip().lower()


@blp.route("/lojas")
@page_login_required(stock=True)
def stores():
    q = _search()
    return render_page("catalogue/stores.html", "store_rows", lojas=catalogue.list_lojas(q), q=q)


def _uuid_or_404(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except (TypeError, ValueError):
        abort(404)


@blp.route("/lojas/<loja_id>")
@page_login_required(stock=True)
def store_stock(loja_id: str):
    q = _search()
    try:
        loja = catalogue.get_loja(_uuid_or_404(loja_id))
        items = catalogue.estoque_da_loja(loja.id, q)
    except DomainError:
        abort(404, description="Loja não encontrada.")
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
        abort(404 if exc.status == 404 else 422, description=domain_message(exc))
    peak = max([d.qtd for d in detail.ultimas_vendas] + [1])
    return render_page("catalogue/cell.html", "cell_detail", detail=detail, peak=peak)
