"""An organization's audit log (plan feature ``audit_log``)."""

from __future__ import annotations

from flask import Response
from flask_jwt_extended import current_user

from blueprints.common import auth_required
from blueprints.parsing import Blueprint
from blueprints.tracker.docs import error_responses
from schemas.tracker.audit import AuditLogPage, AuditLogQuery
from services.tracker import audit

blp = Blueprint(
    "tracker_audit", __name__, url_prefix="/organizations", description="The organization's audit log"
)

# The JSON page and, with ``format=csv``, the CSV download (the decorator's content alone
# would be replaced by this one, so both are listed).
CSV_RESPONSE = {
    "200": {
        "content": {
            "application/json": {"schema": AuditLogPage},
            "text/csv": {
                "schema": {"type": "string"},
                "example": "id,created_at,actor_id,actor_name,action,target_type,target_id,target_name,details\r\n",
            },
        }
    }
}


@blp.route("/<uuid:organization_id>/audit-log", methods=["GET"])
@auth_required()
@blp.arguments(AuditLogQuery, location="query", error_status_code=400)
@blp.response(200, AuditLogPage)
@blp.doc(responses=CSV_RESPONSE)
@error_responses(blp, 400, 402, 403, 404)
def audit_log(query, organization_id):
    """The organization's administrative events, newest first (owners and admins; other
    members 403).

    Recorded in the transaction of each change: members invited, joined, removed
    or leaving, role changes and revoked invitations; workspaces, projects,
    statuses and labels created, changed, moved or deleted; the platform's plan
    changes, suspension and reactivation; exports of this log. Each event has its
    `actor`, `action`, `target` (type, id and name at the time) and `details`
    (`old`/`new` values). Entries are never changed or removed; events are recorded
    whatever the plan, so moving to a plan with the log shows the earlier ones.

    Filters: `actor_id`, `action`, `since` (inclusive) and `until` (exclusive).
    `format=csv` answers every match as a CSV download (`text/csv`, newest first,
    at most 100,000 rows; a cell starting with `=`, `+`, `-` or `@` is prefixed with
    `'`), and the export is itself recorded as `audit_log.exported`.

    Without the plan feature `audit_log`: 402 `PLAN_LIMIT_REACHED` with
    `details: {feature: "audit_log", plan, available_in: [plan ids]}`.
    """
    if query.format == "csv":
        body = audit.export_csv(current_user, organization_id, query)
        return Response(
            body,
            mimetype="text/csv",
            headers={"Content-Disposition": f'attachment; filename="audit-log-{organization_id}.csv"'},
        )
    return audit.list_events(current_user, organization_id, query)
