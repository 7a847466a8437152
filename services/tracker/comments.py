"""Comments on issues: listed oldest first, written by members, edited only by their author.

A comment is Markdown kept as written, like an issue description (the pages
render both through the same sanitiser). Its UTF-8 bytes count toward the
organization's storage, in the issue's project counter like the issue's own
text: creating or growing one past the plan answers 402. ``@address`` mentions
an organization member by e-mail address (``@ana@loja.com.br``); mentions
inside code are text, not mentions.

A mention is resolved once, when the text that carries it is written, and kept
by account (``comment_mentions``): the comment keeps naming that person, by their
current name, after they change address, and an edit that keeps the address
tells nobody again.

Creating, editing and deleting share-lock the issue (``FOR KEY SHARE``): a
comment never lands on an issue being deleted (the delete waits, or the
comment answers 404), and the delete frees exactly the bytes that are there.
Edits of the issue itself do not wait for comments, nor comments for them.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from sqlalchemy import func, select
from sqlalchemy.orm import joinedload, lazyload, selectinload

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import MANAGER_ROLES, Issue, Membership
from models.tracker_collab import Comment, CommentMention
from services.errors import ForbiddenError, NotFoundError
from services.tracker import activity, notifications, plans, webhooks
from services.tracker.access import READ, WRITE, Access
from services.tracker.issues import find_issue

MAX_PER_PAGE = 100
# Distinct addresses looked up per comment; a longer list of mentions is cut there.
MAX_MENTIONS = 50
MENTION = re.compile(r"(?<![\w.+@-])@([A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)")


@dataclass
class CommentPage:
    comments: list[Comment]
    total: int
    page: int
    per_page: int


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def _prose(body: str) -> str:
    """The comment's text outside code spans and code blocks, as Markdown reads it."""
    parts: list[str] = []
    for token in _parser().parse(body):
        if token.type != "inline":
            continue
        for child in token.children or []:
            parts.append(child.content if child.type == "text" else " ")
        parts.append("\n")
    return "".join(parts)


def mentioned_addresses(body: str) -> set[str]:
    """The e-mail addresses @mentioned in a Markdown text, lowercased (at most MAX_MENTIONS)."""
    found: list[str] = []
    for match in MENTION.finditer(_prose(body)):
        address = match.group(1).rstrip(".").lower()
        if address not in found:
            found.append(address)
        if len(found) == MAX_MENTIONS:
            break
    return set(found)


# What a comment is shown with: its mentions and each mentioned person's current name.
WITH_MENTIONS = selectinload(Comment.mentions).joinedload(CommentMention.user).lazyload(User.loja)


def _members_with(organization_id: uuid.UUID, addresses: set[str]) -> dict[str, User]:
    """The member each address names (its verified owner, else the oldest account claiming it)."""
    if not addresses:
        return {}
    holders = db.session.scalars(
        select(User)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.organization_id == organization_id, User.email.in_(addresses))
        .order_by(User.email_verified_at.is_(None), User.created_at)
        .options(lazyload(User.loja))
    )
    named: dict[str, User] = {}
    for holder in holders:
        named.setdefault(holder.email, holder)
    return named


def _store_mentions(comment: Comment, organization_id: uuid.UUID) -> set[uuid.UUID]:
    """Bring the comment's mentions in line with its body; the ids of the people it mentions.

    An address still in the text keeps the person it was resolved to; an address new to the
    text is resolved against the organization's members now; one gone from it is dropped.
    """
    written = mentioned_addresses(comment.body)
    kept = [m for m in comment.mentions if m.address in written]
    known = {m.address for m in kept}
    added = [
        CommentMention(address=address, user_id=person.id, user=person)
        for address, person in _members_with(organization_id, written - known).items()
    ]
    comment.mentions = kept + added
    return {m.user_id for m in comment.mentions}


def _find_comment(issue: Issue, comment_id: uuid.UUID) -> Comment:
    """The comment, locked until commit (its bytes are about to be recounted)."""
    comment = db.session.scalar(
        select(Comment)
        .where(Comment.id == comment_id, Comment.issue_id == issue.id)
        .with_for_update(of=Comment)
        .execution_options(populate_existing=True)
    )
    if comment is None:
        raise NotFoundError("Comment not found", reason="comment_not_found")
    return comment


def _issue(user: User, slug: str, project_id: uuid.UUID, key: str) -> tuple[Issue, Access]:
    return find_issue(user, slug, project_id, key, WRITE, lock="share", bare=True)


def list_comments(
    user: User, slug: str, project_id: uuid.UUID, key: str, page: int, per_page: int
) -> CommentPage:
    issue, _ = find_issue(user, slug, project_id, key, READ, bare=True)
    per_page = min(per_page, MAX_PER_PAGE)
    total = db.session.scalar(select(func.count()).select_from(Comment).where(Comment.issue_id == issue.id))
    comments = db.session.scalars(
        select(Comment)
        .where(Comment.issue_id == issue.id)
        # Authors are shown by name only: skip the user's store join.
        .options(joinedload(Comment.author).lazyload(User.loja), WITH_MENTIONS)
        .order_by(Comment.created_at, Comment.id)
        .limit(per_page)
        .offset((page - 1) * per_page)
    ).all()
    return CommentPage(comments=list(comments), total=total or 0, page=page, per_page=per_page)


def get_comment(user: User, slug: str, project_id: uuid.UUID, key: str, comment_id: uuid.UUID) -> Comment:
    """One comment of an issue the person may read (the page shows it again after a refused edit)."""
    issue, _ = find_issue(user, slug, project_id, key, READ, bare=True)
    comment = db.session.scalar(
        select(Comment).where(Comment.id == comment_id, Comment.issue_id == issue.id).options(WITH_MENTIONS)
    )
    if comment is None:
        raise NotFoundError("Comment not found", reason="comment_not_found")
    return comment


def create_comment(user: User, slug: str, project_id: uuid.UUID, key: str, body: str) -> Comment:
    issue, access = _issue(user, slug, project_id, key)
    size = plans.text_bytes(body)
    plans.ensure_within_limit(access.organization, "storage_bytes", size)
    plans.add_storage(issue.project_id, size)
    now = utcnow()
    comment = Comment(
        issue_id=issue.id, author_id=user.id, body=body, created_at=now, updated_at=now, mentions=[]
    )
    mentioned = _store_mentions(comment, issue.organization_id)
    db.session.add(comment)
    db.session.flush()
    activity.record(issue.id, user.id, "comment_added", new={"id": str(comment.id)}, at=now)
    audience = notifications.Audience().add(notifications.followers(issue), "commented")
    audience.add(mentioned, "mentioned")
    notifications.deliver(issue, user.id, audience, now)
    webhooks.emit(issue.organization_id, "comment.created", webhooks.comment_data(comment, issue), user, now)
    return comment


def update_comment(
    user: User, slug: str, project_id: uuid.UUID, key: str, comment_id: uuid.UUID, body: str
) -> Comment:
    """The author edits their comment; people it newly mentions are told."""
    issue, access = _issue(user, slug, project_id, key)
    comment = _find_comment(issue, comment_id)
    if comment.author_id != user.id:
        raise ForbiddenError("Only its author can edit a comment", reason="comment_edit_author_only")
    if body == comment.body:
        return comment
    growth = plans.text_bytes(body) - plans.text_bytes(comment.body)
    plans.ensure_within_limit(access.organization, "storage_bytes", growth)
    if growth:
        plans.add_storage(issue.project_id, growth)
    # People, not addresses: one who changed address since is not mentioned anew.
    before = {m.user_id for m in comment.mentions}
    now = utcnow()
    comment.body = body
    comment.edited = True
    comment.updated_at = now
    newly_mentioned = _store_mentions(comment, issue.organization_id) - before
    activity.record(issue.id, user.id, "comment_edited", new={"id": str(comment.id)}, at=now)
    audience = notifications.Audience().add(newly_mentioned, "mentioned")
    notifications.deliver(issue, user.id, audience, now)
    db.session.flush()
    return comment


def delete_comment(user: User, slug: str, project_id: uuid.UUID, key: str, comment_id: uuid.UUID) -> None:
    """The author deletes their comment, or an owner or admin deletes anyone's."""
    issue, access = _issue(user, slug, project_id, key)
    comment = _find_comment(issue, comment_id)
    if comment.author_id != user.id and access.role not in MANAGER_ROLES:
        raise ForbiddenError(
            "Only its author, an owner or an admin can delete a comment", reason="comment_delete_forbidden"
        )
    plans.add_storage(issue.project_id, -plans.text_bytes(comment.body))
    activity.record(issue.id, user.id, "comment_deleted", old={"id": str(comment.id)})
    db.session.delete(comment)
    db.session.flush()
