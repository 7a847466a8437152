"""Platform administration pages (superadmins): statistics, users, organizations, plans, workspaces.

The same ``services.tracker.admin`` and ``plans`` functions as ``/tracker/api/v1/admin``;
anyone else signed in gets 403.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from functools import wraps

from flask import Blueprint, Response, abort, redirect, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_jwt_extended import current_user
from marshmallow import ValidationError

from blueprints.pages.common import (
    Refusal,
    after_change,
    page_login_required,
    refused,
    render_fragment,
    render_page,
    wants_fragment,
)
from blueprints.pages.messages import plan_name, schema_errors
from blueprints.pages.tracker_common import tenant_error
from models.tracker import FEATURE_NAMES, LIMIT_NAMES
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
from services.tracker.admin import Page

blp = Blueprint("admin_pages", __name__, url_prefix="/admin")
# Unknown ids and other service errors get the same pt-BR error page as the tracker pages.
blp.register_error_handler(DomainError, tenant_error)

PER_PAGE = 25
LIMIT_TEXT = {
    "members": _l("Membros"),
    "projects": _l("Projetos"),
    "issues": _l("Tarefas"),
    "storage_bytes": _l("Armazenamento"),
}
# Storage limits are entered in MB or GB (binary multiples) and stored in bytes.
STORAGE_UNITS = {"MB": 1024**2, "GB": 1024**3}
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
        "STORAGE_UNITS": STORAGE_UNITS,
        "storage_parts": storage_parts,
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


def _refused(exc: ValidationError | DomainError) -> Refusal:
    """The refusal to show in the row; an unknown row is the 404 page, as any unknown URL."""
    try:
        return refused(exc)
    except DomainError:
        abort(404)


def _edited(
    template: str, list_endpoint: str, context: Callable[[], dict], refusal: Refusal | None = None
) -> Response:
    """After a row's edit: htmx gets the row again (the refusal in place); a plain form goes
    back to the list, or to the error page when refused."""
    if not wants_fragment():
        if refusal is not None:
            abort(refusal.status, description=refusal.message)
        return redirect(url_for(list_endpoint), code=303)
    return render_fragment(template, status=refusal.status if refusal else 200, **context())


def _list_page(
    template: str,
    block: str,
    schema,
    names: tuple[str, ...],
    lister: Callable[[object, dict], Page],
    extra: Callable[[Page, dict], dict] | None = None,
) -> Response:
    """One of the superadmin lists: its query through the API's schema, one page of rows, and
    the query's own values back in the filters."""
    query, errors = _query(schema, names)
    page = lister(current_user, query)
    filters = {name: request.args.get(name, "") for name in names if name not in ("page", "organization_id")}
    return render_page(
        template,
        block,
        status=400 if errors else 200,
        page=page,
        pages=page.pages,
        errors=errors,
        **filters,
        **(extra(page, query) if extra else {}),
    )


def _edit_row(
    template: str,
    list_endpoint: str,
    save: Callable[[], object],
    context: Callable[[object, Refusal | None], dict],
) -> Response:
    """A row's edit through its service; ``context(row, refusal)`` is what the row shows
    (``row`` is None after a refusal: the row is read again)."""
    try:
        row = save()
    except (ValidationError, DomainError) as exc:
        refusal = _refused(exc)
        return _edited(template, list_endpoint, lambda: context(None, refusal), refusal)
    return _edited(template, list_endpoint, lambda: context(row, None))


# --- statistics ----------------------------------------------------------------------------


@blp.route("/")
@superadmin_page
def stats():
    figures = admin.stats(current_user)
    plan_names = {plan.id: plan_name(plan.id, plan.name) for plan in plans.list_plans()}
    issues = figures.issues
    charts = {
        "plans": {
            "labels": [plan_names.get(pid, pid) for pid in figures.organizations.by_plan],
            "values": list(figures.organizations.by_plan.values()),
        },
        "issues": {
            "labels": [_("Abertas"), _("Concluídas"), _("Canceladas")],
            "values": [issues.open, issues.done, issues.total - issues.open - issues.done],
        },
        "users": {
            "labels": [_("Ativas em 30 dias"), _("Sem atividade recente")],
            "values": [
                figures.users.active_last_30d,
                figures.users.total - figures.users.active_last_30d,
            ],
        },
    }
    return render_page("admin/stats.html", figures=figures, charts=charts, plan_names=plan_names)


# --- users -----------------------------------------------------------------------------------


@blp.route("/users")
@superadmin_page
def users():
    return _list_page("admin/users.html", "user_rows", UserQuery, ("q", "page"), admin.list_users)


@blp.route("/users/<uuid:user_id>", methods=["POST"])
@superadmin_page
def update_user(user_id: uuid.UUID):
    form = {k: request.form[k] for k in ("banned", "superadmin") if k in request.form}
    return _edit_row(
        "admin/_user_row.html",
        "admin_pages.users",
        lambda: admin.update_user(current_user, user_id, AdminUserUpdate().load(form)),
        lambda row, refusal: {
            "user": row or admin.user_row(user_id),
            "message": refusal.message if refusal else None,
        },
    )


# --- organizations -----------------------------------------------------------------------------


@blp.route("/organizations")
@superadmin_page
def organizations():
    return _list_page(
        "admin/organizations.html",
        "org_rows",
        OrganizationQuery,
        ("q", "plan", "page"),
        admin.list_organizations,
        lambda _page, _query: {"plans": plans.list_plans()},
    )


@blp.route("/organizations/<uuid:organization_id>", methods=["POST"])
@superadmin_page
def update_organization(organization_id: uuid.UUID):
    form = {k: request.form[k] for k in ("plan", "suspended") if k in request.form}
    return _edit_row(
        "admin/_org_row.html",
        "admin_pages.organizations",
        lambda: admin.update_organization(
            current_user, organization_id, AdminOrganizationUpdate().load(form)
        ),
        lambda row, refusal: {
            "org": row or admin.organization_row(organization_id),
            "plans": plans.list_plans(),
            "message": refusal.message if refusal else None,
        },
    )


# --- plans -------------------------------------------------------------------------------------


def _plan_form_data(form, creating: bool) -> dict:
    """Nested ``limits`` and ``features`` from flat form fields (checkboxes: absent is false)."""
    data: dict = {}
    for name in ("id", "name", "price_brl") if creating else ("name", "price_brl"):
        value = form.get(name, "").strip()
        if value or creating:
            data[name] = value
    limits = {name: form.get(f"limits.{name}", "").strip() for name in LIMIT_NAMES}
    limits["storage_bytes"] = _storage_bytes(form)
    data["limits"] = {k: v for k, v in limits.items() if v or creating}
    data["features"] = {name: f"features.{name}" in form for name in FEATURE_NAMES}
    return data


def _storage_bytes(form) -> str:
    """The storage limit typed as a number of MB or GB, in bytes; text that is not a number
    is passed on as typed, for the schema to refuse next to the field."""
    typed = form.get("limits.storage_bytes.valor", "").strip()
    unit = STORAGE_UNITS.get(form.get("limits.storage_bytes.unidade", ""), STORAGE_UNITS["MB"])
    try:
        amount = Decimal(typed.replace(",", "."))
    except InvalidOperation:
        return typed
    if not amount.is_finite() or amount < 0 or amount > 10**9:
        return typed
    return str(int(amount * unit))


def storage_parts(value) -> tuple[str, str]:
    """A stored limit in bytes as the form shows it: the largest unit it is a round tenth of."""
    try:
        size = int(value)
    except (TypeError, ValueError):
        return "", "MB"
    unit = "GB" if size >= STORAGE_UNITS["GB"] and (size * 10) % STORAGE_UNITS["GB"] == 0 else "MB"
    amount = Decimal(size) / STORAGE_UNITS[unit]
    text = f"{amount.quantize(Decimal('0.01')).normalize():f}".replace(".", ",")
    return text, unit


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
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc, inline_not_found=True)
        return _plans_page(refusal.status, block="plan_create", form=form, errors=refusal.errors)
    return after_change("admin_pages.plans_page", created=plan.id)


@blp.route("/plans/<plan_id>", methods=["POST"])
@superadmin_page
def update_plan(plan_id: str):
    return _edit_row(
        "admin/_plan_form.html",
        "admin_pages.plans_page",
        lambda: plans.update_plan(plan_id, PlanUpdate().load(_plan_form_data(request.form, creating=False))),
        lambda plan, refusal: {
            "plan": plan or plans.get_plan(plan_id),
            "errors": refusal.errors if refusal else {},
            "saved": refusal is None,
        },
    )


# --- workspaces --------------------------------------------------------------------------------


@blp.route("/workspaces")
@superadmin_page
def workspaces():
    def organization_names(page: Page, query: dict) -> dict:
        organizations = admin.organizations_by_id(
            [row.organization_id for row in page.items] + [query.get("organization_id")]
        )
        return {"organization": organizations.get(query.get("organization_id")), "org_of": organizations.get}

    return _list_page(
        "admin/workspaces.html",
        "workspace_rows",
        WorkspaceQuery,
        ("q", "organization_id", "page"),
        admin.list_workspaces,
        organization_names,
    )


@blp.route("/workspaces/<uuid:workspace_id>", methods=["POST"])
@superadmin_page
def update_workspace(workspace_id: uuid.UUID):
    form = {k: request.form.get(k, "").strip() for k in ("name", "slug")}
    return _edit_row(
        "admin/_workspace_row.html",
        "admin_pages.workspaces",
        lambda: admin.update_workspace(
            current_user, workspace_id, AdminWorkspaceUpdate().load({k: v for k, v in form.items() if v})
        ),
        lambda row, refusal: _workspace_row(
            row or admin.workspace_row(workspace_id),
            errors=refusal.errors if refusal else {},
            saved=refusal is None,
        ),
    )


def _workspace_row(row: dict, **context) -> dict:
    """What a workspace's row shows: the row and its organization's name."""
    return {"ws": row, "org_of": admin.organizations_by_id([row.organization_id]).get, **context}
