"""Tracker tenancy and work items: plans, organizations, workspaces, projects, issues.

Tenancy is organization -> workspace -> project -> issue. Issues carry their
organization id as well, so plan limits and the admin figures count them
without walking the whole hierarchy.
"""

from __future__ import annotations

import uuid
from datetime import date, datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from extensions import db
from models.base import CreatedAt, UTCDateTime, UUIDPrimaryKey, utcnow

ROLES = ("owner", "admin", "member", "viewer")
# Roles allowed to manage projects, statuses, labels, members and invitations.
MANAGER_ROLES = ("owner", "admin")
# Roles allowed to create and change issues and relations.
WRITER_ROLES = ("owner", "admin", "member")

STATUS_CATEGORIES = ("backlog", "todo", "in_progress", "done", "cancelled")
ISSUE_TYPES = ("task", "bug", "story", "epic", "subtask")
# Stored as a rank so that ordering by priority follows urgency, not the alphabet.
PRIORITIES = ("none", "low", "medium", "high", "urgent")
PRIORITY_RANK = {name: rank for rank, name in enumerate(PRIORITIES)}
RELATION_TYPES = ("blocks", "is_blocked_by", "relates_to", "duplicates")
INVERSE_RELATION = {
    "blocks": "is_blocked_by",
    "is_blocked_by": "blocks",
    "relates_to": "relates_to",
    "duplicates": "duplicates",
}
LIMIT_NAMES = ("members", "projects", "issues", "storage_bytes")
FEATURE_NAMES = ("semantic_search", "custom_fields", "sso", "audit_log")


class Plan(CreatedAt, db.Model):
    """A commercial plan. Organizations copy its limits and features when it is assigned."""

    __tablename__ = "plans"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    price_brl: Mapped[int] = mapped_column(Integer, default=0)
    limits: Mapped[dict] = mapped_column(JSON)
    features: Mapped[dict] = mapped_column(JSON)


class Organization(UUIDPrimaryKey, CreatedAt, db.Model):
    __tablename__ = "organizations"

    name: Mapped[str] = mapped_column(String(200))
    slug: Mapped[str] = mapped_column(String(80), unique=True)
    plan_id: Mapped[str] = mapped_column(String(40), ForeignKey("plans.id"), index=True)
    # Snapshot of the plan at assignment: later plan edits are not retroactive.
    plan_limits: Mapped[dict] = mapped_column(JSON)
    plan_features: Mapped[dict] = mapped_column(JSON)
    suspended: Mapped[bool] = mapped_column(Boolean, default=False)


class Membership(CreatedAt, db.Model):
    __tablename__ = "memberships"
    __table_args__ = (CheckConstraint("role IN ('owner', 'admin', 'member', 'viewer')", name="role_valid"),)

    organization_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    role: Mapped[str] = mapped_column(String(20))

    user = relationship("User")


class Invitation(UUIDPrimaryKey, CreatedAt, db.Model):
    """An invitation of an e-mail address to an organization, accepted by that account."""

    __tablename__ = "invitations"
    __table_args__ = (
        Index("ix_invitations_email", "email"),
        # One pending invitation per organization and address, even when two are sent at once.
        Index(
            "uq_invitations_pending_organization_id_email",
            "organization_id",
            "email",
            unique=True,
            postgresql_where=text("accepted_at IS NULL"),
            sqlite_where=text("accepted_at IS NULL"),
        ),
    )

    organization_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    email: Mapped[str] = mapped_column(String(320))
    role: Mapped[str] = mapped_column(String(20))
    invited_by_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    accepted_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    organization = relationship("Organization", lazy="joined")


class Workspace(UUIDPrimaryKey, CreatedAt, db.Model):
    __tablename__ = "workspaces"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    # Workspaces are addressed by slug alone, so it is unique platform-wide.
    slug: Mapped[str] = mapped_column(String(80), unique=True)

    organization = relationship("Organization", lazy="joined")


class Project(UUIDPrimaryKey, CreatedAt, db.Model):
    __tablename__ = "projects"
    __table_args__ = (UniqueConstraint("workspace_id", "key", name="uq_projects_workspace_id_key"),)

    workspace_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("workspaces.id", ondelete="CASCADE"), index=True
    )
    organization_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    key: Mapped[str] = mapped_column(String(10))
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Last issue number handed out; incremented under a row lock, never decremented.
    issue_counter: Mapped[int] = mapped_column(Integer, default=0)
    # Issues the project holds now: the unfiltered list's total without counting a
    # million rows. Kept in the same statements that create and delete issues.
    issue_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # UTF-8 bytes of its issues' titles and descriptions, kept the same way: the
    # plan's storage check reads it instead of summing every issue on each write.
    storage_bytes: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")


class Status(UUIDPrimaryKey, db.Model):
    __tablename__ = "statuses"
    __table_args__ = (
        CheckConstraint(
            "category IN ('backlog', 'todo', 'in_progress', 'done', 'cancelled')", name="category_valid"
        ),
    )

    project_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(100))
    color: Mapped[str] = mapped_column(String(7))
    category: Mapped[str] = mapped_column(String(20))
    position: Mapped[int] = mapped_column(Integer, default=0)


class Label(UUIDPrimaryKey, db.Model):
    __tablename__ = "labels"
    __table_args__ = (UniqueConstraint("project_id", "name", name="uq_labels_project_id_name"),)

    project_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(100))
    color: Mapped[str] = mapped_column(String(7))


class IssueLabel(db.Model):
    __tablename__ = "issue_labels"
    # (label_id, issue_id): the label filter's total is counted from this index alone.
    __table_args__ = (Index("ix_issue_labels_label_id", "label_id", "issue_id"),)

    issue_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("issues.id", ondelete="CASCADE"), primary_key=True
    )
    label_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("labels.id", ondelete="CASCADE"), primary_key=True
    )


class TitleTerm(db.Model):
    """A project's title vocabulary: each distinct normalised word of its issue titles.

    A search's total is counted from here: the vocabulary words containing each
    word of ``q`` (a trigram index on PostgreSQL answers ``LIKE '%word%'``), then
    their issues from ``issue_title_terms`` by index-only scans, so a word found
    in tens of thousands of titles is counted without reading the issues. Words
    stay after their last issue goes: they then match nothing.
    """

    __tablename__ = "title_terms"
    __table_args__ = (
        UniqueConstraint("project_id", "term", name="uq_title_terms_project_id_term"),
        Index(
            "ix_title_terms_term_trgm",
            "term",
            postgresql_using="gin",
            postgresql_ops={"term": "gin_trgm_ops"},
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("projects.id", ondelete="CASCADE"))
    term: Mapped[str] = mapped_column(String(300))


class TitleGramCount(db.Model):
    """How many of a project's issues hold each one- or two-character piece of a title word.

    A search for a letter or two matches most titles and no index narrows it; its
    exact total is read here instead (kept with the title words: create, retitle,
    delete). Counts may fall to zero; rows stay.
    """

    __tablename__ = "title_gram_counts"

    project_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    gram: Mapped[str] = mapped_column(String(2), primary_key=True)
    issue_count: Mapped[int] = mapped_column(Integer, default=0)


class IssueCount(db.Model):
    """How many of a project's issues have each combination of status, type, priority and assignee.

    A list filtered on those fields only sums a few of these rows for its exact
    total, however many issues match. Kept in the transaction of every change of
    those fields (services.tracker.issue_counts); counts may fall to zero, rows stay.
    ``assignee_id`` is ``NO_ASSIGNEE`` (the nil UUID) for unassigned issues: a key
    column cannot be null.
    """

    __tablename__ = "issue_counts"

    project_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    status_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("statuses.id", ondelete="CASCADE"), primary_key=True
    )
    type: Mapped[str] = mapped_column(String(20), primary_key=True)
    priority: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    assignee_id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    issue_count: Mapped[int] = mapped_column(Integer, default=0)


class IssueLabelCount(db.Model):
    """The same counts for the issues carrying a label (``label_id = other_label_id``) and
    carrying both of two labels (``label_id < other_label_id``).

    One label's total is its own rows; two labels' ("any of") is both labels' rows
    less the pair's. A label's rows go with it (cascade), as its links do.
    """

    __tablename__ = "issue_label_counts"
    __table_args__ = (CheckConstraint("label_id <= other_label_id", name="labels_ordered"),)

    project_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    label_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("labels.id", ondelete="CASCADE"), primary_key=True
    )
    other_label_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("labels.id", ondelete="CASCADE"), primary_key=True
    )
    status_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("statuses.id", ondelete="CASCADE"), primary_key=True
    )
    type: Mapped[str] = mapped_column(String(20), primary_key=True)
    priority: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    assignee_id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    issue_count: Mapped[int] = mapped_column(Integer, default=0)


class IssueTitleTerm(db.Model):
    """Which words each issue's title holds (the inverted index of title search)."""

    __tablename__ = "issue_title_terms"
    # (term_id, issue_id) is the primary key: a word's issues are read from it alone.
    # (issue_id, term_id) serves re-indexing a title and probing one issue.
    __table_args__ = (Index("ix_issue_title_terms_issue_id", "issue_id", "term_id"),)

    term_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("title_terms.id", ondelete="CASCADE"), primary_key=True
    )
    issue_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("issues.id", ondelete="CASCADE"), primary_key=True
    )


class Issue(UUIDPrimaryKey, CreatedAt, db.Model):
    __tablename__ = "issues"
    __table_args__ = (
        UniqueConstraint("project_id", "number", name="uq_issues_project_id_number"),
        # One index per list sort, led by the project every list is scoped to.
        Index("ix_issues_project_created", "project_id", "created_at"),
        Index("ix_issues_project_updated", "project_id", "updated_at"),
        Index("ix_issues_project_priority", "project_id", "priority", "created_at"),
        Index("ix_issues_project_due", "project_id", "due_date"),
        # The board's order (``order_by=rank``, ties by number): read in index order, never sorted.
        Index("ix_issues_project_rank", "project_id", "rank", "number"),
        # Filter indexes; their trailing columns let the list's total be counted
        # from the index alone (index-only scans) for the common combinations.
        Index("ix_issues_project_status", "project_id", "status_id", "priority", "created_at"),
        Index("ix_issues_project_type", "project_id", "type", "status_id", "priority"),
        Index("ix_issues_assignee_id", "assignee_id", "project_id", "priority", "created_at"),
        # An assignee with statuses ("my open issues"), priorities or types: counted index-only.
        # On PostgreSQL the table is also autovacuumed after 1 % of changes (migration 0027),
        # which keeps the visibility map current and those scans off the heap.
        Index(
            "ix_issues_project_assignee_status", "project_id", "assignee_id", "status_id", "priority", "type"
        ),
        Index("ix_issues_parent_id", "parent_id"),
        Index("ix_issues_organization_id", "organization_id"),
        Index("ix_issues_status_id", "status_id"),
        # Title search checks rows against ``search_text`` (trigram index on PostgreSQL).
        Index(
            "ix_issues_search_text_trgm",
            "search_text",
            postgresql_using="gin",
            postgresql_ops={"search_text": "gin_trgm_ops"},
        ),
        CheckConstraint("priority BETWEEN 0 AND 4", name="priority_valid"),
    )

    project_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("projects.id", ondelete="CASCADE"))
    organization_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.id", ondelete="CASCADE")
    )
    number: Mapped[int] = mapped_column(Integer)
    title: Mapped[str] = mapped_column(String(500))
    # The title as search sees it (services.tracker.search.searchable): never shown.
    search_text: Mapped[str] = mapped_column(Text, default="", server_default="")
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    type: Mapped[str] = mapped_column(String(20), default="task")
    priority: Mapped[int] = mapped_column(SmallInteger, default=0)
    status_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("statuses.id"))
    assignee_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    parent_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("issues.id", ondelete="CASCADE"), nullable=True
    )
    start_date: Mapped[date | None] = mapped_column(Date, nullable=True)
    due_date: Mapped[date | None] = mapped_column(Date, nullable=True)
    estimate: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Position on the board, smaller first: spaced integers, a move takes the midpoint of its
    # neighbours and the project is renumbered when a gap runs out (services.tracker.ranking).
    rank: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    created_by_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)

    project = relationship("Project", lazy="joined")
    status = relationship("Status", lazy="joined")
    assignee = relationship("User", foreign_keys=[assignee_id], lazy="joined")
    created_by = relationship("User", foreign_keys=[created_by_id], lazy="joined")
    labels = relationship("Label", secondary="issue_labels", lazy="selectin", order_by="Label.name")

    @property
    def key(self) -> str:
        return f"{self.project.key}-{self.number}"

    @property
    def priority_name(self) -> str:
        return PRIORITIES[self.priority]


class IssueRelation(UUIDPrimaryKey, CreatedAt, db.Model):
    """One direction of a relation; its inverse shares ``pair_id`` and is deleted with it."""

    __tablename__ = "issue_relations"
    __table_args__ = (
        UniqueConstraint("issue_id", "related_issue_id", name="uq_issue_relations_issue_id_related"),
        CheckConstraint("issue_id <> related_issue_id", name="not_self"),
    )

    issue_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("issues.id", ondelete="CASCADE"))
    related_issue_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("issues.id", ondelete="CASCADE"), index=True
    )
    type: Mapped[str] = mapped_column(String(20))
    pair_id: Mapped[uuid.UUID] = mapped_column(Uuid, index=True)

    related_issue = relationship("Issue", foreign_keys=[related_issue_id], lazy="joined")
