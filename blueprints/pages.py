"""Browser pages. They never live under an API base."""

from __future__ import annotations

from flask import Blueprint, current_app, render_template

blp = Blueprint("pages", __name__)


@blp.route("/")
def index():
    cfg = current_app.config
    apis = []
    if "stock" in cfg["SERVICES"]:
        apis.append(("Remanejamento", cfg["STOCK_PREFIX"] + "/api/v1"))
    if "tracker" in cfg["SERVICES"]:
        apis.append(("Tracker", cfg["TRACKER_PREFIX"] + "/api/v1"))
    return render_template("index.html", apis=apis)
