"""What every page template may use, registered on the app in one place (``register_pages``):
the signed-in person, the CSRF value, what a role may do, and the pages' text filters."""

from __future__ import annotations

from datetime import date, datetime

from babel.numbers import get_decimal_symbol, get_group_symbol
from flask import Flask, g
from flask_babel import format_date, format_datetime, format_decimal, get_locale
from flask_babel import gettext as _
from jinja2 import pass_context

from blueprints.pages.common import page_csrf_token
from blueprints.pages.messages import PAPEL_TEXT, papel_name, plan_name, status_name
from blueprints.pages.tracker_markdown import render_markdown
from services import auth as auth_service
from services.stock import decisions, operations
from services.tracker import notifications
from services.tracker.workspaces import DEFAULT_STATUSES


def operations_on() -> bool:
    """Whether an operations project is named (read once per request: a batch page asks per row)."""
    if "operations_on" not in g:
        g.operations_on = operations.is_on()
    return g.operations_on


def register_template_globals(app: Flask) -> None:
    app.context_processor(page_context)
    # The context processor's csrf_token() is not visible inside imported macros; globals are.
    app.add_template_global(page_csrf_token, "rm_csrf_token")
    app.add_template_global(auth_service.is_superadmin, "is_superadmin")
    app.add_template_global(decisions.available_actions, "row_actions")
    app.add_template_global(decisions.may, "may_decide")
    app.add_template_global(operations_on)
    app.add_template_global(rm_text)
    app.add_template_filter(rm_num)
    app.add_template_filter(rm_int)
    app.add_template_filter(periodo_filter, "periodo")
    app.add_template_filter(iso_datetime_filter, "iso_datetime")
    app.add_template_filter(status_name)
    app.add_template_filter(render_markdown, "markdown")
    app.add_template_filter(iso_date_filter, "iso_date")
    app.add_template_global(unread_notifications)
    app.add_template_global(timeline_text)
    app.add_template_filter(papel_name)
    app.add_template_filter(plan_name)
    app.add_template_filter(byte_size)
    app.add_template_global(PAPEL_TEXT, "PAPEL_TEXT")
    app.jinja_env.globals["ngettext"] = _grouped_ngettext(app.jinja_env.globals["ngettext"])


def _grouped_ngettext(ngettext):
    """Jinja's ``ngettext`` puts the count in the text as Python prints it ("1030"); the pages
    write every other number with the locale's grouping ("1.030"), so the count is too."""

    @pass_context
    def grouped(context, singular: str, plural: str, num, **variables):
        if isinstance(num, int) and not isinstance(num, bool):
            variables.setdefault("num", rm_int(num))
        return ngettext(context, singular, plural, num, **variables)

    return grouped


def page_context() -> dict:
    """The signed-in person (or None) and the CSRF value, for every template."""
    from flask_jwt_extended import get_current_user

    try:
        viewer = get_current_user()
    except RuntimeError:
        viewer = None
    return {"viewer": viewer, "csrf_token": page_csrf_token}


def rm_text() -> dict:
    """The labels of a recommendation row, translated once per request (a page shows 50 rows)."""
    cached = g.get("rm_text")
    if cached is None:
        cached = g.rm_text = {
            "status": {
                "pendente": _("Pendente"),
                "aprovada": _("Aprovada"),
                "executada": _("Executada"),
                "recusada": _("Recusada"),
                "vetada": _("Vetada"),
            },
            "prio": {"alta": _("Alta"), "media": _("Média"), "baixa": _("Baixa")},
            "problema": _("Relatar problema"),
            "acao": {
                "aprovar": _("Aprovar"),
                "recusar": _("Recusar"),
                "executar": _("Executar"),
                "vetar": _("Vetar"),
                "restaurar": _("Restaurar"),
            },
            "select": _("Selecionar %(r)s"),
            "tam": _("tam."),
            "campanha": _("Campanha"),
            "why": _("Por quê?"),
            "destino": _("Destino"),
            "origem": _("Origem"),
            "unidades": _("Unidades"),
            "ruptura": _("Ruptura em"),
            "score": _("Score"),
            "distancia": _("Distância"),
            "stock_sales": _("%(e)s un. · vende %(v)s/dia"),
            "days": _("%(d)s d"),
            # Out of stock already: "ruptura em 0 d" reads as a date still to come.
            "stockout": _("em ruptura"),
            "motivo": _("Motivo"),
            "veto_reason": _("Motivo do veto"),
            "veto_confirm": _("Confirmar veto"),
            "cancel": _("Cancelar"),
            "motivos_recusa": {
                "estoque_errado": _("Estoque errado"),
                "loja_recusa": _("A loja recusa"),
                "custo": _("Custo"),
                "outro": _("Outro motivo"),
            },
            "refuse_reason": _("Motivo da recusa"),
        }
    return cached


def _symbols() -> tuple[str, str]:
    """The viewer's decimal and grouping symbols, looked up once per request."""
    cached = g.get("rm_symbols")
    if cached is None:
        locale = get_locale()
        cached = g.rm_symbols = (get_decimal_symbol(locale), get_group_symbol(locale))
    return cached


def rm_num(value: float) -> str:
    """Up to two decimals in the viewer's locale: cheap enough for every row of a long table."""
    decimal, _group = _symbols()
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return text.replace(".", decimal) if "." in text else text


def rm_int(value: int) -> str:
    """An integer with the viewer's grouping symbol."""
    return f"{value:,}".replace(",", _symbols()[1])


def periodo_filter(value: str) -> str:
    """``2026-11-16/2026-11-22`` as ``16/11/2026 – 22/11/2026``."""
    try:
        start, end = (date.fromisoformat(part) for part in value.split("/"))
    except (ValueError, AttributeError):
        return value
    return f"{format_date(start, 'short')} – {format_date(end, 'short')}"


def iso_date_filter(value: str) -> str:
    """An ISO 8601 date (``2026-11-22``) as the viewer writes it."""
    try:
        return format_date(date.fromisoformat(value), "short")
    except (ValueError, TypeError):
        return value


def timeline_text() -> dict:
    """The words of an issue's timeline, translated once per request (it shows up to 50 entries)."""
    cached = g.get("timeline_text")
    if cached is None:
        cached = g.timeline_text = {
            "field": {
                "title": _("o título"),
                "description": _("a descrição"),
                "type": _("o tipo"),
                "priority": _("a prioridade"),
                "assignee": _("o responsável"),
                "parent": _("a tarefa pai"),
                "start_date": _("o início"),
                "due_date": _("o prazo"),
                "estimate": _("a estimativa"),
                "labels": _("as etiquetas"),
                "status": _("o status"),
            },
            # The history keeps a status's category, not its colour: the default colour of each.
            "category_color": {category: color for _name, color, category in DEFAULT_STATUSES},
            "someone": _("Alguém"),
            "nothing": _("nada"),
            "to": _("para"),
            "created": _("criou a tarefa"),
            "status_changed": _("mudou o status de"),
            "changed": _("mudou %(field)s de"),
            "description": _("editou a descrição"),
            "labels": _("mudou as etiquetas"),
            "relation_added": _("marcou que esta tarefa"),
            "relation_removed": _("desfez a relação"),
            "sub_issue_added": _("adicionou a subtarefa"),
            "sub_issue_removed": _("tirou a subtarefa"),
            "comment_edited": _("editou um comentário"),
            "comment_deleted": _("excluiu um comentário"),
            "attachment_added": _("anexou"),
            "attachment_deleted": _("removeu o anexo"),
            "edited": _("editado"),
            "edit": _("Editar"),
            "comment": _("Comentário"),
            "save": _("Salvar comentário"),
            "delete": _("Excluir"),
            "delete_confirm": _("Excluir este comentário?"),
        }
    return cached


def unread_notifications(user) -> int:
    """The navigation's badge: how many of the person's notifications are unread (once per request)."""
    cached = g.get("unread_notifications")
    if cached is None:
        cached = g.unread_notifications = notifications.unread_count(user)
    return cached


def iso_datetime_filter(value: datetime | str) -> str:
    """A moment (or its ISO 8601 UTC text) in the viewer's time zone."""
    if isinstance(value, datetime):
        return format_datetime(value, "short")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return value
    return format_datetime(moment, "short")


BYTE_UNITS = (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024))


def byte_size(value: int | None) -> str:
    """A size in bytes as people read it: ``1,5 GB``, ``250 MB`` (binary multiples, as the
    plan limits are entered)."""
    if value is None:
        return "—"
    for unit, size in BYTE_UNITS:
        if value >= size:
            return f"{format_decimal(value / size, '#,##0.#')} {unit}"
    return f"{format_decimal(value)} B"
