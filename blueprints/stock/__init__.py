"""Remanejamento REST API (flask-smorest), mounted at ``{STOCK_PREFIX}/api/v1``."""

from __future__ import annotations


def api_blueprints() -> list:
    """Every blueprint of the service; each one's ``url_prefix`` is relative to the API base."""
    from blueprints.stock import auth, batches, catalogue, jobs

    return [auth.blp, auth.users_blp, catalogue.blp, batches.blp, jobs.blp]
