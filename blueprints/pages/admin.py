"""Platform administration pages (superadmins): statistics, users, organizations, plans, workspaces.

The same ``services.tracker.admin`` and ``plans`` functions as ``/tracker/api/v1/admin``;
anyone else signed in gets 403.
"""

from __future__ import annotations

import uuid
from functools import wraps

from flask import Blueprint, Response, abort, make_response, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_jwt_extended import current_user
from marshmallow import ValidationError

from blueprints.pages.common import page_login_required, render_page
from blueprints.pages.tracker import tenant_error
from blueprints.pages.tracker_text import domain_errors, domain_message, schema_errors
from extensions import db, htmx
from models.auth import User
from models.tracker import FEATURE_NAMES, LIMIT_NAMES, Organization
from schemas.tracker.admin import (
    AdminOrganizationUpdate,
    AdminUserUpdate,
    AdminWorkspaceUpdate,
    OrganizationQuery,
    PlanCreate,
    PlanUpdate,
    UserQuery,
    WorkspaceQuery,
)
from services import auth as auth_service
from services.errors import DomainError
from services.tracker import admin, plans

blp = Blueprint("admin_pages", __name__, url_prefix="/admin")
# Unknown ids and other service errors get the same pt-BR error page as the tracker pages.
blp.register_error_handler(DomainError, tenant_error)

PER_PAGE = 25
LIMIT_TEXT = {
    "members": _l("Membros"),
    "projects": _l("Projetos"),
    "issues": _l("Issues"),
    "storage_bytes": _l("Armazenamento (bytes)"),
}
FEATURE_TEXT = {
    "semantic_search": _l("Busca semântica"),
    "custom_fields": _l("Campos personalizados"),
    "sso": _l("SSO"),
    "audit_log": _l("Log de auditoria"),
}


def superadmin_page(view):
    """Signed in (else the login page) and a platform administrator (else 403)."""

    @page_login_required()
    @wraps(view)
    def wrapper(*args, **kwargs):
        if not auth_service.is_superadmin(current_user):
            abort(403, description=_("Só administradores da plataforma abrem esta página."))
        return view(*args, **kwargs)

    return wrapper


@blp.context_processor
def admin_labels() -> dict:
    return {
        "LIMIT_NAMES": LIMIT_NAMES,
        "FEATURE_NAMES": FEATURE_NAMES,
        "LIMIT_TEXT": LIMIT_TEXT,
        "FEATURE_TEXT": FEATURE_TEXT,
    }


def _query(schema, names: tuple[str, ...]) -> tuple[dict, dict]:
    """The list query through the API's schema; a bad value shows an error, not a 500."""
    raw = {name: request.args.get(name, "").strip() for name in names}
    raw = {k: v for k, v in raw.items() if v}
    try:
        loaded = schema().load({"per_page": PER_PAGE, **raw})
    except ValidationError as exc:
        return {"page": 1, "per_page": PER_PAGE}, schema_errors(exc)
    return loaded, {}


def _fragment(template: str, status: int = 200, **context) -> Response:
    response = make_response(render_template(template, **context), status)
    response.headers.add("Vary", "HX-Request")
    return response


def _pages(page) -> int:
    return max(1, (page.total + page.per_page - 1) // page.per_page)


# --- statistics ----------------------------------------------------------------------------


@blp.route("/")
@superadmin_page
def stats():
    figures = admin.stats()
    plan_names = {plan.id: plan.name for plan in plans.list_plans()}
    issues = figures["issues"]
    charts = {
        "plans": {
            "labels": [plan_names.get(pid, pid) for pid in figures["organizations"]["by_plan"]],
            "values": list(figures["organizations"]["by_plan"].values()),
        },
        "issues": {
            "labels": [_("Abertas"), _("Concluídas"), _("Canceladas")],
            "values": [issues["open"], issues["done"], issues["total"] - issues["open"] - issues["done"]],
        },
        "users": {
            "labels": [_("Ativas em 30 dias"), _("Sem atividade recente")],
            "values": [
                figures["users"]["active_last_30d"],
                figures["users"]["total"] - figures["users"]["active_last_30d"],
            ],
        },
    }
    return render_page("admin/stats.html", figures=figures, charts=charts, plan_names=plan_names)


# --- users -----------------------------------------------------------------------------------


@blp.route("/users")
@superadmin_page
def users():
    query, errors = _query(UserQuery, ("q", "page"))
    page = admin.list_users(query)
    return render_page(
        "admin/users.html",
        "user_rows",
        status=400 if errors else 200,
        page=page,
        pages=_pages(page),
        q=request.args.get("q", ""),
        errors=errors,
    )


@blp.route("/users/<uuid:user_id>", methods=["POST"])
@superadmin_page
def update_user(user_id: uuid.UUID):
    form = {k: request.form[k] for k in ("banned", "superadmin") if k in request.form}
    try:
        row = admin.update_user(current_user, user_id, AdminUserUpdate().load(form))
    except ValidationError as exc:
        return _user_error(user_id, next(iter(schema_errors(exc).values())), 422)
    except DomainError as exc:
        db.session.rollback()
        if exc.status == 404:
            abort(404)
        return _user_error(user_id, domain_message(exc), exc.status)
    if not htmx:
        return redirect(url_for("admin_pages.users"), code=303)
    return _fragment("admin/_user_row.html", user=row, message=None)


def _user_error(user_id: uuid.UUID, message: str, status: int) -> Response:
    if not htmx:
        abort(status, description=message)
    user = db.session.get(User, user_id)
    rows = admin.list_users({"q": user.email, "per_page": 100}).items if user else []
    row = next((r for r in rows if r["id"] == user_id), None)
    if row is None:
        abort(404)
    return _fragment("admin/_user_row.html", status=status, user=row, message=message)


# --- organizations -----------------------------------------------------------------------------


@blp.route("/organizations")
@superadmin_page
def organizations():
    query, errors = _query(OrganizationQuery, ("q", "plan", "page"))
    page = admin.list_organizations(query)
    return render_page(
        "admin/organizations.html",
        "org_rows",
        status=400 if errors else 200,
        page=page,
        pages=_pages(page),
        q=request.args.get("q", ""),
        plan=request.args.get("plan", ""),
        plans=plans.list_plans(),
        errors=errors,
    )


@blp.route("/organizations/<uuid:organization_id>", methods=["POST"])
@superadmin_page
def update_organization(organization_id: uuid.UUID):
    form = {k: request.form[k] for k in ("plan", "suspended") if k in request.form}
    message, status = None, 200
    try:
        row = admin.update_organization(organization_id, AdminOrganizationUpdate().load(form))
    except ValidationError as exc:
        message, status = next(iter(schema_errors(exc).values())), 422
    except DomainError as exc:
        db.session.rollback()
        if exc.status == 404:
            abort(404)
        message, status = next(iter(domain_errors(exc).values())), exc.status
    if not htmx:
        if message:
            abort(status, description=message)
        return redirect(url_for("admin_pages.organizations"), code=303)
    if message:
        # An empty change set is a plain re-read of the row as the list shows it.
        row = admin.update_organization(organization_id, {})
    return _fragment("admin/_org_row.html", status=status, org=row, plans=plans.list_plans(), message=message)


# --- plans -------------------------------------------------------------------------------------


def _plan_form_data(form, creating: bool) -> dict:
    """Nested ``limits`` and ``features`` from flat form fields (checkboxes: absent is false)."""
    data: dict = {}
    for name in ("id", "name", "price_brl") if creating else ("name", "price_brl"):
        value = form.get(name, "").strip()
        if value or creating:
            data[name] = value
    limits = {name: form.get(f"limits.{name}", "").strip() for name in LIMIT_NAMES}
    data["limits"] = {k: v for k, v in limits.items() if v or creating}
    data["features"] = {name: f"features.{name}" in form for name in FEATURE_NAMES}
    return data


def _plans_page(status: int = 200, block: str | None = None, **extra) -> Response:
    context = {
        "plans": plans.list_plans(),
        "form": {},
        "errors": {},
        "created": request.args.get("created"),
    }
    context.update(extra)
    return render_page("admin/plans.html", block, status=status, **context)


@blp.route("/plans")
@superadmin_page
def plans_page():
    return _plans_page()


@blp.route("/plans", methods=["POST"])
@superadmin_page
def create_plan():
    form = request.form.to_dict()
    try:
        plan = plans.create_plan(PlanCreate().load(_plan_form_data(request.form, creating=True)))
    except ValidationError as exc:
        return _plans_page(422, block="plan_create", form=form, errors=schema_errors(exc))
    except DomainError as exc:
        db.session.rollback()
        return _plans_page(exc.status, block="plan_create", form=form, errors=domain_errors(exc))
    if htmx:
        response = make_response("", 200)
        response.headers["HX-Redirect"] = url_for("admin_pages.plans_page", created=plan.id)
        return response
    return redirect(url_for("admin_pages.plans_page", created=plan.id), code=303)


@blp.route("/plans/<plan_id>", methods=["POST"])
@superadmin_page
def update_plan(plan_id: str):
    try:
        plan = plans.update_plan(plan_id, PlanUpdate().load(_plan_form_data(request.form, creating=False)))
    except ValidationError as exc:
        errors, status = schema_errors(exc), 422
    except DomainError as exc:
        db.session.rollback()
        if exc.status == 404:
            abort(404)
        errors, status = domain_errors(exc), exc.status
    else:
        if not htmx:
            return redirect(url_for("admin_pages.plans_page"), code=303)
        return _fragment("admin/_plan_form.html", plan=plan, errors={}, saved=True)
    if not htmx:
        abort(status, description=next(iter(errors.values())))
    return _fragment(
        "admin/_plan_form.html", status=status, plan=plans.get_plan(plan_id), errors=errors, saved=False
    )


def _organization_of(organization_id: uuid.UUID) -> Organization | None:
    """The workspace's organization; the admin list already loaded it into the session."""
    return db.session.get(Organization, organization_id)


# --- workspaces --------------------------------------------------------------------------------


@blp.route("/workspaces")
@superadmin_page
def workspaces():
    query, errors = _query(WorkspaceQuery, ("q", "organization_id", "page"))
    page = admin.list_workspaces(query)
    organization = None
    if query.get("organization_id"):
        organization = db.session.get(Organization, query["organization_id"])
    return render_page(
        "admin/workspaces.html",
        "workspace_rows",
        status=400 if errors else 200,
        page=page,
        pages=_pages(page),
        q=request.args.get("q", ""),
        organization=organization,
        org_of=_organization_of,
        errors=errors,
    )


@blp.route("/workspaces/<uuid:workspace_id>", methods=["POST"])
@superadmin_page
def update_workspace(workspace_id: uuid.UUID):
    form = {k: request.form.get(k, "").strip() for k in ("name", "slug")}
    try:
        row = admin.update_workspace(
            workspace_id, AdminWorkspaceUpdate().load({k: v for k, v in form.items() if v})
        )
    except ValidationError as exc:
        errors, status = schema_errors(exc), 422
    except DomainError as exc:
        db.session.rollback()
        if exc.status == 404:
            abort(404)
        errors, status = domain_errors(exc), exc.status
    else:
        if not htmx:
            return redirect(url_for("admin_pages.workspaces"), code=303)
        return _fragment("admin/_workspace_row.html", ws=row, org_of=_organization_of, errors={}, saved=True)
    if not htmx:
        abort(status, description=next(iter(errors.values())))
    # An empty change set is a plain re-read of the row as the list shows it.
    row = admin.update_workspace(workspace_id, {})
    return _fragment(
        "admin/_workspace_row.html",
        status=status,
        ws=row,
        org_of=_organization_of,
        errors=errors,
        saved=False,
    )
