"""Notifications: who hears about a change, the inbox, and the e-mail outbox they feed.

Who is told what (never the person who acted, and only current members of the
issue's organization; one notification per person per change, ``assigned``
and ``mentioned`` winning over the others):

- ``assigned``: the assignee of a new issue, or the new assignee of an issue;
- ``mentioned``: a member whose address is @mentioned in a new comment, or
  newly mentioned in an edited one;
- ``commented`` and ``status_changed``: the issue's creator, its assignee and
  its watchers.

Each notification of a person with e-mail on (``users.notif_email``) also gets
an outbox row in the same transaction; ``services.tracker.notification_mail``
sends them later, batched per person. Nothing here sends anything.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, exists, func, insert, select, update
from sqlalchemy.orm import aliased

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import Issue, Membership, Project, Workspace
from models.tracker_collab import IssueWatcher, Notification, NotificationEmail

MAX_PER_PAGE = 100
# A direct address (assignment, mention) says more than "something happened".
_WEIGHT = {"assigned": 2, "mentioned": 2, "commented": 1, "status_changed": 1}
Actor = aliased(User)


@dataclass
class NotificationPage:
    notifications: list[dict]
    unread: int
    total: int
    page: int
    per_page: int


class Audience:
    """Who is to be told about one change, and as what."""

    def __init__(self) -> None:
        self.kinds: dict[uuid.UUID, str] = {}

    def add(self, user_ids: Iterable[uuid.UUID | None], kind: str) -> Audience:
        for user_id in user_ids:
            if user_id is not None and _WEIGHT[kind] > _WEIGHT.get(self.kinds.get(user_id, ""), 0):
                self.kinds[user_id] = kind
        return self


def followers(issue: Issue) -> set[uuid.UUID]:
    """Everyone told about an issue's comments and status changes: creator, assignee, watchers."""
    watchers = set(db.session.scalars(select(IssueWatcher.user_id).where(IssueWatcher.issue_id == issue.id)))
    return watchers | ({issue.created_by_id, issue.assignee_id} - {None})


def deliver(issue: Issue, actor_id: uuid.UUID, audience: Audience, at: datetime | None = None) -> int:
    """Write the audience's notifications (and outbox rows) in the current transaction; how many."""
    wanted = {user_id: kind for user_id, kind in audience.kinds.items() if user_id != actor_id}
    if not wanted:
        return 0
    recipients = db.session.execute(
        select(User.id, User.notif_email, User.banned)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.organization_id == issue.organization_id, User.id.in_(list(wanted)))
        .order_by(User.id)
    ).all()
    if not recipients:
        return 0
    at = at or utcnow()
    rows = [
        {
            "id": uuid.uuid4(),
            "user_id": user_id,
            "issue_id": issue.id,
            "actor_id": actor_id,
            "kind": wanted[user_id],
            "created_at": at,
        }
        for user_id, _, _ in recipients
    ]
    db.session.execute(insert(Notification), rows)
    by_email = {user_id for user_id, notif_email, banned in recipients if notif_email and not banned}
    emails = [
        {
            "notification_id": row["id"],
            "state": "pending",
            "attempts": 0,
            "next_attempt_at": at,
            "created_at": at,
        }
        for row in rows
        if row["user_id"] in by_email
    ]
    if emails:
        db.session.execute(insert(NotificationEmail), emails)
    return len(rows)


def unread_count(user: User) -> int:
    """How many of my notifications are unread (the navigation's badge): the partial index alone."""
    return (
        db.session.scalar(
            select(func.count())
            .select_from(Notification)
            .where(Notification.user_id == user.id, Notification.read_at.is_(None))
        )
        or 0
    )


def list_notifications(user: User, unread_only: bool, page: int, per_page: int) -> NotificationPage:
    """The inbox, newest first; ``unread`` counts the unread ones whatever the filter."""
    per_page = min(per_page, MAX_PER_PAGE)
    mine = Notification.user_id == user.id
    unread_condition = Notification.read_at.is_(None)
    unread = unread_count(user)
    conditions = [mine, unread_condition] if unread_only else [mine]
    total = (
        unread
        if unread_only
        else db.session.scalar(select(func.count()).select_from(Notification).where(mine))
    )
    newest_first = (Notification.created_at.desc(), Notification.id.desc())
    # The page's ids first, from the inbox index alone (however deep the page), then
    # their rows; columns, not entities: an issue entity would join its status and people.
    page_ids = (
        select(Notification.id)
        .where(*conditions)
        .order_by(*newest_first)
        .limit(per_page)
        .offset((page - 1) * per_page)
        .subquery()
    )
    rows = db.session.execute(
        select(
            Notification,
            Issue.number,
            Issue.title,
            Issue.project_id,
            Project.key,
            Workspace.slug,
            Actor.name,
        )
        .join(page_ids, page_ids.c.id == Notification.id)
        .join(Issue, Issue.id == Notification.issue_id)
        .join(Project, Project.id == Issue.project_id)
        .join(Workspace, Workspace.id == Project.workspace_id)
        .outerjoin(Actor, Actor.id == Notification.actor_id)
        .order_by(*newest_first)
    ).all()
    items = [
        {
            "id": notification.id,
            "kind": notification.kind,
            "issue": {
                "id": notification.issue_id,
                "key": f"{project_key}-{number}",
                "title": title,
                "project_id": project_id,
                "workspace_slug": workspace_slug,
            },
            "actor": None
            if notification.actor_id is None
            else {"id": notification.actor_id, "name": actor_name},
            "read": notification.read_at is not None,
            "created_at": notification.created_at,
        }
        for notification, number, title, project_id, project_key, workspace_slug, actor_name in rows
    ]
    return NotificationPage(
        notifications=items, unread=unread or 0, total=total or 0, page=page, per_page=per_page
    )


def mark_read(user: User, ids: list[uuid.UUID] | None = None, everything: bool = False) -> None:
    """Mark some (``ids``) or all of my notifications read; ids of no notification of mine are ignored."""
    query = update(Notification).where(Notification.user_id == user.id, Notification.read_at.is_(None))
    if not everything:
        if not ids:
            return
        query = query.where(Notification.id.in_(set(ids)))
    db.session.execute(query.values(read_at=utcnow()).execution_options(synchronize_session=False))


def forget_member(organization_id: uuid.UUID, user_id: uuid.UUID) -> None:
    """Someone left an organization: their notifications and watches of its issues go too."""
    for model in (Notification, IssueWatcher):
        of_organization = exists().where(Issue.id == model.issue_id, Issue.organization_id == organization_id)
        db.session.execute(
            delete(model)
            .where(model.user_id == user_id, of_organization)
            .execution_options(synchronize_session=False)
        )


def set_email(user: User, enabled: bool) -> User:
    """Turn the e-mailing of my notifications on or off (``users.notif_email``, shared with the
    remanejamento preferences). Off: new notifications write no outbox row, and pending ones are
    skipped when the sender gets to them."""
    user.notif_email = enabled
    db.session.flush()
    return user
