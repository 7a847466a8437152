"""comment mentions: who each @address of a comment named, by account

Revision ID: 0038
Revises: 0037
Create Date: 2026-12-02 12:00:00

A mention was looked up by address whenever it was read, so a member who changed their
address lost their old mentions (shown as the bare address) and was told again when the
comment was edited. ``comment_mentions`` keeps, per comment and address as written
(lowercased), the account it named when it was written. The comments already stored are
read once here and their mentions resolved against the organization's members of today.
"""

import re

import sqlalchemy as sa
from alembic import op
from markdown_it import MarkdownIt

# revision identifiers, used by Alembic.
revision = "0038"
down_revision = "0037"
branch_labels = None
depends_on = None

BATCH = 1_000
# Frozen copy of services.tracker.comments' mention rule as of this revision.
MAX_MENTIONS = 50
MENTION = re.compile(r"(?<![\w.+@-])@([A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)")
PARSER = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def _addresses(body):
    parts = []
    for token in PARSER.parse(body):
        if token.type == "inline":
            parts += [child.content if child.type == "text" else " " for child in token.children or []]
            parts.append("\n")
    found = []
    for match in MENTION.finditer("".join(parts)):
        address = match.group(1).rstrip(".").lower()
        if address not in found:
            found.append(address)
        if len(found) == MAX_MENTIONS:
            break
    return found


def _backfill():
    bind = op.get_bind()
    comments = sa.table("comments", sa.column("id", sa.Uuid), sa.column("issue_id", sa.Uuid), sa.column("body", sa.Text))
    issues = sa.table("issues", sa.column("id", sa.Uuid), sa.column("organization_id", sa.Uuid))
    users = sa.table(
        "users", sa.column("id", sa.Uuid), sa.column("email", sa.String),
        sa.column("email_verified_at", sa.DateTime), sa.column("created_at", sa.DateTime),
    )
    members = sa.table("memberships", sa.column("organization_id", sa.Uuid), sa.column("user_id", sa.Uuid))
    mentions = sa.table(
        "comment_mentions", sa.column("comment_id", sa.Uuid), sa.column("address", sa.String),
        sa.column("user_id", sa.Uuid),
    )
    # Only bodies that may mention someone are read.
    query = (
        sa.select(comments.c.id, comments.c.body, issues.c.organization_id)
        .join(issues, issues.c.id == comments.c.issue_id)
        .where(comments.c.body.like("%@%@%"))
        .order_by(comments.c.id)
        .limit(BATCH)
    )
    chunk = bind.execute(query).fetchall()
    while chunk:
        rows = []
        for comment_id, body, organization_id in chunk:
            written = _addresses(body)
            if not written:
                continue
            holders = bind.execute(
                sa.select(users.c.email, users.c.id)
                .join(members, members.c.user_id == users.c.id)
                .where(members.c.organization_id == organization_id, users.c.email.in_(written))
                # The account an address names: its verified owner, else the oldest claiming it.
                .order_by(users.c.email_verified_at.is_(None), users.c.created_at)
            ).all()
            named = {}
            for email, user_id in holders:
                named.setdefault(email, user_id)
            rows += [{"comment_id": comment_id, "address": a, "user_id": named[a]} for a in written if a in named]
        if rows:
            bind.execute(mentions.insert(), rows)
        chunk = bind.execute(query.where(comments.c.id > chunk[-1][0])).fetchall()


def upgrade():
    op.create_table(
        "comment_mentions",
        sa.Column("comment_id", sa.Uuid(), nullable=False),
        sa.Column("address", sa.String(length=320), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["comment_id"], ["comments.id"], name=op.f("fk_comment_mentions_comment_id_comments"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_comment_mentions_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("comment_id", "address", name=op.f("pk_comment_mentions")),
    )
    op.create_index("ix_comment_mentions_user_id", "comment_mentions", ["user_id"])
    _backfill()


def downgrade():
    op.drop_index("ix_comment_mentions_user_id", table_name="comment_mentions")
    op.drop_table("comment_mentions")
