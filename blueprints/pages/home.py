"""The landing page after sign-in."""

from __future__ import annotations

from flask import Blueprint, current_app, redirect, send_from_directory, url_for
from flask_jwt_extended import current_user

from blueprints.pages.batches import dashboard_context
from blueprints.pages.common import no_stock_access_page, page_login_required, render_page
from services.stock import catalogue, painel
from services.stock.access import has_stock_access

blp = Blueprint("home", __name__)


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
