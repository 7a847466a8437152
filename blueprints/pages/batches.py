"""The planners' batch pages: the batches, a batch's filtered table and pick lists, grade, history.

Views stay thin: they call the same services as the REST API
(``services.stock.batches``, ``recommendations``, ``metrics``, ``grade``), validate
input with the API's schemas and show a ``DomainError`` inline. Roles are the
API's: the services refuse what a role may not do, and the templates only
offer what the services would accept. The decisions taken in place on a batch
page (one row or many) are in ``blueprints.pages.batch_decisions``, which
shares this module's table state and helpers.
"""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass, field
from typing import Any

from flask import Blueprint, abort, make_response, redirect, request, url_for
from flask_babel import gettext as _
from flask_jwt_extended import current_user
from marshmallow import ValidationError

from blueprints.pages import live
from blueprints.pages.common import page_login_required, render_page, wants_fragment
from models.auth import User
from models.stock import Loja, Produto
from models.stock_batches import PRIORIDADES, STATUS_RECOMENDACAO, TIPOS_ORIGEM
from schemas.stock.batches import STATUS_HISTORICO, HistoricoQuery, RecomendacoesQuery
from services.errors import DomainError
from services.stock import batches, catalogue, grade, metrics, problems, recommendations, separacao

blp = Blueprint("batch_pages", __name__)

PAGE_SIZE = 50
# The batch page's status filter: the API's statuses plus the orthogonal veto.
SITUACOES = (*STATUS_RECOMENDACAO, "vetada")
FILTER_KEYS = ("prioridade", "tipoOrigem", "origemId", "lojaDestinoId", "produtoId", "status", "q")
HISTORY_LIMIT = 500
# Rows a live update looks at: the page's (a page holds PAGE_SIZE), never an unbounded list.
LIVE_MAX_ROWS = 2 * PAGE_SIZE


# --- shared helpers --------------------------------------------------------------------------


def uuid_or_404(value: str | None) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError):
        abort(404)


def optional_uuid(value: str | None) -> uuid.UUID | None:
    if not value:
        return None
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


def lote_or_404(lote_id: uuid.UUID) -> batches.LoteResumo:
    try:
        return batches.lote_resumo(recommendations.get_lote(lote_id))
    except DomainError:
        abort(404, description=_("Lote não encontrado."))


@dataclass
class Names:
    """Stores and products by id, to show names instead of ids."""

    lojas: dict[uuid.UUID, Loja]
    produtos: dict[uuid.UUID, Produto] = field(default_factory=dict)

    @classmethod
    def load(cls, produto_ids: set[uuid.UUID] | None = None) -> Names:
        names = cls({loja.id: loja for loja in catalogue.list_lojas()})
        names.add_produtos(produto_ids or set())
        return names

    def add_produtos(self, produto_ids: set[uuid.UUID]) -> None:
        self.produtos.update(catalogue.produtos_by_id(produto_ids - self.produtos.keys()))

    def loja(self, loja_id: uuid.UUID) -> str:
        loja = self.lojas.get(loja_id)
        return loja.nome if loja else "—"


# --- batches ---------------------------------------------------------------------------------


@blp.route("/lotes")
@page_login_required(stock=True)
def lotes():
    items = batches.list_lotes()
    semanas = {s.lote_id: s for s in metrics.efetividade_semanal().semanas}
    return render_page("batches/lotes.html", lotes=items, semanas=semanas)


@dataclass
class TableState:
    """Filters, sort and page of the recommendations table, read from a query string or a form."""

    filters: recommendations.FiltroRecomendacoes
    raw: dict[str, str]
    sort: str = "prioridade"
    desc: bool = False
    page: int = 1
    dense: bool = False
    errors: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, values) -> TableState:
        raw = {k: values.get(k, "").strip() for k in FILTER_KEYS if values.get(k, "").strip()}
        errors: list[str] = []
        api_values = {k: v for k, v in raw.items() if not (k == "status" and v == "vetada")}
        try:
            filters = RecomendacoesQuery().load(api_values)
        except ValidationError as exc:
            labels = {
                "prioridade": _("Prioridade"),
                "tipoOrigem": _("Tipo de origem"),
                "origemId": _("Origem"),
                "lojaDestinoId": _("Destino"),
                "produtoId": _("Produto"),
                "status": _("Situação"),
                "q": _("Busca"),
            }
            campos = ", ".join(sorted(labels.get(name, name) for name in exc.messages))
            errors.append(_("Filtro inválido ignorado: %(campos)s.", campos=campos))
            for bad in exc.messages:
                raw.pop(bad, None)
                api_values.pop(bad, None)
            filters = RecomendacoesQuery().load(api_values)
        sort = values.get("ordem", "prioridade")
        if sort not in recommendations.SORTS:
            sort = "prioridade"
        try:
            page = max(1, int(values.get("pagina", "1")))
        except ValueError:
            page = 1
        return cls(
            filters=filters,
            raw=raw,
            sort=sort,
            desc=values.get("dir") == "desc",
            page=page,
            dense=values.get("densa") == "1",
            errors=errors,
        )

    def query(self, **changes: Any) -> dict[str, Any]:
        """Query-string values of this state with ``changes`` applied (for links)."""
        out: dict[str, Any] = dict(self.raw)
        out.update(
            {
                "ordem": self.sort,
                "dir": "desc" if self.desc else "asc",
                "pagina": self.page,
                "densa": "1" if self.dense else None,
            }
        )
        out.update(changes)
        return {k: v for k, v in out.items() if v not in (None, "")}

    def address(self) -> dict[str, Any]:
        """The state as the address bar keeps it: no empty value, no default."""
        defaults = {"ordem": "prioridade", "dir": "asc", "pagina": 1}
        return {k: v for k, v in self.query().items() if defaults.get(k) != v}

    def sort_query(self, key: str) -> dict[str, Any]:
        desc = not self.desc if key == self.sort else key in ("score", "quantidade")
        return self.query(ordem=key, dir="desc" if desc else "asc", pagina=1)


def matching_filters(lote_id: uuid.UUID, state: TableState) -> recommendations.FiltroRecomendacoes:
    """The table's filters (all pages): what it lists, and what "all matching" acts on."""
    return dataclasses.replace(
        state.filters, lote_id=lote_id, vetado=True if state.raw.get("status") == "vetada" else None
    )


def _table(lote_id: uuid.UUID, user: User, state: TableState) -> dict:
    """One page of the batch's recommendations, filtered and sorted by the service, with the names it shows."""
    filters = matching_filters(lote_id, state)
    total = recommendations.count_recomendacoes(user, filters)
    pages = max(1, -(-total // PAGE_SIZE))
    state.page = min(state.page, pages)
    shown = recommendations.list_recomendacoes(
        user,
        dataclasses.replace(
            filters, ordem=state.sort, desc=state.desc, limite=PAGE_SIZE, offset=(state.page - 1) * PAGE_SIZE
        ),
    )
    names = Names.load({r.produto_id for r in shown})
    return {"recs": shown, "total": total, "pages": pages, "names": names, "state": state}


def _filter_options(lote_id: uuid.UUID, user: User, names: Names) -> dict:
    """Stores and products that appear in the batch (as the user may see it), for the filters."""
    origens, destinos, produtos = recommendations.distinct_values(lote_id, user)
    names.add_produtos(produtos)
    lojas = names.lojas
    by_name = lambda ids: sorted((lojas[i] for i in ids if i in lojas), key=lambda x: x.nome)  # noqa: E731
    produto_rows = sorted(
        (names.produtos[p] for p in produtos if p in names.produtos), key=lambda p: (p.nome, p.cor, p.sku)
    )
    return {"origens": by_name(origens), "destinos": by_name(destinos), "produtos": produto_rows}


def batch_context(lote_id: uuid.UUID, user: User, state: TableState, *, panels: bool = True) -> dict:
    """What the batch page shows; without ``panels`` only the table (an htmx filter/sort/page change)."""
    version = live.stamp()  # before the reads: what changes while they run is sent again
    table = _table(lote_id, user, state)
    context = {"lote": {"id": lote_id}, "table": table, "bulk": None, "oob": False}
    if panels:
        context.update(
            live_version=version,
            lote=lote_or_404(lote_id),
            totais=batches.totais(lote_id, user),
            fluxo=batches.fluxo(lote_id, user),
            options=_filter_options(lote_id, user, table["names"]),
            situacoes=SITUACOES,
            prioridades=PRIORIDADES,
            tipos_origem=TIPOS_ORIGEM,
        )
    return context


@blp.route("/lotes/<lid>")
@page_login_required(stock=True)
def lote(lid: str):
    lote_id = uuid_or_404(lid)
    state = TableState.read(request.args)
    context = batch_context(lote_id, current_user, state, panels=not wants_fragment())
    response = render_page("batches/lote.html", "rec_table", **context)
    if wants_fragment():
        # The address bar gets the state the table shows: no empty filter, no default.
        response.headers["HX-Push-Url"] = url_for("batch_pages.lote", lid=lote_id, **state.address())
    return response


def _nothing_decided(caller: live.Caller, lid: str) -> bool:
    """The poll's quiet case in one statement (``live.quiet_poll``)."""
    lote_id = optional_uuid(lid)
    moment = live.changed_after(request.args.get("desde"))
    return lote_id is not None and moment is not None and recommendations.batch_quiet(caller, lote_id, moment)


@blp.route("/lotes/<lid>/mudancas")
@live.quiet_poll(_nothing_decided)
@page_login_required(stock=True)
def changes(lid: str):
    """Live updates of an open batch page (``blueprints.pages.live``): 204 while nothing the user
    sees in the batch was decided since the page's version (``desde``); otherwise those of the
    page's rows (``ids``) that were, with the totals and the flow, and the new version."""
    lote_id = uuid_or_404(lid)
    if not wants_fragment():
        return redirect(url_for("batch_pages.lote", lid=lote_id))
    version = live.stamp()
    moment = live.changed_after(request.args.get("desde"))
    try:
        changed = recommendations.changed_after(lote_id, current_user, moment)
    except DomainError:
        abort(404, description=_("Lote não encontrado."))
    if not changed:
        return live.unchanged()
    ids = [i for i in map(optional_uuid, request.args.get("ids", "").split(",")[:LIVE_MAX_ROWS]) if i]
    recs = recommendations.changed_among(lote_id, current_user, ids, moment)
    response = render_page(
        "batches/_live_rows.html",
        recs=recs,
        names=Names.load({r.produto_id for r in recs}),
        lote_id=lote_id,
        totais=batches.totais(lote_id, current_user),
        fluxo=batches.fluxo(lote_id, current_user),
        version=version,
    )
    return live.no_store(response)


@blp.route("/lotes/<lid>/separacao.csv")
@page_login_required(stock=True)
def export_csv(lid: str):
    """Pick lists of the approved transfers: one section per origin (or one origin's file)."""
    lote_id = uuid_or_404(lid)
    lote_or_404(lote_id)
    origem_id = optional_uuid(request.args.get("origemId"))
    if request.args.get("origemId") and origem_id is None:
        abort(404, description=_("Origem não encontrada."))
    filename, text = separacao.csv_file(lote_id, current_user, origem_id)
    response = make_response(text)
    response.headers["Content-Type"] = "text/csv; charset=utf-8"
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


# --- grade -----------------------------------------------------------------------------------


@blp.route("/grade")
@page_login_required(stock=True)
def grade_index():
    """Choose a product; ``?produto=<id>`` goes straight to its matrix."""
    chosen = optional_uuid(request.args.get("produto"))
    if chosen is not None:
        return redirect(url_for("batch_pages.grade_page", pid=chosen, lote=request.args.get("lote") or None))
    q = request.args.get("q", "").strip().lower()
    return render_page("batches/grade_index.html", "product_rows", produtos=catalogue.list_produtos(q), q=q)


@blp.route("/grade/<pid>")
@page_login_required(stock=True)
def grade_page(pid: str):
    produto_id = uuid_or_404(pid)
    lote_param = request.args.get("lote") or None
    lote_id = optional_uuid(lote_param)
    if lote_param and lote_id is None:
        abort(404, description=_("Lote não encontrado."))
    try:
        produto = catalogue.get_produto(produto_id)
        matrix = grade.grade(produto_id, lote_id)
    except DomainError as exc:
        abort(404, description=exc.message)
    lojas = {loja.id: loja for loja in catalogue.list_lojas()}
    totals = {"atual": matrix.column_totals("atual"), "delta": matrix.column_totals("delta")}
    rupturas = sum(1 for r in matrix.rows for c in r.cells if c.ruptura)
    return render_page(
        "batches/grade.html",
        "grade_matrix",
        produto=produto,
        matrix=matrix,
        lojas=lojas,
        lotes=batches.list_lotes(),
        totals=totals,
        rupturas=rupturas,
    )


# --- history ---------------------------------------------------------------------------------


@blp.route("/historico")
@page_login_required(stock=True)
def historico():
    error = None
    status_arg = request.args.get("status", "").strip()
    try:
        query = HistoricoQuery().load({"status": status_arg} if status_arg else {})
    except ValidationError:
        error = _("Situação desconhecida: mostrando todas.")
        query = HistoricoQuery().load({})
    items = metrics.historico(current_user, query.get("status"), HISTORY_LIMIT)
    return render_page(
        "batches/historico.html",
        "history_rows",
        items=items,
        problem_links=problems.links_for([item.id for item in items]),
        filtro=query.get("status") or "",
        statuses=STATUS_HISTORICO,
        error=error,
        limit=HISTORY_LIMIT,
    )
