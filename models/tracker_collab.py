"""Working together on issues: comments, the activity history, watchers, notifications and
the e-mail outbox.

Every row hangs off an issue (``ON DELETE CASCADE``), so deleting an issue, a
project or an organization takes its conversation and history with it. Indexes
follow the reads: an issue's comments and timeline in order, a person's inbox
newest first (and its unread part), and the outbox's pending rows.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    Uuid,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from extensions import db
from models.base import CreatedAt, UTCDateTime, UUIDPrimaryKey, utcnow

if TYPE_CHECKING:
    from models.auth import User

ACTIVITY_KINDS = (
    "created",
    "updated",
    "status_changed",
    "relation_added",
    "relation_removed",
    "sub_issue_added",
    "sub_issue_removed",
    "comment_added",
    "comment_edited",
    "comment_deleted",
    "attachment_added",
    "attachment_deleted",
)
NOTIFICATION_KINDS = ("assigned", "mentioned", "commented", "status_changed")
# Rows the sender still has to look at; the partial index below holds only these.
EMAIL_UNSENT = text("state IN ('pending', 'sending')")
UNREAD = text("read_at IS NULL")

# A 64-bit sequence on PostgreSQL; SQLite only auto-increments an INTEGER primary key.
SequenceId = BigInteger().with_variant(Integer(), "sqlite")


class Comment(UUIDPrimaryKey, CreatedAt, db.Model):
    """A member's comment on an issue: Markdown as written, counted in the project's storage."""

    __tablename__ = "comments"
    __table_args__ = (
        # The issue page reads its comments oldest first, a page at a time.
        Index("ix_comments_issue_id_created_at", "issue_id", "created_at", "id"),
        Index("ix_comments_author_id", "author_id"),
    )

    issue_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("issues.id", ondelete="CASCADE"))
    author_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    body: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    edited: Mapped[bool] = mapped_column(Boolean, default=False)

    author = relationship("User", lazy="joined")
    # Loaded when read (the pages and the API eager-load them with the person).
    mentions: Mapped[list[CommentMention]] = relationship(
        back_populates="comment",
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="CommentMention.address",
    )

    @property
    def mention_names(self) -> dict[str, str]:
        """Each mentioned address as written (lowercased) -> the person's current name."""
        return {m.address: m.user.name for m in self.mentions}

    @property
    def mentioned(self) -> list[User]:
        """The people the comment mentions, each once, by name."""
        people = {m.user_id: m.user for m in self.mentions}
        return sorted(people.values(), key=lambda person: (person.name.casefold(), str(person.id)))


class CommentMention(db.Model):
    """An ``@address`` of a comment, resolved once to the member it named when it was written.

    Keyed by the address as written (lowercased): the text is what a reader sees, and each
    written address names one person even after that person moves to another address (or
    another account takes the old one). One person may stand behind two addresses of the same
    comment (the old one kept, the new one added); notifications count people, not rows.
    """

    __tablename__ = "comment_mentions"
    # Deleting an account removes its mentions (the cascade reads this index).
    __table_args__ = (Index("ix_comment_mentions_user_id", "user_id"),)

    comment_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("comments.id", ondelete="CASCADE"), primary_key=True
    )
    address: Mapped[str] = mapped_column(String(320), primary_key=True)
    user_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("users.id", ondelete="CASCADE"))

    comment: Mapped[Comment] = relationship(back_populates="mentions")
    user: Mapped[User] = relationship(lazy="joined", innerjoin=True)


class IssueActivity(db.Model):
    """One change to an issue, written in the transaction that made it.

    ``old_value`` and ``new_value`` hold JSON snapshots (a status's name, an
    assignee's name, a related issue's key) so the history still reads right
    after the thing it names is renamed or deleted.
    """

    __tablename__ = "issue_activity"
    __table_args__ = (
        # The timeline: an issue's entries in the order they were written.
        Index("ix_issue_activity_issue_id_id", "issue_id", "id"),
        Index("ix_issue_activity_actor_id", "actor_id"),
        CheckConstraint(
            "kind IN ('created', 'updated', 'status_changed', 'relation_added', 'relation_removed', "
            "'sub_issue_added', 'sub_issue_removed', 'comment_added', 'comment_edited', 'comment_deleted', "
            "'attachment_added', 'attachment_deleted')",
            name="kind_valid",
        ),
    )

    id: Mapped[int] = mapped_column(SequenceId, primary_key=True, autoincrement=True)
    issue_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("issues.id", ondelete="CASCADE"))
    actor_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    kind: Mapped[str] = mapped_column(String(30))
    field: Mapped[str | None] = mapped_column(String(40), nullable=True)
    old_value: Mapped[Any] = mapped_column(JSON, nullable=True)
    new_value: Mapped[Any] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    actor = relationship("User", lazy="joined")


class IssueWatcher(CreatedAt, db.Model):
    """Someone who asked to hear about an issue's comments and status changes."""

    __tablename__ = "issue_watchers"
    __table_args__ = (Index("ix_issue_watchers_user_id", "user_id"),)

    issue_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("issues.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )


class Notification(UUIDPrimaryKey, CreatedAt, db.Model):
    """Something that happened to an issue, told to one person (never the one who did it)."""

    __tablename__ = "notifications"
    __table_args__ = (
        # The inbox, newest first; its unread part from a partial index of its own.
        Index("ix_notifications_user_id_created_at", "user_id", "created_at", "id"),
        Index(
            "ix_notifications_unread",
            "user_id",
            "created_at",
            "id",
            postgresql_where=UNREAD,
            sqlite_where=UNREAD,
        ),
        Index("ix_notifications_issue_id", "issue_id"),
        Index("ix_notifications_actor_id", "actor_id"),
        CheckConstraint(
            "kind IN ('assigned', 'mentioned', 'commented', 'status_changed')", name="kind_valid"
        ),
    )

    user_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("users.id", ondelete="CASCADE"))
    issue_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("issues.id", ondelete="CASCADE"))
    actor_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    kind: Mapped[str] = mapped_column(String(20))
    read_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class NotificationEmail(CreatedAt, db.Model):
    """The outbox: a notification still to be e-mailed, written with it, sent later in batches.

    ``flask tracker send-notifications`` claims the due rows (``sending``), sends
    each person's as one message and marks them ``sent``; a failure puts them
    back to ``pending`` with ``next_attempt_at`` further away, and ``failed``
    after the last attempt. Rows whose person turned e-mail off, or read the
    notification first, end ``skipped`` (``services.tracker.notification_mail``).
    """

    __tablename__ = "notification_emails"
    __table_args__ = (
        Index(
            "ix_notification_emails_due",
            "next_attempt_at",
            postgresql_where=EMAIL_UNSENT,
            sqlite_where=EMAIL_UNSENT,
        ),
        CheckConstraint("state IN ('pending', 'sending', 'sent', 'skipped', 'failed')", name="state_valid"),
    )

    notification_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("notifications.id", ondelete="CASCADE"), primary_key=True
    )
    state: Mapped[str] = mapped_column(String(10), default="pending")
    attempts: Mapped[int] = mapped_column(SmallInteger, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # When a sender claimed the row: a claim older than the lease is taken over.
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    last_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
