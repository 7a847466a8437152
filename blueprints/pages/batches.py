"""The planners' batch pages: batches, decisions in place (one row or every match), grade, history.

Views stay thin: they call the same services as the REST API
(``services.stock.batches``, ``decisions``, ``metrics``, ``grade``), validate
input with the API's schemas and show a ``DomainError`` inline. Roles are the
API's: the services refuse what a role may not do, and the templates only
offer what the services would accept.
"""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass, field
from typing import Any

from flask import Blueprint, Response, abort, make_response, redirect, request, url_for
from flask_babel import format_decimal, ngettext
from flask_babel import gettext as _
from flask_jwt_extended import current_user
from marshmallow import ValidationError

from blueprints.pages.common import page_login_required, refused, render_page, wants_fragment
from blueprints.pages.messages import domain_message
from models.auth import User
from models.stock import Loja, Produto
from models.stock_batches import PRIORIDADES, STATUS_RECOMENDACAO, TIPOS_ORIGEM, Recomendacao
from schemas.stock.batches import (
    STATUS_HISTORICO,
    HistoricoQuery,
    RecomendacoesQuery,
    RecusaRequest,
    VetoRequest,
)
from services.errors import DomainError, ValidationFailed
from services.stock import batches, catalogue, decisions, grade, metrics, recommendations, separacao

blp = Blueprint("batch_pages", __name__)

PAGE_SIZE = 50
# The batch page's status filter: the API's statuses plus the orthogonal veto.
SITUACOES = (*STATUS_RECOMENDACAO, "vetada")
FILTER_KEYS = ("prioridade", "tipoOrigem", "origemId", "lojaDestinoId", "produtoId", "status", "q")
HISTORY_LIMIT = 500


# --- shared helpers --------------------------------------------------------------------------


def _uuid_or_404(value: str | None) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError):
        abort(404)


def _optional_uuid(value: str | None) -> uuid.UUID | None:
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


def _matching(lote_id: uuid.UUID, state: TableState) -> recommendations.FiltroRecomendacoes:
    """The table's filters (all pages): what it lists, and what "all matching" acts on."""
    return dataclasses.replace(
        state.filters, lote_id=lote_id, vetado=True if state.raw.get("status") == "vetada" else None
    )


def _table(lote_id: uuid.UUID, user: User, state: TableState) -> dict:
    """One page of the batch's recommendations, filtered and sorted by the service, with the names it shows."""
    filters = _matching(lote_id, state)
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


def _batch_context(lote_id: uuid.UUID, user: User, state: TableState, *, panels: bool = True) -> dict:
    """What the batch page shows; without ``panels`` only the table (an htmx filter/sort/page change)."""
    table = _table(lote_id, user, state)
    context = {"lote": {"id": lote_id}, "table": table, "bulk": None, "oob": False}
    if panels:
        context.update(
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
    lote_id = _uuid_or_404(lid)
    state = TableState.read(request.args)
    context = _batch_context(lote_id, current_user, state, panels=not wants_fragment())
    response = render_page("batches/lote.html", "rec_table", **context)
    if wants_fragment():
        # The address bar gets the state the table shows: no empty filter, no default.
        response.headers["HX-Push-Url"] = url_for("batch_pages.lote", lid=lote_id, **state.address())
    return response


def _row_response(
    lote_id: uuid.UUID,
    rid: uuid.UUID,
    *,
    mode: str = "view",
    error: str | None = None,
    status: int = 200,
    done: str | None = None,
) -> Response:
    """The row re-rendered, with the totals and the flow swapped out of band after a change."""
    try:
        rec = recommendations.get_recomendacao(rid, current_user, lote_id=lote_id)
    except DomainError as exc:
        return render_page(
            "batches/_row_missing.html", status=exc.status, rid=rid, message=domain_message(exc)
        )
    return render_page(
        "batches/_row_update.html",
        status=status,
        rec=rec,
        lote_id=lote_id,
        names=Names.load({rec.produto_id}),
        mode=mode,
        error=error,
        oob=mode == "view" and request.method == "POST",
        totais=batches.totais(lote_id, current_user) if request.method == "POST" else None,
        fluxo=batches.fluxo(lote_id, current_user) if request.method == "POST" else None,
        done=done,
        done_text=single_done(done) if done else "",
        undo_seconds=UNDO_VISIBLE_SECONDS,
    )


@blp.route("/lotes/<lid>/recomendacoes/<rid>")
@page_login_required(stock=True)
def row(lid: str, rid: str):
    """One row; ``?modo=veto`` opens the inline veto form (for those who may veto)."""
    mode = "veto" if request.args.get("modo") == "veto" and decisions.may(current_user, "vetar") else "view"
    return _row_response(_uuid_or_404(lid), _uuid_or_404(rid), mode=mode)


def _motivo(form) -> str:
    """The veto reason, validated by the API's schema (a ValidationError when missing)."""
    return VetoRequest().load({"motivo": form.get("motivo", "")})["motivo"]


class MissingRefusalReason(ValueError):
    """The page asks for a reason with every refusal (the API lets it out)."""


def _refusal(form) -> tuple[str, str | None]:
    """The refusal's reason code and words from a form, checked by the API's schema."""
    body = {"motivo": form.get("motivoRecusa", "")}
    if form.get("motivoTexto", "").strip():
        body["motivoTexto"] = form.get("motivoTexto", "")
    # "outro" needs words: said on the page as a missing reason.
    if not body["motivo"] or (body["motivo"] == "outro" and "motivoTexto" not in body):
        raise MissingRefusalReason
    data = RecusaRequest().load(body)
    return data["motivo"], data.get("motivo_texto")


def _reasons(acao: str, form) -> tuple[str | None, str | None]:
    """``(motivo, motivo_recusa)`` of a page action: a veto's text, or a refusal's words and code."""
    if acao == "vetar":
        return _motivo(form), None
    if acao == "recusar":
        code, words = _refusal(form)
        return words, code
    return None, None


# How long the page offers "Desfazer" after a single-row action (the service allows longer).
UNDO_VISIBLE_SECONDS = 10


@blp.route("/lotes/<lid>/recomendacoes/<rid>/<acao>", methods=["POST"])
@page_login_required(stock=True)
def act(lid: str, rid: str, acao: str):
    lote_id, rec_id = _uuid_or_404(lid), _uuid_or_404(rid)
    if acao not in decisions.ACOES:
        abort(404)
    if not wants_fragment():
        return _act_plain(lote_id, rec_id, acao)
    try:
        motivo, motivo_recusa = _reasons(acao, request.form)
        decisions.decidir(acao, lote_id, rec_id, current_user, motivo, motivo_recusa)
    except (ValidationError, MissingRefusalReason):
        if acao == "recusar":
            return _row_response(lote_id, rec_id, error=_("Escolha o motivo da recusa."), status=422)
        return _row_response(lote_id, rec_id, mode="veto", error=_("Informe o motivo do veto."), status=422)
    except DomainError as exc:
        refusal = refused(exc, inline_not_found=True)
        mode = "veto" if acao == "vetar" and isinstance(exc, ValidationFailed) else "view"
        message = _("Informe o motivo do veto.") if mode == "veto" else refusal.message
        return _row_response(lote_id, rec_id, mode=mode, error=message, status=refusal.status)
    return _row_response(lote_id, rec_id, done=acao)


@blp.route("/lotes/<lid>/recomendacoes/<rid>/recusa")
@page_login_required(stock=True)
def refuse_form(lid: str, rid: str):
    """The refusal's reasons, for the dialog the row's "Recusar" opens."""
    lote_id, rec_id = _uuid_or_404(lid), _uuid_or_404(rid)
    try:
        rec = recommendations.get_recomendacao(rec_id, current_user, lote_id=lote_id)
    except DomainError:
        abort(404)
    template = "batches/_refuse_form.html" if wants_fragment() else "batches/recusa.html"
    return render_page(
        template, rec=rec, lote_id=lote_id, label=_rec_label(rec, Names.load({rec.produto_id}))
    )


@blp.route("/lotes/<lid>/recomendacoes/<rid>/desfazer", methods=["POST"])
@page_login_required(stock=True)
def undo(lid: str, rid: str):
    """Undo the user's latest action on the row (the reverse move, logged)."""
    lote_id, rec_id = _uuid_or_404(lid), _uuid_or_404(rid)
    acao = request.form.get("acao", "")
    try:
        decisions.desfazer(lote_id, rec_id, current_user, acao)
    except DomainError as exc:
        refusal = refused(exc, inline_not_found=True)
        return _row_response(lote_id, rec_id, error=refusal.message, status=refusal.status)
    return _row_response(lote_id, rec_id, done="desfazer")


def _act_plain(lote_id: uuid.UUID, rec_id: uuid.UUID, acao: str):
    """A plain form post (no htmx yet): apply, then back to the batch page, whose row shows the
    outcome; a refusal shows as an error page, as any other page error."""
    try:
        motivo, motivo_recusa = _reasons(acao, request.form)
    except (ValidationError, MissingRefusalReason):
        abort(
            422,
            description=_("Escolha o motivo da recusa.")
            if acao == "recusar"
            else _("Informe o motivo do veto."),
        )
    decisions.decidir(acao, lote_id, rec_id, current_user, motivo, motivo_recusa)
    return redirect(url_for("batch_pages.lote", lid=lote_id) + f"#rec-{rec_id}", code=303)


@dataclass
class BulkResult:
    acao: str
    changed: int = 0
    unchanged: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    error: str | None = None
    # Of a decision on everything the filter matches: skipped, by why (``ResultadoEmLote``).
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def summary(self) -> str:
        """The toast: which action, how many changed, how many were skipped and why."""
        parts = [_done_count(self.acao, self.changed)]
        skipped = dict(self.skipped)
        if self.unchanged:
            skipped["_mesma"] = skipped.get("_mesma", 0) + self.unchanged
        if skipped:
            total = sum(skipped.values())
            reasons = sorted(skipped.items(), key=lambda kv: -kv[1])
            if len(reasons) == 1:
                why = _skip_label(reasons[0][0], total)
            else:
                why = ", ".join(f"{format_decimal(n)} {_skip_label(key, n)}" for key, n in reasons)
            parts.append(
                ngettext(
                    "%(n)s ignorada: %(why)s",
                    "%(n)s ignoradas: %(why)s",
                    total,
                    n=format_decimal(total),
                    why=why,
                )
            )
        if self.failures:
            parts.append(
                ngettext(
                    "%(n)s não pôde mudar",
                    "%(n)s não puderam mudar",
                    len(self.failures),
                    n=len(self.failures),
                )
            )
        return "; ".join(parts)


def _done_count(acao: str, n: int) -> str:
    """How many an action changed, in words ("1.234 aprovadas")."""
    num = format_decimal(n)
    forms = {
        "aprovar": ngettext("%(n)s aprovada", "%(n)s aprovadas", n, n=num),
        "recusar": ngettext("%(n)s recusada", "%(n)s recusadas", n, n=num),
        "executar": ngettext("%(n)s executada", "%(n)s executadas", n, n=num),
        "vetar": ngettext("%(n)s vetada", "%(n)s vetadas", n, n=num),
        "restaurar": ngettext("%(n)s restaurada", "%(n)s restauradas", n, n=num),
    }
    return forms.get(acao, ngettext("%(n)s alterada", "%(n)s alteradas", n, n=num))


def _skip_label(key: str, n: int) -> str:
    """Why ``n`` recommendations were skipped, agreeing with ``n``."""
    if key == "papel":
        return _("seu papel não permite esta ação")
    forms = {
        "pendente": ngettext("ainda pendente", "ainda pendentes", n),
        "aprovada": ngettext("já aprovada", "já aprovadas", n),
        "executada": ngettext("já executada", "já executadas", n),
        "recusada": ngettext("já recusada", "já recusadas", n),
        "vetada": ngettext("vetada", "vetadas", n),
        "nao_vetada": ngettext("não vetada", "não vetadas", n),
        "_mesma": ngettext("já estava assim", "já estavam assim", n),
    }
    return forms.get(key, key)


def single_done(acao: str) -> str:
    """The toast after a single-row action."""
    return {
        "aprovar": _("Recomendação aprovada"),
        "recusar": _("Recomendação recusada"),
        "executar": _("Recomendação executada"),
        "vetar": _("Recomendação vetada"),
        "restaurar": _("Recomendação restaurada"),
        "desfazer": _("Ação desfeita"),
    }.get(acao, "")


def _rec_label(rec: Recomendacao, names: Names) -> str:
    produto = names.produtos.get(rec.produto_id)
    return (
        f"{produto.nome if produto else '?'} {rec.cor} {rec.tamanho} · "
        f"{names.loja(rec.origem_id)} → {names.loja(rec.destino_id)}"
    )


def _bulk(lote_id: uuid.UUID, user: User, form) -> BulkResult:
    """Apply one action to each selected row (the service checks and keeps each on its own)."""
    acao = form.get("acao", "")
    result = BulkResult(acao=acao)
    if acao not in decisions.ACOES:
        result.error = _("Escolha uma ação.")
        return result
    ids: list[uuid.UUID] = []
    for raw in form.getlist("rid"):
        parsed = _optional_uuid(raw)
        if parsed is not None and parsed not in ids:
            ids.append(parsed)
    everything = form.get("todas") == "1"
    if not ids and not everything:
        result.error = _("Selecione ao menos uma recomendação.")
        return result
    try:
        motivo, motivo_recusa = _reasons(acao, form)
    except (ValidationError, MissingRefusalReason):
        result.error = (
            _("Escolha o motivo da recusa.") if acao == "recusar" else _("Informe o motivo do veto.")
        )
        return result
    if everything:
        feito = decisions.decidir_filtro(
            acao, _matching(lote_id, TableState.read(form)), user, motivo, motivo_recusa
        )
        result.changed, result.skipped = feito.alteradas, feito.ignoradas
        return result
    desfechos = decisions.decidir_varias(acao, lote_id, ids, user, motivo, motivo_recusa)
    # Only what the user may see gets a name in the report; the rest is "not found", as in the API.
    names = Names.load({d.recomendacao.produto_id for d in desfechos if d.recomendacao is not None})
    for desfecho in desfechos:
        if desfecho.error is not None:
            rec = desfecho.recomendacao
            label = (
                _rec_label(rec, names)
                if rec is not None
                else _("Recomendação %(id)s", id=str(desfecho.rid)[:8])
            )
            result.failures.append((label, domain_message(desfecho.error)))
        elif desfecho.changed:
            result.changed += 1
        else:
            result.unchanged += 1
    return result


@blp.route("/lotes/<lid>/acoes", methods=["POST"])
@page_login_required(stock=True)
def bulk(lid: str):
    """Bulk decisions on the selected rows; the table (same filters, sort and page) comes back."""
    lote_id = _uuid_or_404(lid)
    recommendations.get_lote(lote_id)  # 404 page when the batch does not exist
    result = _bulk(lote_id, current_user, request.form)
    status = 422 if result.error else 200
    # The totals and the flow come along out of band after a change.
    changed = result.error is None
    fragment = wants_fragment()
    context = _batch_context(lote_id, current_user, TableState.read(request.form), panels=not fragment)
    if fragment and changed:
        context.update(
            totais=batches.totais(lote_id, current_user), fluxo=batches.fluxo(lote_id, current_user)
        )
    context.update(bulk=result, oob=changed)
    return render_page("batches/lote.html", "rec_table", status=status, **context)


@blp.route("/lotes/<lid>/separacao.csv")
@page_login_required(stock=True)
def export_csv(lid: str):
    """Pick lists of the approved transfers: one section per origin (or one origin's file)."""
    lote_id = _uuid_or_404(lid)
    lote_or_404(lote_id)
    origem_id = _optional_uuid(request.args.get("origemId"))
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
    chosen = _optional_uuid(request.args.get("produto"))
    if chosen is not None:
        return redirect(url_for("batch_pages.grade_page", pid=chosen, lote=request.args.get("lote") or None))
    q = request.args.get("q", "").strip().lower()
    return render_page("batches/grade_index.html", "product_rows", produtos=catalogue.list_produtos(q), q=q)


@blp.route("/grade/<pid>")
@page_login_required(stock=True)
def grade_page(pid: str):
    produto_id = _uuid_or_404(pid)
    lote_param = request.args.get("lote") or None
    lote_id = _optional_uuid(lote_param)
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
        filtro=query.get("status") or "",
        statuses=STATUS_HISTORICO,
        error=error,
        limit=HISTORY_LIMIT,
    )
