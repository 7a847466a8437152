"""Server-rendered pages (Jinja + htmx). They never live under an API base."""

from __future__ import annotations

import importlib

# Modules that add their routes to the tracker's blueprint: the issue page, the people
# page, a project's settings.
TRACKER_PAGE_MODULES = ("tracker_issue", "tracker_members", "tracker_settings")


def page_blueprints() -> list:
    from blueprints.pages import account, catalogue, home, remanejamento, tracker
    from blueprints.pages import admin as admin_pages

    for module in TRACKER_PAGE_MODULES:
        importlib.import_module(f"blueprints.pages.{module}")
    return [home.blp, account.blp, catalogue.blp, remanejamento.blp, tracker.blp, admin_pages.blp]
