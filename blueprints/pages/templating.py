"""What every page template may use, registered on the app in one place (``register_pages``):
the signed-in person, the CSRF value, what a role may do, and the pages' text filters."""

from __future__ import annotations

from datetime import date, datetime

from babel.numbers import get_decimal_symbol, get_group_symbol
from flask import Flask, g
from flask_babel import format_date, format_datetime, get_locale
from flask_babel import gettext as _

from blueprints.pages.common import page_csrf_token
from blueprints.pages.messages import status_name
from services import auth as auth_service
from services.stock import decisions


def register_template_globals(app: Flask) -> None:
    app.context_processor(page_context)
    # The context processor's csrf_token() is not visible inside imported macros; globals are.
    app.add_template_global(page_csrf_token, "rm_csrf_token")
    app.add_template_global(auth_service.is_superadmin, "is_superadmin")
    app.add_template_global(decisions.available_actions, "row_actions")
    app.add_template_global(decisions.may, "may_decide")
    app.add_template_global(rm_text)
    app.add_template_filter(rm_num)
    app.add_template_filter(rm_int)
    app.add_template_filter(periodo_filter, "periodo")
    app.add_template_filter(iso_datetime_filter, "iso_datetime")
    app.add_template_filter(status_name)


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
            "distancia": _("Distância"),
            "stock_sales": _("%(e)s un. · vende %(v)s/dia"),
            "days": _("%(d)s d"),
            "motivo": _("Motivo"),
            "veto_reason": _("Motivo do veto"),
            "veto_confirm": _("Confirmar veto"),
            "cancel": _("Cancelar"),
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


def iso_datetime_filter(value: str) -> str:
    """An ISO 8601 UTC timestamp in the viewer's time zone."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return value
    return format_datetime(moment, "short")
