"""What the issue page shows beside the issue: its history, and who watches it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import delete, func, select
from sqlalchemy.orm import joinedload

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker_collab import IssueActivity, IssueWatcher
from services import unique
from services.tracker.access import READ
from services.tracker.issues import find_issue

MAX_PER_PAGE = 100


@dataclass
class ActivityPage:
    activity: list[IssueActivity]
    total: int
    page: int
    per_page: int


def list_activity(
    user: User, slug: str, project_id: uuid.UUID, key: str, page: int, per_page: int
) -> ActivityPage:
    """An issue's history, oldest first (the order it happened), one page at a time."""
    issue, _ = find_issue(user, slug, project_id, key, READ, bare=True)
    per_page = min(per_page, MAX_PER_PAGE)
    total = db.session.scalar(
        select(func.count()).select_from(IssueActivity).where(IssueActivity.issue_id == issue.id)
    )
    entries = db.session.scalars(
        select(IssueActivity)
        .where(IssueActivity.issue_id == issue.id)
        # Actors are shown by name only: skip the user's store join.
        .options(joinedload(IssueActivity.actor).lazyload(User.loja))
        .order_by(IssueActivity.id)
        .limit(per_page)
        .offset((page - 1) * per_page)
    ).all()
    return ActivityPage(activity=list(entries), total=total or 0, page=page, per_page=per_page)


def watch(user: User, slug: str, project_id: uuid.UUID, key: str) -> None:
    """Hear about the issue's comments and status changes; watching twice changes nothing.

    Any member may watch, viewers included: watching changes nothing but one's own inbox.
    """
    # Share-locked: the watch cannot land on an issue being deleted.
    issue, _ = find_issue(user, slug, project_id, key, READ, lock="share", bare=True)
    db.session.execute(
        unique.insert(IssueWatcher)
        .values(issue_id=issue.id, user_id=user.id, created_at=utcnow())
        .on_conflict_do_nothing(index_elements=["issue_id", "user_id"])
    )


def unwatch(user: User, slug: str, project_id: uuid.UUID, key: str) -> None:
    """Stop watching; not watching already is fine. The creator and the assignee still hear
    about the issue: that follows from their role in it, not from watching."""
    issue, _ = find_issue(user, slug, project_id, key, READ, bare=True)
    db.session.execute(
        delete(IssueWatcher)
        .where(IssueWatcher.issue_id == issue.id, IssueWatcher.user_id == user.id)
        .execution_options(synchronize_session=False)
    )


def is_watching(user: User, issue_id: uuid.UUID) -> bool:
    """Whether ``user`` watches the issue (the issue page's toggle)."""
    return db.session.get(IssueWatcher, (issue_id, user.id)) is not None
