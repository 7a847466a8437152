"""The landing page after sign-in."""

from __future__ import annotations

import json
from typing import Any

from flask import (
    Blueprint,
    current_app,
    redirect,
    send_from_directory,
    url_for,
)
from flask_babel import gettext as _
from flask_jwt_extended import current_user

from blueprints.pages.batches import Names, lote_or_404
from blueprints.pages.common import (
    no_stock_access_page,
    page_login_required,
    render_page,
)
from models.auth import User
from models.stock_batches import Recomendacao
from services.stock import (
    batches,
    catalogue,
    learning,
    metrics,
    operations,
    outcome,
    painel,
    recommendations,
)
from services.stock.access import has_stock_access

blp = Blueprint("home", __name__)

EFETIVIDADE_WEEKS = 12
APRENDIZADO_BARS = 8
RESULTADO_LOTES = 8
CHART_COLORS = {
    "aprovadas": "#0f766e",
    "executadas": "#175cd3",
    "recusadas": "#b42318",
    "vetadas": "#b54708",
    "pendentes": "#98a2b3",
    "previsto": "#175cd3",
    "previsto_aberto": "#a4bcfd",
    "vendido": "#0f766e",
    "vendido_aberto": "#99d5ca",
}


def _chart(
    kind: str, labels: list[str], datasets: list[dict], *, horizontal: bool = False, stacked: bool = False
) -> str:
    """A Chart.js configuration as JSON, embedded in the page for the chart script to draw."""
    axis = {"beginAtZero": True, "stacked": stacked, "ticks": {"precision": 0}}
    options: dict[str, Any] = {
        "responsive": True,
        "maintainAspectRatio": False,
        "animation": False,
        "plugins": {"legend": {"position": "bottom"}},
        "scales": {"x": dict(axis), "y": dict(axis)},
    }
    if horizontal:
        options["indexAxis"] = "y"
        options["plugins"]["legend"] = {"display": False}
    config = {"type": kind, "data": {"labels": labels, "datasets": datasets}, "options": options}
    # No "<" at all inside the <script> element that carries the JSON ("</script>", "<!--").
    return json.dumps(config, ensure_ascii=False).replace("<", "\\u003c")


def dashboard_context(user: User) -> dict:
    """KPIs as cards, weekly effectiveness, learning and outcome (predicted against sold per
    batch) as charts, the open batch at a glance."""
    kpis = metrics.kpis_dashboard()
    semanas = metrics.efetividade_semanal().semanas[:EFETIVIDADE_WEEKS]
    semanas.reverse()  # oldest first, left to right
    # Stacked, each recommendation once: approved-not-executed, executed, refused, vetoed, pending.
    series = (
        ("aprovadas", _("Aprovadas, a executar"), lambda s: s.aprovadas - s.executadas),
        ("executadas", _("Executadas"), lambda s: s.executadas),
        ("recusadas", _("Recusadas"), lambda s: s.recusadas),
        ("vetadas", _("Vetadas"), lambda s: s.vetadas),
        ("pendentes", _("Pendentes"), lambda s: s.pendentes),
    )
    efetividade_chart = _chart(
        "bar",
        [s.semana for s in semanas],
        [
            {
                "label": label,
                "data": [value(s) for s in semanas],
                "backgroundColor": CHART_COLORS[key],
                "maxBarThickness": 48,
            }
            for key, label, value in series
        ],
        stacked=True,
    )
    aprendizado = metrics.aprendizado()
    grupos = (
        [(_("Rota"), g) for g in aprendizado.rotas]
        + [(_("Marca"), g) for g in aprendizado.marcas]
        + [(_("Categoria"), g) for g in aprendizado.categorias]
    )
    grupos.sort(key=lambda item: learning.penalty_order(item[1]))
    top = [item for item in grupos if item[1].ajuste_percentual > 0][:APRENDIZADO_BARS]
    aprendizado_chart = _chart(
        "bar",
        [f"{tipo}: {g.chave}" for tipo, g in top],
        [
            {
                "label": _("Redução do score (%)"),
                "data": [g.ajuste_percentual for _tipo, g in top],
                "backgroundColor": "#b54708",
            }
        ],
        horizontal=True,
    )
    resultado = outcome.resultado(user, "lote", limite=RESULTADO_LOTES)
    recentes = list(reversed(resultado.grupos))  # oldest first, left to right
    # Two stacks per batch, predicted and sold in 14 days: complete windows at the bottom,
    # the open ones on top in a paler shade, so the two are never read as one figure.
    stacks = (
        ("previsto", "esi", _("Previsto (ESI), janela completa"), lambda j: j.esi or 0),
        ("previsto_aberto", "esi", _("Previsto, janela aberta"), lambda j: j.parciais.esi or 0),
        ("vendido", "asi", _("Vendido do movimentado em 14 dias"), lambda j: j.asi),
        ("vendido_aberto", "asi", _("Vendido até agora, janela aberta"), lambda j: j.parciais.asi),
    )
    resultado_chart = _chart(
        "bar",
        [g.chave for g in recentes],
        [
            {
                "label": label,
                "data": [value(g.janela_14) for g in recentes],
                "backgroundColor": CHART_COLORS[key],
                "stack": stack,
                "maxBarThickness": 36,
            }
            for key, stack, label, value in stacks
        ],
        stacked=True,
    )
    lote = totais = None
    urgentes: list[Recomendacao] = []
    names = None
    if kpis.lote_atual_id is not None:
        lote = lote_or_404(kpis.lote_atual_id)
        totais = batches.totais(kpis.lote_atual_id, user)
        urgentes = recommendations.list_recomendacoes(
            user,
            recommendations.FiltroRecomendacoes(
                lote_id=kpis.lote_atual_id, status="pendente", prioridade="alta", vetado=False, limite=5
            ),
        )
        names = Names.load({r.produto_id for r in urgentes})
    return {
        "kpis": kpis,
        "semanas": semanas,
        "efetividade_chart": efetividade_chart,
        "aprendizado": aprendizado,
        "aprendizado_grupos": grupos,
        "aprendizado_chart": aprendizado_chart if top else None,
        "resultado": resultado,
        # Each batch's issues in the tracker's operations project, for its members.
        "batch_issues": operations.batch_issue_links(user, [(g.lote_id, g.chave) for g in resultado.grupos]),
        "resultado_chart": resultado_chart if recentes else None,
        "lote": lote,
        "totais": totais,
        "urgentes": urgentes,
        "names": names,
    }


@blp.route("/")
@page_login_required()
def index():
    """The planner dashboard: KPIs, weekly effectiveness, learning and the open batch.

    An account without a stock role, or a process that serves only the tracker, lands
    on the tracker instead."""
    services = current_app.config["SERVICES"]
    if "stock" not in services or not has_stock_access(current_user):
        if "tracker" in services:
            return redirect(url_for("tracker_pages.index"))
        return no_stock_access_page()
    if current_user.papel == "gerente_loja" and current_user.loja_id is not None:
        # A store manager acts on its own store only: its figures and its transfers.
        return render_page("home_loja.html", painel=painel.painel_loja(current_user))
    return render_page("home.html", counts=catalogue.counts(), **dashboard_context(current_user))


@blp.route("/favicon.ico")
def favicon():
    """Browsers ask for /favicon.ico whatever the page links; the icon is an SVG."""
    return send_from_directory(
        current_app.static_folder, "favicon.svg", mimetype="image/svg+xml", max_age=86400
    )
