"""The planners' decisions in place on a batch page: one row (approve, refuse with its reason,
execute, veto, restore, undo) or many at once (the selected rows, or every row the filters match).

Each answer is the re-rendered row or table, with the batch's totals and flow swapped out of
band after a change; without htmx a plain form post lands back on the batch page. The
decisions are ``services.stock.decisions``'s, as in the REST API, so a role is refused here
exactly as there.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from flask import Blueprint, Response, abort, redirect, request, url_for
from flask_babel import format_decimal, ngettext
from flask_babel import gettext as _
from flask_jwt_extended import current_user
from marshmallow import ValidationError

from blueprints.pages import catalogue as catalogue_pages
from blueprints.pages.batches import (
    Names,
    TableState,
    batch_context,
    matching_filters,
    optional_uuid,
    uuid_or_404,
)
from blueprints.pages.common import page_login_required, refused, render_page, wants_fragment
from blueprints.pages.messages import domain_message
from models.auth import User
from models.stock_batches import Recomendacao
from schemas.stock.batches import RecusaRequest, VetoRequest
from services.errors import DomainError, ValidationFailed
from services.stock import batches, decisions, problems, recommendations

blp = Blueprint("decision_pages", __name__)

# How long the page offers "Desfazer" after a single-row action (the service allows longer).
UNDO_VISIBLE_SECONDS = 10


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
    return _row_response(uuid_or_404(lid), uuid_or_404(rid), mode=mode)


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


@blp.route("/lotes/<lid>/recomendacoes/<rid>/<acao>", methods=["POST"])
@page_login_required(stock=True)
def act(lid: str, rid: str, acao: str):
    lote_id, rec_id = uuid_or_404(lid), uuid_or_404(rid)
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
    lote_id, rec_id = uuid_or_404(lid), uuid_or_404(rid)
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
    lote_id, rec_id = uuid_or_404(lid), uuid_or_404(rid)
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
        parsed = optional_uuid(raw)
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
            acao, matching_filters(lote_id, TableState.read(form)), user, motivo, motivo_recusa
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
    lote_id = uuid_or_404(lid)
    recommendations.get_lote(lote_id)  # 404 page when the batch does not exist
    result = _bulk(lote_id, current_user, request.form)
    status = 422 if result.error else 200
    # The totals and the flow come along out of band after a change.
    changed = result.error is None
    fragment = wants_fragment()
    context = batch_context(lote_id, current_user, TableState.read(request.form), panels=not fragment)
    if fragment and changed:
        context.update(
            totais=batches.totais(lote_id, current_user), fluxo=batches.fluxo(lote_id, current_user)
        )
    context.update(bulk=result, oob=changed)
    return render_page("batches/lote.html", "rec_table", status=status, **context)


@blp.route("/lotes/<lid>/recomendacoes/<rid>/problema", methods=["GET", "POST"])
@page_login_required(stock=True)
def problem_page(lid: str, rid: str):
    """Report a problem with a transfer (it opens an issue of the operations project), and the
    problems already reported on it, each with its issue."""
    lote_id, rec_id = uuid_or_404(lid), uuid_or_404(rid)
    rec = recommendations.get_recomendacao(rec_id, current_user, lote_id=lote_id)
    status, errors, reported = 200, {}, None
    if request.method == "POST":
        try:
            reported = catalogue_pages.report_from_form(rec_id)
        except (ValidationError, DomainError) as exc:
            refusal = refused(exc, inline_not_found=True)
            status, errors = refusal.status, refusal.errors
    return render_page(
        "batches/problema.html",
        status=status,
        rec=rec,
        lote_id=lote_id,
        names=Names.load({rec.produto_id}),
        listed=problems.listed(rec_id, current_user),
        reported=reported,
        errors=errors,
        problem_types=catalogue_pages.PROBLEM_TYPES,
    )
