"""Workspaces, projects, statuses and labels of the caller's organizations."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import exists, func, select

from extensions import db
from models.auth import User
from models.tracker import WRITER_ROLES, Issue, Label, Membership, Project, Status, Workspace
from services import unique
from services.errors import ConflictError, NotFoundError
from services.tracker import accounts, attachment_files, audit, plans
from services.tracker.access import (
    MANAGE,
    READ,
    Access,
    locate_project,
    organization_access,
    project_access,
    workspace_access,
)

# What every new project starts with (docs/tracker.md): one status per category.
DEFAULT_STATUSES = (
    ("Backlog", "#94a3b8", "backlog"),
    ("Todo", "#64748b", "todo"),
    ("In Progress", "#f59e0b", "in_progress"),
    ("Done", "#22c55e", "done"),
    ("Cancelled", "#ef4444", "cancelled"),
)


def list_workspaces(user: User) -> list[Workspace]:
    return list(
        db.session.scalars(
            select(Workspace)
            .join(Membership, Membership.organization_id == Workspace.organization_id)
            .where(Membership.user_id == user.id)
            .order_by(Workspace.created_at, Workspace.slug)
        )
    )


def create_workspace(user: User, organization_id: uuid.UUID, name: str, slug: str | None) -> Workspace:
    access = organization_access(user, organization_id, MANAGE)
    workspace = accounts.create_workspace(access.organization, name, slug)
    audit.record(
        organization_id,
        user,
        "workspace.created",
        "workspace",
        workspace.id,
        workspace.name,
        {"new": {"name": workspace.name, "slug": workspace.slug}},
    )
    return workspace


def get_workspace(user: User, slug: str) -> Workspace:
    return workspace_access(user, slug, READ)[0]


def update_workspace(user: User, slug: str, changes: dict) -> Workspace:
    workspace, _ = workspace_access(user, slug, MANAGE)
    return apply_workspace_changes(workspace, changes, user)


def apply_workspace_changes(workspace: Workspace, changes: dict, actor: User | None) -> Workspace:
    if "slug" in changes and changes["slug"] != workspace.slug:
        taken = db.session.scalar(select(exists().where(Workspace.slug == changes["slug"])))
        if taken:
            raise unique.conflict("uq_workspaces_slug")
    before = {"name": workspace.name, "slug": workspace.slug}
    with unique.or_conflict():
        if "slug" in changes:
            workspace.slug = changes["slug"]
        if "name" in changes:
            workspace.name = changes["name"]
    after = {"name": workspace.name, "slug": workspace.slug}
    if after != before:
        audit.record(
            workspace.organization_id,
            actor,
            "workspace.updated",
            "workspace",
            workspace.id,
            workspace.name,
            audit.changes_of(before, after),
        )
    return workspace


def list_projects(user: User, slug: str) -> list[Project]:
    workspace, _ = workspace_access(user, slug, READ)
    return list(
        db.session.scalars(
            select(Project)
            .where(Project.workspace_id == workspace.id)
            .order_by(Project.created_at, Project.key)
        )
    )


def create_project(user: User, slug: str, data: dict) -> Project:
    workspace, access = workspace_access(user, slug, MANAGE)
    if db.session.scalar(
        select(exists().where(Project.workspace_id == workspace.id, Project.key == data["key"]))
    ):
        raise unique.conflict("uq_projects_workspace_id_key")
    plans.ensure_within_limit(access.organization, "projects")
    project = Project(
        workspace_id=workspace.id,
        organization_id=workspace.organization_id,
        name=data["name"],
        key=data["key"],
        description=data.get("description"),
        issue_counter=0,
    )
    with unique.or_conflict():
        db.session.add(project)
    for position, (name, color, category) in enumerate(DEFAULT_STATUSES):
        db.session.add(
            Status(project_id=project.id, name=name, color=color, category=category, position=position)
        )
    db.session.flush()
    audit.record(
        project.organization_id,
        user,
        "project.created",
        "project",
        project.id,
        project.name,
        {"new": {"name": project.name, "key": project.key, "workspace": workspace.slug}},
    )
    return project


def get_project(user: User, slug: str, project_id: uuid.UUID) -> Project:
    return project_access(user, slug, project_id, READ)[0]


def update_project(user: User, slug: str, project_id: uuid.UUID, changes: dict) -> Project:
    """Name and description change; the key does not, since issue keys are built from it."""
    project, _ = project_access(user, slug, project_id, MANAGE)
    before = {"name": project.name, "description": project.description}
    for field in ("name", "description"):
        if field in changes:
            setattr(project, field, changes[field])
    after = {"name": project.name, "description": project.description}
    if after != before:
        audit.record(
            project.organization_id,
            user,
            "project.updated",
            "project",
            project.id,
            project.name,
            audit.changes_of(before, after),
        )
    db.session.flush()
    return project


def delete_project(user: User, slug: str, project_id: uuid.UUID) -> None:
    project, _ = project_access(user, slug, project_id, MANAGE)
    audit.record(
        project.organization_id,
        user,
        "project.deleted",
        "project",
        project.id,
        project.name,
        {"old": {"name": project.name, "key": project.key, "issues": project.issue_count}},
    )
    # Its attached files go with it (cascade); their objects once the deletion commits.
    attachment_files.release(project_id=project.id)
    db.session.delete(project)
    db.session.flush()


def _statuses_in_order(project: Project) -> list[Status]:
    """Board order: by position, ties by name."""
    return list(
        db.session.scalars(
            select(Status).where(Status.project_id == project.id).order_by(Status.position, Status.name)
        )
    )


@dataclass(frozen=True)
class ProjectView:
    """A project with what every page of it shows: its workspace, the caller's standing, its
    statuses in board order."""

    project: Project
    workspace: Workspace
    access: Access
    statuses: list[Status]

    @property
    def writable(self) -> bool:
        """Whether the caller may change its issues (viewers only read)."""
        return self.access.role in WRITER_ROLES


def open_project(user: User, slug: str, project_id: uuid.UUID) -> ProjectView:
    project, workspace, access = locate_project(user, slug, project_id, READ)
    return ProjectView(project, workspace, access, _statuses_in_order(project))


def issue_counts(user: User, slug: str) -> dict[uuid.UUID, tuple[int, int]]:
    """``{project id: (open issues, all issues)}`` for the workspace's projects; open means
    neither done nor cancelled."""
    workspace, _ = workspace_access(user, slug, READ)
    rows = db.session.execute(
        select(Issue.project_id, Status.category, func.count())
        .join(Status, Status.id == Issue.status_id)
        .join(Project, Project.id == Issue.project_id)
        .where(Project.workspace_id == workspace.id)
        .group_by(Issue.project_id, Status.category)
    ).all()
    counts: dict[uuid.UUID, list[int]] = {}
    for project_id, category, count in rows:
        pair = counts.setdefault(project_id, [0, 0])
        pair[1] += count
        if category not in ("done", "cancelled"):
            pair[0] += count
    return {project_id: (pair[0], pair[1]) for project_id, pair in counts.items()}


def list_statuses(user: User, slug: str, project_id: uuid.UUID) -> list[Status]:
    project, _ = project_access(user, slug, project_id, READ)
    return _statuses_in_order(project)


def create_status(user: User, slug: str, project_id: uuid.UUID, data: dict) -> Status:
    """Append a status; without ``position`` it goes last."""
    project, _ = project_access(user, slug, project_id, MANAGE)
    position = data.get("position")
    if position is None:
        last = db.session.scalar(select(func.max(Status.position)).where(Status.project_id == project.id))
        position = 0 if last is None else last + 1
    status = Status(
        project_id=project.id,
        name=data["name"],
        color=data["color"],
        category=data["category"],
        position=position,
    )
    db.session.add(status)
    db.session.flush()
    audit.record(
        project.organization_id,
        user,
        "status.created",
        "status",
        status.id,
        status.name,
        {"new": _status_fields(status), "project": project.key},
    )
    return status


def _status_fields(status: Status) -> dict:
    return {
        "name": status.name,
        "color": status.color,
        "category": status.category,
        "position": status.position,
    }


def _status(project: Project, status_id: uuid.UUID) -> Status:
    status = db.session.get(Status, status_id)
    if status is None or status.project_id != project.id:
        raise NotFoundError("Status not found", reason="status_not_found")
    return status


def update_status(
    user: User, slug: str, project_id: uuid.UUID, status_id: uuid.UUID, changes: dict
) -> Status:
    project, _ = project_access(user, slug, project_id, MANAGE)
    status = _status(project, status_id)
    before = _status_fields(status)
    for field in ("name", "color", "category", "position"):
        if field in changes:
            setattr(status, field, changes[field])
    after = _status_fields(status)
    if after != before:
        audit.record(
            project.organization_id,
            user,
            "status.updated",
            "status",
            status.id,
            status.name,
            {**audit.changes_of(before, after), "project": project.key},
        )
    db.session.flush()
    return status


def move_status(
    user: User, slug: str, project_id: uuid.UUID, status_id: uuid.UUID, step: int
) -> list[Status]:
    """Move a status one place earlier (``step=-1``) or later (``+1``) on the board.

    Positions are renumbered 0..n-1 in the current order first, so statuses that
    shared a position (the API allows it) still move one place at a time.
    """
    project, _ = project_access(user, slug, project_id, MANAGE)
    ordered = _statuses_in_order(project)
    index = next((i for i, status in enumerate(ordered) if status.id == status_id), None)
    if index is None:
        raise NotFoundError("Status not found", reason="status_not_found")
    target = index + step
    if 0 <= target < len(ordered):
        ordered[index], ordered[target] = ordered[target], ordered[index]
        moved = ordered[target]
        audit.record(
            project.organization_id,
            user,
            "status.moved",
            "status",
            moved.id,
            moved.name,
            {"old": {"position": index}, "new": {"position": target}, "project": project.key},
        )
    for position, status in enumerate(ordered):
        status.position = position
    db.session.flush()
    return ordered


def delete_status(user: User, slug: str, project_id: uuid.UUID, status_id: uuid.UUID) -> None:
    """A status still used by issues cannot go (409): move those issues first."""
    project, _ = project_access(user, slug, project_id, MANAGE)
    # Locked first: an issue being created with this status finishes before the check.
    status = db.session.scalar(
        select(Status).where(Status.id == status_id, Status.project_id == project.id).with_for_update()
    )
    if status is None:
        raise NotFoundError("Status not found", reason="status_not_found")
    if db.session.scalar(select(exists().where(Issue.status_id == status.id))):
        raise ConflictError(
            "Issues still have this status; move them to another status first", reason="status_in_use"
        )
    audit.record(
        project.organization_id,
        user,
        "status.deleted",
        "status",
        status.id,
        status.name,
        {"old": _status_fields(status), "project": project.key},
    )
    db.session.delete(status)
    db.session.flush()


def list_labels(user: User, slug: str, project_id: uuid.UUID) -> list[Label]:
    project, _ = project_access(user, slug, project_id, READ)
    return list(db.session.scalars(select(Label).where(Label.project_id == project.id).order_by(Label.name)))


def create_label(user: User, slug: str, project_id: uuid.UUID, data: dict) -> Label:
    project, _ = project_access(user, slug, project_id, MANAGE)
    if db.session.scalar(select(exists().where(Label.project_id == project.id, Label.name == data["name"]))):
        raise unique.conflict("uq_labels_project_id_name")
    label = Label(project_id=project.id, name=data["name"], color=data["color"])
    with unique.or_conflict():
        db.session.add(label)
    audit.record(
        project.organization_id,
        user,
        "label.created",
        "label",
        label.id,
        label.name,
        {"new": {"name": label.name, "color": label.color}, "project": project.key},
    )
    return label


def delete_label(user: User, slug: str, project_id: uuid.UUID, label_id: uuid.UUID) -> None:
    """Removes the label from every issue that carries it."""
    project, _ = project_access(user, slug, project_id, MANAGE)
    label = db.session.get(Label, label_id)
    if label is None or label.project_id != project.id:
        raise NotFoundError("Label not found", reason="label_not_found")
    audit.record(
        project.organization_id,
        user,
        "label.deleted",
        "label",
        label.id,
        label.name,
        {"old": {"name": label.name, "color": label.color}, "project": project.key},
    )
    db.session.delete(label)
    db.session.flush()
