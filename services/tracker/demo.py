"""The tracker's demo: the demo accounts' organization, with three projects of real-looking work.

``flask demo load`` calls ``load`` after the stock demo, so that the first run
shows a board, a list and issues with a history: about forty issues in
Portuguese across the retailer's online store, the salespeople's app and the
distribution centres, with statuses, priorities, labels, assignees, due dates,
sub-issues, relations, comments (some @mentioning a colleague) and the
notifications those produce.

Everything is written through the tracker's services, acting as the demo
person who would have done it, so the history, the inbox and the storage
counters are exactly what the API would have made. The steps run in rounds
(every issue is created, then each gets its first comment, then its first move
...) and their timestamps are then spread over the past three weeks, so the
timeline reads like work that happened, not like one script.

The organization is the one named ``ORGANIZATION`` that the demo owner owns: ``load``
writes nothing when it exists, so running it again changes nothing.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import delete, select

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import Issue, Membership, Organization, Project, Workspace
from models.tracker_collab import Comment, IssueActivity, Notification, NotificationEmail
from services.clock import today
from services.tracker import accounts, comments, issues, relations, workspaces
from services.tracker.demo_content import ISSUES, LABELS, PROJECTS, RELATIONS, DemoIssue

ORGANIZATION = "Lojas Giro"
PLAN = "pro"
# Demo account (local part of the address) -> role in the organization.
ROLES = {
    "admin": "owner",
    "superadmin": "admin",
    "planejador": "member",
    "gerente": "member",
    "visualizador": "viewer",
}
HISTORY_DAYS = 21
# Notifications older than this many per person are shown as read already.
UNREAD_KEPT = 4


@dataclass
class TrackerDemo:
    organization: str
    projects: list[tuple[str, str, int]]
    comments: int
    notifications: int
    roles: dict[str, str]

    workspace_slug: str = ""

    def describe(self) -> str:
        lines = [
            f"tracker demo: organization {self.organization!r} (board: /tracker/w/{self.workspace_slug})"
        ]
        lines += [f"  {key} {name}: {count} issues" for key, name, count in self.projects]
        lines.append(f"  {self.comments} comments, {self.notifications} notifications")
        return "\n".join(lines)


def exists(owner: User) -> bool:
    """Whether the demo owner already owns the demo organization."""
    found = db.session.scalar(
        select(Organization.id)
        .join(Membership, Membership.organization_id == Organization.id)
        .where(Organization.name == ORGANIZATION, Membership.user_id == owner.id, Membership.role == "owner")
        .limit(1)
    )
    return found is not None


def workspace_slug(owner: User) -> str | None:
    """The demo organization's workspace, when the demo owner has it."""
    return db.session.scalar(
        select(Workspace.slug)
        .join(Organization, Organization.id == Workspace.organization_id)
        .join(Membership, Membership.organization_id == Organization.id)
        .where(Organization.name == ORGANIZATION, Membership.user_id == owner.id, Membership.role == "owner")
        .order_by(Workspace.created_at)
        .limit(1)
    )


def _mention(text: str, domain: str) -> str:
    for local in ROLES:
        text = text.replace("{@" + local + "}", f"@{local}@{domain}")
    return text


def load(people: dict[str, User], domain: str, seed: int = 7) -> TrackerDemo | None:
    """Build the demo organization for the demo accounts (``people`` by local part); flushes.

    Nothing is written when the organization already exists, or when an account is missing.
    """
    if set(ROLES) - set(people) or exists(people["admin"]):
        return None
    started = utcnow()
    organization, slug = _organization(people)
    script = _Script(people, domain, slug)
    script.create_projects()
    # Parents before their sub-issues, then every issue's steps in rounds.
    for item in sorted(ISSUES, key=lambda i: i.parent is not None):
        script.create(item)
    for first, kind, second in RELATIONS:
        script.relate(first, kind, second)
    for round_ in range(max(len(item.steps) for item in ISSUES)):
        for item in ISSUES:
            if round_ < len(item.steps):
                script.step(item, item.steps[round_])
    db.session.flush()

    _spread_over_past_weeks(organization.id, started, random.Random(seed))
    notification_count = _settle_notifications(organization.id)
    return TrackerDemo(
        organization=ORGANIZATION,
        projects=[
            (key, script.projects[key].name, script.projects[key].issue_counter)
            for key, _name, _d in PROJECTS
        ],
        comments=sum(1 for item in ISSUES for action in item.steps if action[0] == "c"),
        notifications=notification_count,
        roles={f"{local}@{domain}": role for local, role in ROLES.items()},
        workspace_slug=slug,
    )


def _organization(people: dict[str, User]) -> tuple[Organization, str]:
    """The demo organization, owned by the demo admin, every other demo account a member in
    its role; and the slug of its workspace."""
    organization = accounts.create_organization(ORGANIZATION, people["admin"], plan_id=PLAN)
    workspace = accounts.create_workspace(organization, ORGANIZATION)
    for local, role in ROLES.items():
        if role != "owner":
            db.session.add(Membership(organization_id=organization.id, user_id=people[local].id, role=role))
    db.session.flush()
    return organization, workspace.slug


@dataclass
class _Script:
    """The demo's story told through the tracker's services, each step as the person who takes it;
    what the steps made so far (projects, statuses, labels, issue keys) serves the next ones."""

    people: dict[str, User]  # by the address's local part
    domain: str
    slug: str  # the workspace's
    projects: dict[str, Project] = field(default_factory=dict)  # by project key
    statuses: dict[str, dict[str, uuid.UUID]] = field(default_factory=dict)  # project key -> category
    labels: dict[str, dict[str, uuid.UUID]] = field(default_factory=dict)  # project key -> name
    keys: dict[str, tuple[str, str]] = field(default_factory=dict)  # issue ref -> project and issue key

    def create_projects(self) -> None:
        owner = self.people["admin"]
        for key, name, description in PROJECTS:
            project = workspaces.create_project(
                owner, self.slug, {"key": key, "name": name, "description": description}
            )
            self.projects[key] = project
            self.statuses[key] = {
                s.category: s.id for s in workspaces.list_statuses(owner, self.slug, project.id)
            }
            self.labels[key] = {
                label_name: workspaces.create_label(
                    owner, self.slug, project.id, {"name": label_name, "color": color}
                ).id
                for label_name, color in LABELS[key]
            }

    def create(self, item: DemoIssue) -> None:
        data = {
            "title": item.title,
            "type": item.type,
            "priority": item.priority,
            "status_id": self.statuses[item.project][item.status],
            "assignee_id": self.people[item.assignee].id if item.assignee else None,
            "label_ids": [self.labels[item.project][name] for name in item.labels],
            "description": item.description,
            "due_date": today() + timedelta(days=item.due_in) if item.due_in is not None else None,
            "estimate": item.estimate,
        }
        creator, project_id = self.people[item.creator], self.projects[item.project].id
        if item.parent:
            data["parent_id"] = issues.find_issue(creator, self.slug, project_id, self.keys[item.parent][1])[
                0
            ].id
        created = issues.create_issue(creator, self.slug, project_id, data)
        self.keys[item.ref] = (item.project, created.key)

    def relate(self, first: str, kind: str, second: str) -> None:
        """Relate issue ``first`` to ``second``, as the person who created ``first``."""
        project, key = self.keys[first]
        by = self.people[next(i for i in ISSUES if i.ref == first).creator]
        other_project, other_key = self.keys[second]
        other = issues.find_issue(by, self.slug, self.projects[other_project].id, other_key)[0]
        relations.create_relation(by, self.slug, self.projects[project].id, key, kind, other.id)

    def step(self, item: DemoIssue, action: tuple) -> None:
        """One step of an issue's story: a comment, or a change of status, priority, assignee
        or labels."""
        kind, who, value = action
        project_id, key, actor = self.projects[item.project].id, self.keys[item.ref][1], self.people[who]
        if kind == "c":
            comments.create_comment(actor, self.slug, project_id, key, _mention(value, self.domain))
            return
        changes = {
            "s": lambda: {"status_id": self.statuses[item.project][value]},
            "p": lambda: {"priority": value},
            "a": lambda: {"assignee_id": self.people[value].id},
            "l": lambda: {"label_ids": [self.labels[item.project][name] for name in value]},
        }[kind]()
        issues.update_issue(actor, self.slug, project_id, key, changes)


def _spread_over_past_weeks(organization_id: uuid.UUID, started: datetime, rng: random.Random) -> None:
    """Move every moment the script wrote (all after ``started``) into the past three weeks,
    keeping their order: the n-th distinct moment lands at the n-th step of that span."""
    of_org = select(Issue.id).where(Issue.organization_id == organization_id).scalar_subquery()
    rows: list[tuple[object, tuple[str, ...]]] = []
    rows += [
        (i, ("created_at", "updated_at"))
        for i in db.session.scalars(select(Issue).where(Issue.organization_id == organization_id))
    ]
    rows += [
        (c, ("created_at", "updated_at"))
        for c in db.session.scalars(select(Comment).where(Comment.issue_id.in_(of_org)))
    ]
    rows += [
        (a, ("created_at",))
        for a in db.session.scalars(select(IssueActivity).where(IssueActivity.issue_id.in_(of_org)))
    ]
    rows += [(n, ("created_at",)) for n in db.session.scalars(select(Notification).where(Notification.issue_id.in_(of_org)))]  # fmt: skip
    moments = sorted(
        {getattr(row, name) for row, names in rows for name in names if getattr(row, name) >= started}
    )
    if not moments:
        return
    end = utcnow() - timedelta(hours=2)
    span = timedelta(days=HISTORY_DAYS)
    step = span / len(moments)
    placed: dict[datetime, datetime] = {}
    for index, moment in enumerate(moments):
        placed[moment] = end - span + step * index + step * rng.uniform(0, 0.8)
    for row, names in rows:
        for name in names:
            value = getattr(row, name)
            if value in placed:
                setattr(row, name, placed[value])
    db.session.flush()


def _settle_notifications(organization_id: uuid.UUID) -> int:
    """The demo's history is not news: older notifications are read, none is e-mailed."""
    of_org = select(Issue.id).where(Issue.organization_id == organization_id).scalar_subquery()
    found = db.session.scalars(
        select(Notification)
        .where(Notification.issue_id.in_(of_org))
        .order_by(Notification.user_id, Notification.created_at.desc())
    ).all()
    db.session.execute(
        delete(NotificationEmail)
        .where(NotificationEmail.notification_id.in_([n.id for n in found]))
        .execution_options(synchronize_session=False)
    )
    kept: dict[uuid.UUID, int] = {}
    for notification in found:
        kept[notification.user_id] = kept.get(notification.user_id, 0) + 1
        if kept[notification.user_id] > UNREAD_KEPT:
            notification.read_at = notification.created_at + timedelta(hours=1)
    db.session.flush()
    return len(found)
