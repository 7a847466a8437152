"""Server-rendered pages (Jinja + htmx). They never live under an API base."""

from __future__ import annotations


def page_blueprints() -> list:
    from blueprints.pages import account, catalogue, home, remanejamento
    from blueprints.pages import admin as admin_pages

    # The tracker's blueprint, complete with the issue page routes that module adds to it.
    from blueprints.pages.tracker_issue import blp as tracker_pages

    return [home.blp, account.blp, catalogue.blp, remanejamento.blp, tracker_pages, admin_pages.blp]
