"""Who may see and change what in the tracker.

Every tenant resource is reached through a workspace slug (or an organization
id) that is resolved against the caller's memberships. A resource of an
organization the caller does not belong to is indistinguishable from one that
does not exist (404). Members of a suspended organization get 403
``ORGANIZATION_SUSPENDED``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import and_, bindparam, select

from extensions import db
from models.auth import User
from models.tracker import MANAGER_ROLES, WRITER_ROLES, Membership, Organization, Project, Workspace
from services.errors import ForbiddenError, NotFoundError
from services.rows import DriverRead

READ, WRITE, MANAGE = "read", "write", "manage"
_ALLOWED = {READ: None, WRITE: WRITER_ROLES, MANAGE: MANAGER_ROLES}


@dataclass(frozen=True)
class Access:
    """The caller's standing in one organization (an ``Organization``, or for the hot reads its
    ``OrganizationBrief``)."""

    user: User
    organization: Organization
    role: str


@dataclass(frozen=True, slots=True)
class OrganizationBrief:
    """What the issue reads need of an organization: its plan and whether it is suspended."""

    id: uuid.UUID
    plan_id: str
    plan_features: dict
    suspended: bool


@dataclass(frozen=True, slots=True)
class ProjectBrief:
    """What the issue reads need of a project, read as columns rather than as an ORM object."""

    id: uuid.UUID
    key: str
    issue_count: int


def _role(user: User, organization_id: uuid.UUID) -> str | None:
    return db.session.scalar(
        select(Membership.role).where(
            Membership.organization_id == organization_id, Membership.user_id == user.id
        )
    )


_UNKNOWN = object()


def _check(
    user: User,
    organization: Organization | None,
    need: str,
    what: str,
    not_found_reason: str,
    role: str | object | None = _UNKNOWN,
) -> Access:
    if organization is None:
        raise NotFoundError(f"{what} not found", reason=not_found_reason)
    if role is _UNKNOWN:
        role = _role(user, organization.id)
    if role is None:
        raise NotFoundError(f"{what} not found", reason=not_found_reason)
    if organization.suspended:
        raise ForbiddenError(
            "This organization is suspended", code="ORGANIZATION_SUSPENDED", reason="organization_suspended"
        )
    allowed = _ALLOWED[need]
    if allowed is not None and role not in allowed:
        if need == WRITE:
            raise ForbiddenError("Viewers can only read", reason="viewer_read_only")
        raise ForbiddenError("Only owners and admins can do this", reason="managers_only")
    return Access(user=user, organization=organization, role=role)


def organization_access(user: User, organization_id: uuid.UUID, need: str = READ) -> Access:
    return _check(
        user,
        db.session.get(Organization, organization_id),
        need,
        "Organization",
        not_found_reason="organization_not_found",
    )


def workspace_access(user: User, slug: str, need: str = READ) -> tuple[Workspace, Access]:
    # A slug with a NUL character cannot exist (and PostgreSQL refuses to compare one).
    workspace = None if "\x00" in slug else db.session.scalar(select(Workspace).where(Workspace.slug == slug))
    organization = workspace.organization if workspace else None
    access = _check(user, organization, need, "Workspace", not_found_reason="workspace_not_found")
    return workspace, access


def project_access(user: User, slug: str, project_id: uuid.UUID, need: str = READ) -> tuple[Project, Access]:
    """The project, checked through its workspace; a project of another workspace is 404."""
    project, _workspace, access = locate_project(user, slug, project_id, need)
    return project, access


# Built once, at import: every tracker request runs it, and building the statement (and its
# cache key) each time cost about as much as running it.
_PROJECT_IN_WORKSPACE = (
    select(Workspace, Membership.role, Project)
    .outerjoin(
        Membership,
        and_(
            Membership.organization_id == Workspace.organization_id,
            Membership.user_id == bindparam("user_id"),
        ),
    )
    .outerjoin(Project, and_(Project.id == bindparam("project_id"), Project.workspace_id == Workspace.id))
    .where(Workspace.slug == bindparam("slug"))
    # The row as stored now: the unfiltered list's total is its ``issue_count``.
    .execution_options(populate_existing=True)
)


def _located(statement, user: User, slug: str, project_id: uuid.UUID):
    """The row of ``statement`` (workspace by slug, the caller's role, the project) or 404."""
    found = None
    if "\x00" not in slug:
        params = {"user_id": user.id, "project_id": project_id, "slug": slug}
        found = (
            statement.first(params)
            if isinstance(statement, DriverRead)
            else db.session.execute(statement, params).first()
        )
    if found is None:
        raise NotFoundError("Workspace not found", reason="workspace_not_found")
    return found


def locate_project(
    user: User, slug: str, project_id: uuid.UUID, need: str = READ
) -> tuple[Project, Workspace, Access]:
    """``project_access``, with the workspace it was checked through.

    One round trip: the workspace (with its organization), the caller's role and
    the project come from one statement; the checks are those of ``workspace_access``.
    """
    workspace, role, project = _located(_PROJECT_IN_WORKSPACE, user, slug, project_id)
    access = _check(
        user, workspace.organization, need, "Workspace", not_found_reason="workspace_not_found", role=role
    )
    if project is None:
        raise NotFoundError("Project not found", reason="project_not_found")
    return project, workspace, access


# ``locate_project``'s statement with only the columns the issue reads use, as plain columns:
# loading three ORM objects (every column of each) cost the hot reads more than their rows.
_PROJECT_BRIEF = DriverRead(
    select(
        Project.__table__.c.id,
        Project.__table__.c.key,
        Project.__table__.c.issue_count,
        Membership.__table__.c.role,
        Organization.__table__.c.id,
        Organization.__table__.c.plan_id,
        Organization.__table__.c.plan_features,
        Organization.__table__.c.suspended,
    )
    .select_from(Workspace.__table__)
    .join(Organization.__table__, Organization.__table__.c.id == Workspace.__table__.c.organization_id)
    .outerjoin(
        Membership.__table__,
        and_(
            Membership.__table__.c.organization_id == Workspace.__table__.c.organization_id,
            Membership.__table__.c.user_id == bindparam("user_id"),
        ),
    )
    .outerjoin(
        Project.__table__,
        and_(
            Project.__table__.c.id == bindparam("project_id"),
            Project.__table__.c.workspace_id == Workspace.__table__.c.id,
        ),
    )
    .where(Workspace.__table__.c.slug == bindparam("slug"))
)


def project_brief_access(
    user: User, slug: str, project_id: uuid.UUID, need: str = READ
) -> tuple[ProjectBrief, Access]:
    """``project_access`` for the issue reads: the same checks and errors, the project and its
    organization as ``ProjectBrief`` and ``OrganizationBrief`` (the row as stored now)."""
    found_id, key, issue_count, role, *organization = _located(_PROJECT_BRIEF, user, slug, project_id)
    access = _check(
        user,
        OrganizationBrief(*organization),  # type: ignore[arg-type]
        need,
        "Workspace",
        not_found_reason="workspace_not_found",
        role=role,
    )
    if found_id is None:
        raise NotFoundError("Project not found", reason="project_not_found")
    return ProjectBrief(found_id, key, issue_count), access


def is_member(organization_id: uuid.UUID, user_id: uuid.UUID) -> bool:
    return (
        db.session.scalar(
            select(Membership.role).where(
                Membership.organization_id == organization_id, Membership.user_id == user_id
            )
        )
        is not None
    )
