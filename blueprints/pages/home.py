"""The landing page after sign-in."""

from __future__ import annotations

from flask import Blueprint, current_app, redirect, url_for
from flask_jwt_extended import current_user
from sqlalchemy import func, select

from blueprints.pages.common import no_stock_access_page, page_csrf_token, page_login_required, render_page
from blueprints.pages.remanejamento import dashboard_context
from extensions import db
from models.stock import Loja, Produto
from services.stock.access import has_stock_access

blp = Blueprint("home", __name__)


@blp.route("/")
@page_login_required()
def index():
    """The planner dashboard: KPIs, weekly effectiveness, learning and the open batch.

    An account without a stock role lands on the tracker instead."""
    if not has_stock_access(current_user):
        if "tracker" in current_app.config["SERVICES"]:
            return redirect(url_for("tracker_pages.index"))
        return no_stock_access_page()
    counts = {
        "lojas": db.session.scalar(select(func.count()).select_from(Loja).where(Loja.is_cd.is_(False))),
        "cds": db.session.scalar(select(func.count()).select_from(Loja).where(Loja.is_cd.is_(True))),
        "produtos": db.session.scalar(select(func.count()).select_from(Produto)),
    }
    return render_page("home.html", counts=counts, **dashboard_context(current_user))


@blp.app_context_processor
def page_context() -> dict:
    """The signed-in person (or None) and the CSRF value, for every template."""
    from flask_jwt_extended import get_current_user

    try:
        viewer = get_current_user()
    except RuntimeError:
        viewer = None
    return {"viewer": viewer, "csrf_token": page_csrf_token}
