"""Server-rendered pages (Jinja + htmx). They never live under an API base.

``app.register_pages`` registers the template globals and these blueprints, each
named here: the stock pages only where the stock service is served, the tracker's
(and the platform administration) only with the tracker, as the APIs.
"""

from __future__ import annotations

from collections.abc import Iterable

from flask import Blueprint

from blueprints.pages.templating import register_template_globals

__all__ = ["page_blueprints", "register_template_globals"]


def page_blueprints(services: Iterable[str]) -> list[Blueprint]:
    from blueprints.pages import account, home

    blueprints = [home.blp, account.blp]
    if "stock" in services:
        from blueprints.pages import batch_decisions, batches, catalogue, jobs, rules, stock_admin

        blueprints += [catalogue.blp, batches.blp, batch_decisions.blp, rules.blp, stock_admin.blp, jobs.blp]
    if "tracker" in services:
        from blueprints.pages import (
            admin,
            signup,
            tracker,
            tracker_attachments,
            tracker_audit,
            tracker_collab,
            tracker_issue,
            tracker_members,
            tracker_search,
            tracker_settings,
            tracker_sso,
            tracker_webhooks,
        )

        blueprints += [
            tracker.blp,
            tracker_issue.blp,
            tracker_attachments.blp,
            tracker_collab.blp,
            tracker_members.blp,
            tracker_audit.blp,
            tracker_search.blp,
            tracker_settings.blp,
            tracker_webhooks.blp,
            tracker_sso.blp,
            admin.blp,
            signup.blp,
        ]
    return blueprints
