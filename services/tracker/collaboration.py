"""What the issue page shows beside the issue: its history, its timeline, and who watches it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.orm import joinedload

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import Issue
from models.tracker_collab import Comment, IssueActivity, IssueWatcher
from services import unique
from services.tracker.access import READ
from services.tracker.comments import WITH_MENTIONS
from services.tracker.issues import find_issue

MAX_PER_PAGE = 100
# Timeline entries shown at a time on the issue page; older ones are fetched on request.
TIMELINE_PAGE = 50
MAX_TIMELINE_PAGE = 200


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


@dataclass
class TimelineEntry:
    """One line of the issue's timeline: a comment, or a change from its history."""

    at: datetime
    comment: Comment | None = None
    change: IssueActivity | None = None

    def _order(self) -> tuple:
        # Changes written in one transaction share their time; ids keep their order.
        if self.change is not None:
            return (self.at, 0, self.change.id, "")
        return (self.at, 1, 0, str(self.comment.id))


@dataclass
class Timeline:
    """Newest entries of an issue's timeline, oldest first; ``older`` entries come before them."""

    entries: list[TimelineEntry]
    older: int
    shown: int


def timeline(
    user: User, slug: str, project_id: uuid.UUID, key: str, skip: int = 0, limit: int = TIMELINE_PAGE
) -> Timeline:
    """The issue's comments and history interleaved in the order they happened.

    ``skip`` newest entries are left out (already on the page), then ``limit`` are
    returned, oldest first. A comment's ``comment_added`` entry is the comment itself,
    so it is not repeated; edits and deletions stay in the history.
    """
    issue, _ = find_issue(user, slug, project_id, key, READ, bare=True)
    return timeline_of(issue, skip, limit)


def timeline_of(issue: Issue, skip: int = 0, limit: int = TIMELINE_PAGE) -> Timeline:
    """``timeline`` of an issue the caller already read through an access check (the issue
    page has it from ``issues.get_issue``): the same entries, without a second lookup."""
    limit = max(1, min(limit, MAX_TIMELINE_PAGE))
    skip = max(0, skip)
    wanted = skip + limit
    changes_query = IssueActivity.issue_id == issue.id, IssueActivity.kind != "comment_added"
    comments = db.session.scalars(
        select(Comment)
        .where(Comment.issue_id == issue.id)
        # Each comment with its mentions' people: the page names them as they are called now.
        .options(joinedload(Comment.author).lazyload(User.loja), WITH_MENTIONS)
        .order_by(Comment.created_at.desc(), Comment.id.desc())
        .limit(wanted)
    ).all()
    changes = db.session.scalars(
        select(IssueActivity)
        .where(*changes_query)
        .options(joinedload(IssueActivity.actor).lazyload(User.loja))
        .order_by(IssueActivity.id.desc())
        .limit(wanted)
    ).all()
    comment_count = select(func.count()).select_from(Comment).where(Comment.issue_id == issue.id)
    change_count = select(func.count()).select_from(IssueActivity).where(*changes_query)
    counts = db.session.execute(select(comment_count.scalar_subquery(), change_count.scalar_subquery())).one()
    total = (counts[0] or 0) + (counts[1] or 0)
    merged = [TimelineEntry(at=c.created_at, comment=c) for c in comments]
    merged += [TimelineEntry(at=a.created_at, change=a) for a in changes]
    merged.sort(key=TimelineEntry._order, reverse=True)
    window = merged[skip:wanted]
    window.reverse()
    return Timeline(entries=window, older=max(0, total - wanted), shown=skip + len(window))


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
