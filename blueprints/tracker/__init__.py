"""Tracker REST API (flask-smorest), mounted at ``{TRACKER_PREFIX}/api/v1``."""

from __future__ import annotations


def api_blueprints() -> list:
    """Every blueprint of the service; each one's ``url_prefix`` is relative to the API base."""
    from blueprints.tracker import (
        admin,
        attachments,
        audit,
        auth,
        collab,
        custom_fields,
        issues,
        jobs,
        search,
        sso,
        tenancy,
        webhooks,
    )

    return [
        auth.blp,
        tenancy.orgs_blp,
        audit.blp,
        tenancy.invitations_blp,
        tenancy.blp,
        issues.blp,
        issues.bulk_blp,
        custom_fields.blp,
        collab.blp,
        attachments.blp,
        collab.notifications_blp,
        admin.blp,
        jobs.blp,
        webhooks.blp,
        sso.blp,
        search.blp,
    ]
