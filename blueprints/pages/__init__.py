"""Server-rendered pages (Jinja + htmx). They never live under an API base."""

from __future__ import annotations


def page_blueprints() -> list:
    from blueprints.pages import account, catalogue, home

    return [home.blp, account.blp, catalogue.blp]
