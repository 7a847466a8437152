"""Stores, products and stock per size."""

from __future__ import annotations

from blueprints.common import stock_auth_required
from blueprints.parsing import Blueprint
from schemas.stock.catalogue import (
    CellQuery,
    EstoqueCell,
    EstoqueItem,
    EstoqueQuery,
    LojaOut,
    ProdutoOut,
)
from services.stock import catalogue

blp = Blueprint("stock_catalogue", __name__, url_prefix="", description="Lojas, produtos e estoque")


@blp.route("/stores", methods=["GET"])
@stock_auth_required()
@blp.response(200, LojaOut(many=True))
def stores():
    """Lojas e CDs: CDs primeiro, depois as lojas, cada grupo por nome."""
    return catalogue.list_lojas()


@blp.route("/lojas", methods=["GET"])
@stock_auth_required()
@blp.response(200, LojaOut(many=True))
def lojas():
    """O mesmo que `/stores`."""
    return catalogue.list_lojas()


@blp.route("/produtos", methods=["GET"])
@stock_auth_required()
@blp.response(200, ProdutoOut(many=True))
def produtos():
    """Produtos por nome e SKU."""
    return catalogue.list_produtos()


@blp.route("/produtos/<uuid:pid>", methods=["GET"])
@stock_auth_required()
@blp.response(200, ProdutoOut)
def produto(pid):
    """Um produto."""
    return catalogue.get_produto(pid)


@blp.route("/estoque", methods=["GET"])
@stock_auth_required()
@blp.arguments(EstoqueQuery, location="query")
@blp.response(200, EstoqueItem(many=True))
def estoque(query):
    """Estoque da loja: um item por produto com registro de estoque, tamanhos na ordem da grade."""
    return catalogue.estoque_da_loja(query["loja_id"])


@blp.route("/estoque/cell", methods=["GET"])
@stock_auth_required()
@blp.arguments(CellQuery, location="query")
@blp.response(200, EstoqueCell)
def estoque_cell(query):
    """Detalhe de uma célula loja x produto x tamanho: estoque, vendas recentes e cobertura.

    Loja ou produto inexistentes respondem 404; um `tamanho` fora da grade do produto, 422.
    """
    return catalogue.cell_detail(query["loja_id"], query["produto_id"], query["tamanho"])
