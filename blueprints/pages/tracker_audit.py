"""An organization's audit log page: filters, paging and the CSV link (owners and admins).

The same ``services.tracker.audit`` functions as the API: a member who does not
manage gets the 403 page, another organization's log is 404, and an
organization whose plan lacks ``audit_log`` sees which plans include it.
"""

from __future__ import annotations

import uuid
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from flask import Response, current_app, request, url_for
from flask_babel import lazy_gettext as _l
from flask_jwt_extended import current_user
from marshmallow import ValidationError

from blueprints.pages.common import page_login_required, render_page
from blueprints.pages.messages import plan_name, schema_errors
from blueprints.pages.tracker_common import TrackerPagesBlueprint
from models.tracker_audit import AUDIT_ACTIONS
from schemas.tracker.audit import AuditLogQuery
from services.errors import PlanLimitError
from services.tracker import audit, organizations, plans

blp = TrackerPagesBlueprint("audit_pages", __name__)

ACTION_TEXT = {
    "organization.created": _l("Organização criada"),
    "organization.renamed": _l("Organização renomeada"),
    "organization.suspended": _l("Organização suspensa"),
    "organization.reactivated": _l("Organização reativada"),
    "plan.changed": _l("Plano alterado"),
    "member.invited": _l("Pessoa convidada"),
    "invitation.revoked": _l("Convite cancelado"),
    "member.joined": _l("Pessoa entrou"),
    "member.role_changed": _l("Papel alterado"),
    "member.removed": _l("Pessoa removida"),
    "member.left": _l("Pessoa saiu"),
    "workspace.created": _l("Espaço de trabalho criado"),
    "workspace.updated": _l("Espaço de trabalho alterado"),
    "project.created": _l("Projeto criado"),
    "project.updated": _l("Projeto alterado"),
    "project.deleted": _l("Projeto excluído"),
    "status.created": _l("Status criado"),
    "status.updated": _l("Status alterado"),
    "status.moved": _l("Status reordenado"),
    "status.deleted": _l("Status excluído"),
    "label.created": _l("Etiqueta criada"),
    "label.deleted": _l("Etiqueta excluída"),
    "audit_log.exported": _l("Log de auditoria exportado"),
    "sso.configured": _l("Login único configurado"),
    "sso.updated": _l("Login único alterado"),
    "sso.deleted": _l("Login único removido"),
    "sso.domain_verified": _l("Domínio comprovado"),
    "sso.disabled_by_operator": _l("Login único desativado pelo operador"),
    "sso.sessions_ended": _l("Sessões encerradas pela exigência de login único"),
    "sso.break_glass": _l("Proprietário entrou com senha (emergência)"),
    "sso.linked": _l("Conta vinculada ao provedor"),
    "sso.account_created": _l("Conta criada pelo provedor"),
    "sso.signed_in": _l("Entrada pelo login único"),
    "sso.refused": _l("Login único recusado"),
}
FIELDS = ("actor_id", "action", "since", "until", "page")


def _day_start(text: str, days: int = 0) -> str | None:
    """A day picked on the page (the business day's midnight), as the API's moment."""
    try:
        day = datetime.strptime(text, "%Y-%m-%d").date() + timedelta(days=days)
    except ValueError:
        return text or None
    zone = ZoneInfo(current_app.config["TIMEZONE"])
    return datetime.combine(day, time.min, tzinfo=zone).isoformat()


def _query_args() -> tuple[dict, dict]:
    """The page's query string (``since``/``until`` are days, ``until`` inclusive), and the
    same as the API's query reads it."""
    raw = {name: request.args.get(name, "").strip() for name in FIELDS}
    raw = {name: value for name, value in raw.items() if value}
    args = dict(raw)
    if "since" in raw:
        args["since"] = _day_start(raw["since"])
    if "until" in raw:
        args["until"] = _day_start(raw["until"], days=1)
    return raw, args


def _context(organization_id: uuid.UUID) -> tuple[dict, int]:
    organization, _role = organizations.get_organization(current_user, organization_id)
    raw, args = _query_args()
    context = {
        "organization": organization,
        "raw": raw,
        "base_args": {k: v for k, v in raw.items() if k != "page"},
        "actions": [(action, str(ACTION_TEXT[action])) for action in AUDIT_ACTIONS],
        "action_text": ACTION_TEXT,
        "members": [],
        "result": None,
        "errors": {},
        "locked_plans": None,
    }
    try:
        filters = AuditLogQuery().load(args)
    except ValidationError as exc:
        context["errors"] = schema_errors(exc)
        filters = AuditLogQuery().load({})
    try:
        result = audit.list_events(current_user, organization_id, filters)
    except PlanLimitError as exc:
        context["locked_plans"] = [
            plan_name(plan.id, plan.name)
            for plan in plans.plans_with_feature(exc.extra["details"]["feature"])
        ]
        return context, 402
    context["members"] = organizations.list_members(current_user, organization_id)
    if not context["errors"]:
        context["result"] = result
    context["csv_url"] = url_for(
        "audit_pages.audit_log_csv", organization_id=organization_id, **context["base_args"]
    )
    return context, 400 if context["errors"] else 200


@blp.route("/o/<uuid:organization_id>/audit-log")
@page_login_required()
def audit_log(organization_id: uuid.UUID):
    context, status = _context(organization_id)
    return render_page("tracker/audit_log.html", "audit_results", status=status, **context)


@blp.route("/o/<uuid:organization_id>/audit-log.csv")
@page_login_required()
def audit_log_csv(organization_id: uuid.UUID):
    """The filtered log as the API's CSV (the export is recorded in the log)."""
    _raw, args = _query_args()
    args.pop("page", None)
    try:
        filters = AuditLogQuery().load(args)
    except ValidationError:
        filters = AuditLogQuery().load({})
    body = audit.export_csv(current_user, organization_id, filters)
    return Response(
        body,
        mimetype="text/csv",
        headers={"Content-Disposition": f'attachment; filename="audit-log-{organization_id}.csv"'},
    )
