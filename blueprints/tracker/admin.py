"""Platform administration: superadmins only (403 ``FORBIDDEN`` for anyone else)."""

from __future__ import annotations

from functools import wraps

from flask_jwt_extended import current_user

from blueprints.common import auth_required
from blueprints.parsing import Blueprint
from schemas.common import TrackerError
from schemas.tracker.admin import (
    AdminOrganization,
    AdminOrganizationPage,
    AdminOrganizationUpdate,
    AdminUser,
    AdminUserPage,
    AdminUserUpdate,
    AdminWorkspace,
    AdminWorkspacePage,
    AdminWorkspaceUpdate,
    OrganizationQuery,
    Plan,
    PlanCreate,
    PlanList,
    PlanUpdate,
    Statistics,
    UserQuery,
    WorkspaceQuery,
)
from services.tracker import admin, plans

blp = Blueprint("tracker_admin", __name__, url_prefix="/admin", description="Platform administration")


def superadmin_required(func):
    """Bearer token of a superadmin, checked before the body or query is validated."""

    @auth_required()
    @wraps(func)
    def wrapper(*args, **kwargs):
        admin.require_superadmin(current_user)
        return func(*args, **kwargs)

    return blp.alt_response(403, schema=TrackerError, description="Not a superadmin")(wrapper)


def _paged(page, key: str) -> dict:
    return {key: page.items, "total": page.total, "page": page.page, "per_page": page.per_page}


@blp.route("/stats", methods=["GET"])
@superadmin_required
@blp.response(200, Statistics)
def stats():
    """Platform figures, computed from the data.

    `users.active_last_30d`: accounts seen (sign-in, refresh or an
    authenticated request) in the last 30 days. `issues.open`: issues whose
    status is neither `done` nor `cancelled`. `storage_used_bytes`: UTF-8
    bytes of every issue title and description.
    """
    return admin.stats(current_user)


@blp.route("/users", methods=["GET"])
@superadmin_required
@blp.arguments(UserQuery, location="query", error_status_code=400)
@blp.response(200, AdminUserPage)
def list_users(query):
    """Every account, newest first; `q` searches name and e-mail. `per_page` defaults to 50,
    clamped to 100."""
    return _paged(admin.list_users(current_user, query), "users")


@blp.route("/users/<uuid:user_id>", methods=["PATCH"])
@superadmin_required
@blp.arguments(AdminUserUpdate, error_status_code=400)
@blp.response(200, AdminUser)
@blp.alt_response(404, schema=TrackerError, description="No such user")
def update_user(body, user_id):
    """Ban or unban, grant or take superadmin. Banning ends every session at once (a banned
    user can neither sign in nor use a live token). Nobody bans or demotes themselves (403).
    An account named by `SUPERADMIN_EMAIL` stays superadmin whatever this flag says."""
    return admin.update_user(current_user, user_id, body)


@blp.route("/organizations", methods=["GET"])
@superadmin_required
@blp.arguments(OrganizationQuery, location="query", error_status_code=400)
@blp.response(200, AdminOrganizationPage)
def list_organizations(query):
    """Every organization, newest first; filter by `plan`, search name or slug with `q`."""
    return _paged(admin.list_organizations(current_user, query), "organizations")


@blp.route("/organizations/<uuid:organization_id>", methods=["PATCH"])
@superadmin_required
@blp.arguments(AdminOrganizationUpdate, error_status_code=400)
@blp.response(200, AdminOrganization)
@blp.alt_response(400, schema=TrackerError, description="Unknown plan")
@blp.alt_response(404, schema=TrackerError, description="No such organization")
def update_organization(body, organization_id):
    """Change plan, suspension or name. Giving a `plan` (even the current one) copies that
    plan's limits and features as they are now; a suspended organization answers 403
    `ORGANIZATION_SUSPENDED` to its members."""
    return admin.update_organization(current_user, organization_id, body)


@blp.route("/workspaces", methods=["GET"])
@superadmin_required
@blp.arguments(WorkspaceQuery, location="query", error_status_code=400)
@blp.response(200, AdminWorkspacePage)
def list_workspaces(query):
    """Every workspace, newest first; filter by `organization_id`, search with `q`."""
    return _paged(admin.list_workspaces(current_user, query), "workspaces")


@blp.route("/workspaces/<uuid:workspace_id>", methods=["PATCH"])
@superadmin_required
@blp.arguments(AdminWorkspaceUpdate, error_status_code=400)
@blp.response(200, AdminWorkspace)
@blp.alt_response(404, schema=TrackerError, description="No such workspace")
@blp.alt_response(409, schema=TrackerError, description="Slug taken")
def update_workspace(body, workspace_id):
    """Rename a workspace or change its slug (unique platform-wide)."""
    return admin.update_workspace(current_user, workspace_id, body)


@blp.route("/plans", methods=["GET"])
@superadmin_required
@blp.response(200, PlanList)
def list_plans():
    """Every plan, cheapest first."""
    return {"plans": plans.list_plans()}


@blp.route("/plans", methods=["POST"])
@superadmin_required
@blp.arguments(PlanCreate, error_status_code=400)
@blp.response(201, Plan)
@blp.alt_response(409, schema=TrackerError, description="A plan with this id exists")
def create_plan(body):
    """Create a plan. `id` is what organizations' `plan` names; absent feature flags are false."""
    return plans.create_plan(body)


@blp.route("/plans/<plan_id>", methods=["PATCH"])
@superadmin_required
@blp.arguments(PlanUpdate, error_status_code=400)
@blp.response(200, Plan)
@blp.alt_response(404, schema=TrackerError, description="No such plan")
def update_plan(body, plan_id):
    """Change name, price, some limits or some features. Not retroactive: organizations
    already on the plan keep what they had until their plan is assigned again."""
    return plans.update_plan(plan_id, body)
