"""Stores and CDs, a store's stock by product and size, one cell's detail."""

from __future__ import annotations

import uuid

from flask import Blueprint, abort, request
from flask_babel import lazy_gettext as _l
from flask_jwt_extended import current_user
from marshmallow import ValidationError

from blueprints.pages.common import after_change, page_login_required, refused, render_page
from blueprints.pages.messages import domain_message
from schemas.stock.transit import ProblemaRequest, RecebimentoRequest
from services.errors import DomainError
from services.stock import catalogue, operations, problems, transit

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


@blp.route("/lojas/<loja_id>/recebimentos")
@page_login_required(stock=True)
def receipts(loja_id: str):
    """A store's transfers in transit: arriving ones to confirm, leaving ones to send."""
    return _receipts_page(_uuid_or_404(loja_id))


PROBLEM_TYPES = (
    ("avariada", _l("Mercadoria avariada")),
    ("faltando", _l("Faltaram unidades")),
    ("tamanho_errado", _l("Tamanho errado")),
    ("outro", _l("Outro")),
)


def report_from_form(rec_id: uuid.UUID) -> problems.Problema:
    """A problem posted by a page's form (``tipo``, ``texto``), checked by the API's schema."""
    body = ProblemaRequest().load(
        {"tipo": request.form.get("tipo", ""), "texto": request.form.get("texto") or None}
    )
    return problems.report(rec_id, current_user, body["tipo"], body.get("texto"))


def _receipts_page(
    loja_id: uuid.UUID, *, status: int = 200, errors: dict | None = None, failed=None, reported=None
):
    lista = transit.em_transito(loja_id, current_user)
    return render_page(
        "catalogue/receipts.html",
        status=status,
        lista=lista,
        errors=errors or {},
        failed=failed,
        reported=reported,
        ops_on=operations.is_on(),
        problem_types=PROBLEM_TYPES,
    )


@blp.route("/lojas/<loja_id>/recebimentos/<rid>", methods=["POST"])
@page_login_required(stock=True)
def receive(loja_id: str, rid: str):
    store_id, rec_id = _uuid_or_404(loja_id), _uuid_or_404(rid)
    try:
        body = RecebimentoRequest().load({"quantidadeRecebida": request.form.get("quantidadeRecebida", "")})
        transit.receber(rec_id, current_user, body["quantidade_recebida"])
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc, inline_not_found=True)
        message = refusal.errors.get("quantidadeRecebida") or refusal.message
        return _receipts_page(store_id, status=refusal.status, errors={str(rec_id): message}, failed=rec_id)
    return after_change("catalogue.receipts", loja_id=store_id)


@blp.route("/lojas/<loja_id>/recebimentos/<rid>/problema", methods=["POST"])
@page_login_required(stock=True)
def report_problem(loja_id: str, rid: str):
    """A problem with a transfer into or out of the store, opened as an issue of the operations
    project (the same service as the API)."""
    store_id, rec_id = _uuid_or_404(loja_id), _uuid_or_404(rid)
    try:
        problema = report_from_form(rec_id)
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc, inline_not_found=True)
        return _receipts_page(
            store_id, status=refusal.status, errors={str(rec_id): refusal.message}, failed=rec_id
        )
    reported = {"rid": str(rec_id), "key": problema.issue_key, "url": problema.issue_url}
    return _receipts_page(store_id, reported=reported)
