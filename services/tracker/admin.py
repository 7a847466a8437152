"""Platform administration: statistics, users, organizations, workspaces.

Every figure is computed from the data when asked. ``active_last_30d`` counts
accounts seen (sign-in, refresh or an authenticated request; recorded at most
every 15 minutes) in the last 30 days.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, func, select

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import Issue, Membership, Organization, Project, Status, Workspace
from services import auth as auth_service
from services.errors import ForbiddenError, NotFoundError
from services.text import contains_any
from services.tracker import attachment_files, audit, plans
from services.tracker.accounts import Account
from services.tracker.workspaces import apply_workspace_changes

MAX_PER_PAGE = 100
ACTIVE_WINDOW = timedelta(days=30)


@dataclass
class Page:
    items: list[Any]
    total: int
    page: int
    per_page: int

    @property
    def pages(self) -> int:
        """How many pages the matches fill (at least one, even when empty)."""
        return max(1, -(-self.total // self.per_page))


@dataclass(frozen=True)
class Total:
    total: int


@dataclass(frozen=True)
class OrganizationFigures:
    total: int
    by_plan: dict[str, int]  # plan id -> organizations on it (every plan, zero included)


@dataclass(frozen=True)
class UserFigures:
    total: int
    active_last_30d: int


@dataclass(frozen=True)
class IssueFigures:
    total: int
    open: int  # neither done nor cancelled
    done: int


@dataclass(frozen=True)
class PlatformStats:
    organizations: OrganizationFigures
    users: UserFigures
    workspaces: Total
    projects: Total
    issues: IssueFigures
    storage_used_bytes: int


@dataclass(frozen=True)
class UserRow(Account):
    """An account as the superadmin's list shows it."""

    banned: bool = False
    organization_count: int = 0


@dataclass(frozen=True)
class OrganizationRow:
    id: uuid.UUID
    name: str
    slug: str
    plan: str
    suspended: bool
    member_count: int
    issue_count: int
    limits: dict
    features: dict
    created_at: datetime


@dataclass(frozen=True)
class WorkspaceRow:
    id: uuid.UUID
    name: str
    slug: str
    organization_id: uuid.UUID
    project_count: int
    issue_count: int
    created_at: datetime


def require_superadmin(user: User) -> None:
    if not auth_service.is_superadmin(user):
        raise ForbiddenError("Only platform administrators can do this", reason="superadmins_only")


def _paginate(query: Select, args: dict) -> Page:
    page = args.get("page") or 1
    per_page = min(args.get("per_page") or 50, MAX_PER_PAGE)
    total = db.session.scalar(select(func.count()).select_from(query.order_by(None).subquery())) or 0
    items = list(db.session.execute(query.limit(per_page).offset((page - 1) * per_page)).all())
    return Page(items=items, total=total, page=page, per_page=per_page)


def stats(actor: User) -> PlatformStats:
    require_superadmin(actor)

    def count(model, *where) -> int:
        return db.session.scalar(select(func.count()).select_from(model).where(*where)) or 0

    by_plan = dict(
        db.session.execute(select(Organization.plan_id, func.count()).group_by(Organization.plan_id)).all()
    )
    for plan in plans.list_plans():
        by_plan.setdefault(plan.id, 0)
    issues_by_category = dict(
        db.session.execute(
            select(Status.category, func.count())
            .join(Issue, Issue.status_id == Status.id)
            .group_by(Status.category)
        ).all()
    )
    done = issues_by_category.get("done", 0)
    cancelled = issues_by_category.get("cancelled", 0)
    total_issues = sum(issues_by_category.values())
    return PlatformStats(
        organizations=OrganizationFigures(total=count(Organization), by_plan=by_plan),
        users=UserFigures(
            total=count(User), active_last_30d=count(User, User.last_seen_at >= utcnow() - ACTIVE_WINDOW)
        ),
        workspaces=Total(count(Workspace)),
        projects=Total(count(Project)),
        issues=IssueFigures(total=total_issues, open=total_issues - done - cancelled, done=done),
        storage_used_bytes=int(db.session.scalar(select(plans.storage_expression())) or 0)
        + int(db.session.scalar(select(plans.comment_storage_expression())) or 0)
        + int(db.session.scalar(select(attachment_files.storage_expression())) or 0),
    )


def _user_row(user: User, organization_count: int) -> UserRow:
    return UserRow(**Account.fields(user), banned=user.banned, organization_count=organization_count)


def _organization_count(user_id: uuid.UUID) -> int:
    return (
        db.session.scalar(select(func.count()).select_from(Membership).where(Membership.user_id == user_id))
        or 0
    )


def list_users(actor: User, args: dict) -> Page:
    require_superadmin(actor)
    memberships = select(func.count()).where(Membership.user_id == User.id).correlate(User).scalar_subquery()
    query = select(User, memberships).order_by(User.created_at.desc(), User.email)
    condition = contains_any(args.get("q"), User.name, User.email)
    if condition is not None:
        query = query.where(condition)
    page = _paginate(query, args)
    page.items = [_user_row(user, count) for user, count in page.items]
    return page


def _existing(model, row_id: uuid.UUID, message: str, *, not_found_reason: str):
    found = db.session.get(model, row_id)
    if found is None:
        raise NotFoundError(message, reason=not_found_reason)
    return found


def _counted_row(
    model, counts: tuple, build, row_id: uuid.UUID, message: str, *, not_found_reason: str
) -> Any:
    """One row as its list shows it, with the counts the list adds to it."""
    found = _existing(model, row_id, message, not_found_reason=not_found_reason)
    return build(*db.session.execute(select(model, *counts).where(model.id == found.id)).one())


def _user(user_id: uuid.UUID) -> User:
    return _existing(User, user_id, "User not found", not_found_reason="user_not_found")


def user_row(user_id: uuid.UUID) -> UserRow:
    """One user as the list shows it."""
    return _user_row(_user(user_id), _organization_count(user_id))


def update_user(admin: User, user_id: uuid.UUID, changes: dict) -> UserRow:
    """Ban or unban, grant or take superadmin. Nobody bans or demotes themselves."""
    require_superadmin(admin)
    user = _user(user_id)
    if user.id == admin.id and (changes.get("banned") is True or changes.get("superadmin") is False):
        raise ForbiddenError("You cannot ban or demote yourself", reason="self_ban")
    if "superadmin" in changes:
        user.superadmin = changes["superadmin"]
    if "banned" in changes and changes["banned"] != user.banned:
        user.banned = changes["banned"]
        if user.banned:
            # Live tokens stop working at once and refresh tokens die.
            auth_service.end_all_sessions(user)
    db.session.flush()
    return _user_row(user, _organization_count(user.id))


def _organization_row(organization: Organization, member_count: int, issue_count: int) -> OrganizationRow:
    return OrganizationRow(
        id=organization.id,
        name=organization.name,
        slug=organization.slug,
        plan=organization.plan_id,
        suspended=organization.suspended,
        member_count=member_count,
        issue_count=issue_count,
        limits=organization.plan_limits,
        features=organization.plan_features,
        created_at=organization.created_at,
    )


def _org_counts():
    members = (
        select(func.count())
        .where(Membership.organization_id == Organization.id)
        .correlate(Organization)
        .scalar_subquery()
    )
    issues = (
        select(func.count())
        .where(Issue.organization_id == Organization.id)
        .correlate(Organization)
        .scalar_subquery()
    )
    return members, issues


def _counted_list(model, counts, to_row, args: dict, equal_to: tuple | None) -> Page:
    """A page of ``model`` rows (organizations or workspaces) with their counts, newest first;
    ``q`` searches name and slug, ``equal_to`` is an optional (column, argument) filter."""
    query = select(model, *counts).order_by(model.created_at.desc(), model.slug)
    if equal_to is not None and args.get(equal_to[1]):
        query = query.where(equal_to[0] == args[equal_to[1]])
    condition = contains_any(args.get("q"), model.name, model.slug)
    if condition is not None:
        query = query.where(condition)
    page = _paginate(query, args)
    page.items = [to_row(*row) for row in page.items]
    return page


def list_organizations(actor: User, args: dict) -> Page:
    require_superadmin(actor)
    return _counted_list(Organization, _org_counts(), _organization_row, args, (Organization.plan_id, "plan"))


def organization_row(organization_id: uuid.UUID) -> OrganizationRow:
    """One organization as the list shows it."""
    return _counted_row(
        Organization,
        _org_counts(),
        _organization_row,
        organization_id,
        "Organization not found",
        not_found_reason="organization_not_found",
    )


def organizations_by_id(organization_ids) -> dict[uuid.UUID, Organization]:
    """The organizations of ``organization_ids`` that exist (a workspace list shows their names)."""
    ids = {organization_id for organization_id in organization_ids if organization_id is not None}
    if not ids:
        return {}
    return {org.id: org for org in db.session.scalars(select(Organization).where(Organization.id.in_(ids)))}


def update_organization(actor: User, organization_id: uuid.UUID, changes: dict) -> OrganizationRow:
    """Change plan (copying the plan's current limits) and suspension."""
    require_superadmin(actor)
    organization = _existing(
        Organization, organization_id, "Organization not found", not_found_reason="organization_not_found"
    )
    was = {"plan": organization.plan_id, "suspended": organization.suspended, "name": organization.name}
    if "plan" in changes:
        plans.assign_plan(organization, changes["plan"])
    if "suspended" in changes:
        organization.suspended = changes["suspended"]
    if "name" in changes:
        organization.name = changes["name"]
    _audit_organization_change(actor, organization, was, "plan" in changes)
    db.session.flush()
    return organization_row(organization.id)


def _audit_organization_change(
    actor: User, organization: Organization, was: dict, plan_assigned: bool
) -> None:
    """The organization's log tells its owners what the platform changed: plan, suspension, name."""
    now = {"plan": organization.plan_id, "suspended": organization.suspended, "name": organization.name}

    def log(action: str, field: str) -> None:
        audit.record(
            organization.id,
            actor,
            action,
            "organization",
            organization.id,
            organization.name,
            {"old": {field: was[field]}, "new": {field: now[field]}},
        )

    # Assigning the same plan again still copies its current limits: recorded too.
    if plan_assigned:
        log("plan.changed", "plan")
    if now["suspended"] != was["suspended"]:
        log("organization.suspended" if now["suspended"] else "organization.reactivated", "suspended")
    if now["name"] != was["name"]:
        log("organization.renamed", "name")


def _workspace_row(workspace: Workspace, project_count: int, issue_count: int) -> WorkspaceRow:
    return WorkspaceRow(
        id=workspace.id,
        name=workspace.name,
        slug=workspace.slug,
        organization_id=workspace.organization_id,
        project_count=project_count,
        issue_count=issue_count,
        created_at=workspace.created_at,
    )


def _workspace_counts():
    projects = (
        select(func.count())
        .where(Project.workspace_id == Workspace.id)
        .correlate(Workspace)
        .scalar_subquery()
    )
    issues = (
        select(func.count())
        .select_from(Issue)
        .join(Project, Project.id == Issue.project_id)
        .where(Project.workspace_id == Workspace.id)
        .correlate(Workspace)
        .scalar_subquery()
    )
    return projects, issues


def list_workspaces(actor: User, args: dict) -> Page:
    require_superadmin(actor)
    return _counted_list(
        Workspace, _workspace_counts(), _workspace_row, args, (Workspace.organization_id, "organization_id")
    )


def workspace_row(workspace_id: uuid.UUID) -> WorkspaceRow:
    """One workspace as the list shows it."""
    return _counted_row(
        Workspace,
        _workspace_counts(),
        _workspace_row,
        workspace_id,
        "Workspace not found",
        not_found_reason="workspace_not_found",
    )


def update_workspace(actor: User, workspace_id: uuid.UUID, changes: dict) -> WorkspaceRow:
    require_superadmin(actor)
    workspace = _existing(
        Workspace, workspace_id, "Workspace not found", not_found_reason="workspace_not_found"
    )
    apply_workspace_changes(workspace, changes, actor)
    return workspace_row(workspace.id)
