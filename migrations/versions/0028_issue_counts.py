"""issue list counts kept on write: per status, type, priority and assignee, and per label and label pair

Revision ID: 0028
Revises: 0027
Create Date: 2026-11-26 19:00:00

A list filtered on status, type, priority or assignee counted every matching
issue (from an index, but tens of thousands of entries at a million issues).
``issue_counts`` holds, per project, how many issues each combination of those
four fields has; ``issue_label_counts`` the same for the issues carrying each
label (``label_id = other_label_id``) and each pair of labels. The list sums a
few of these rows instead (services.tracker.issue_counts). Both are filled here
from the issues already stored. Unassigned issues are keyed by the nil UUID.
"""

import uuid

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None

NO_ASSIGNEE = uuid.UUID(int=0)
KEY = ("status_id", "type", "priority", "assignee_id")


def _key_columns():
    return [
        sa.Column("status_id", sa.Uuid(), nullable=False),
        sa.Column("type", sa.String(length=20), nullable=False),
        sa.Column("priority", sa.SmallInteger(), nullable=False),
        sa.Column("assignee_id", sa.Uuid(), nullable=False),
        sa.Column("issue_count", sa.Integer(), nullable=False),
    ]


def _backfill():
    issues = sa.table(
        "issues",
        sa.column("id", sa.Uuid),
        sa.column("project_id", sa.Uuid),
        sa.column("status_id", sa.Uuid),
        sa.column("type", sa.String),
        sa.column("priority", sa.SmallInteger),
        sa.column("assignee_id", sa.Uuid),
    )
    links = sa.table("issue_labels", sa.column("issue_id", sa.Uuid), sa.column("label_id", sa.Uuid))
    counts = sa.table("issue_counts", *(sa.column(name) for name in ("project_id", *KEY, "issue_count")))
    label_counts = sa.table(
        "issue_label_counts",
        *(sa.column(name) for name in ("project_id", "label_id", "other_label_id", *KEY, "issue_count")),
    )
    grouped = (
        issues.c.project_id,
        issues.c.status_id,
        issues.c.type,
        issues.c.priority,
        issues.c.assignee_id,
    )
    # Grouped by the column itself: the nil id stands for the unassigned only in the output.
    assignee = sa.func.coalesce(issues.c.assignee_id, sa.literal(NO_ASSIGNEE, sa.Uuid()))
    key = (*grouped[:-1], assignee)
    op.execute(
        counts.insert().from_select(
            ["project_id", *KEY, "issue_count"],
            sa.select(*key, sa.func.count()).group_by(*grouped).order_by(*key),
        )
    )
    first, second = links.alias("first"), links.alias("second")
    op.execute(
        label_counts.insert().from_select(
            ["project_id", "label_id", "other_label_id", *KEY, "issue_count"],
            sa.select(key[0], first.c.label_id, second.c.label_id, *key[1:], sa.func.count())
            .select_from(issues)
            .join(first, first.c.issue_id == issues.c.id)
            .join(second, sa.and_(second.c.issue_id == issues.c.id, second.c.label_id >= first.c.label_id))
            .group_by(*grouped, first.c.label_id, second.c.label_id)
            .order_by(key[0], first.c.label_id, second.c.label_id, *key[1:]),
        )
    )


def upgrade():
    op.create_table(
        "issue_counts",
        sa.Column("project_id", sa.Uuid(), nullable=False),
        *_key_columns(),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_issue_counts_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["status_id"],
            ["statuses.id"],
            name=op.f("fk_issue_counts_status_id_statuses"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", *KEY, name=op.f("pk_issue_counts")),
    )
    op.create_table(
        "issue_label_counts",
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("label_id", sa.Uuid(), nullable=False),
        sa.Column("other_label_id", sa.Uuid(), nullable=False),
        *_key_columns(),
        sa.CheckConstraint("label_id <= other_label_id", name=op.f("ck_issue_label_counts_labels_ordered")),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_issue_label_counts_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["label_id"],
            ["labels.id"],
            name=op.f("fk_issue_label_counts_label_id_labels"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["other_label_id"],
            ["labels.id"],
            name=op.f("fk_issue_label_counts_other_label_id_labels"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["status_id"],
            ["statuses.id"],
            name=op.f("fk_issue_label_counts_status_id_statuses"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "project_id", "label_id", "other_label_id", *KEY, name=op.f("pk_issue_label_counts")
        ),
    )
    if op.get_bind().dialect.name == "postgresql":
        # Every issue write updates a row in place: free room in each page keeps those
        # updates on the page (HOT) instead of spreading dead rows through the table.
        for table in ("issue_counts", "issue_label_counts"):
            op.execute(f"ALTER TABLE {table} SET (fillfactor = 50)")
    # Written in key order, a label's rows share a few pages: its total reads those alone.
    _backfill()


def downgrade():
    op.drop_table("issue_label_counts")
    op.drop_table("issue_counts")
