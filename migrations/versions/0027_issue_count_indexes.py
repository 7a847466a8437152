"""issue list counts: short searches counted on write, covering and board-order indexes, closer autovacuum

Revision ID: 0027
Revises: 0025
Create Date: 2026-11-26 15:30:00

The list's exact total is counted from indexes alone (index-only scans) for the
common filters. An assignee combined with statuses (the "my open issues" list)
had no index holding both, so its count read every matching row; the new index
holds the assignee with the status, priority and type. An index-only scan stays
index-only only while the table's visibility map is current: on PostgreSQL the
issue tables are vacuumed after 1 % of their rows changed instead of 20 %.

A search for one or two characters is inside most titles: ``title_gram_counts``
keeps, per project, how many issues hold each such piece of a title word, filled
here from the titles already stored. The board's order breaks rank ties by
number, which its index now holds too.
"""

from collections import Counter

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None

# Tables whose counts are index-only: the issues and the two link tables counted by label and word.
VACUUMED = ("issues", "issue_labels", "issue_title_terms")
SETTINGS = (
    "autovacuum_vacuum_scale_factor = 0.01, "
    "autovacuum_vacuum_insert_scale_factor = 0.01, "
    "autovacuum_analyze_scale_factor = 0.02"
)


BATCH = 5_000


def _grams(search_text):
    # Frozen copy of services.tracker.search.grams_of as of this revision.
    found = set()
    for word in (search_text or "").split():
        found.update(word)
        found.update(word[i : i + 2] for i in range(len(word) - 1))
    return found


def _backfill():
    bind = op.get_bind()
    issues = sa.table(
        "issues",
        sa.column("id", sa.Uuid),
        sa.column("project_id", sa.Uuid),
        sa.column("search_text", sa.Text),
    )
    counts = sa.table(
        "title_gram_counts",
        sa.column("project_id", sa.Uuid),
        sa.column("gram", sa.String),
        sa.column("issue_count", sa.Integer),
    )
    totals = {}
    query = (
        sa.select(issues.c.id, issues.c.project_id, issues.c.search_text).order_by(issues.c.id).limit(BATCH)
    )
    chunk = bind.execute(query).fetchall()
    while chunk:
        for _, project_id, search_text in chunk:
            totals.setdefault(project_id, Counter()).update(_grams(search_text))
        chunk = bind.execute(query.where(issues.c.id > chunk[-1][0])).fetchall()
    for project_id, grams in totals.items():
        if not grams:  # a project whose titles hold no searchable text yet
            continue
        bind.execute(
            counts.insert(),
            [{"project_id": project_id, "gram": g, "issue_count": n} for g, n in sorted(grams.items())],
        )


def upgrade():
    op.create_table(
        "title_gram_counts",
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("gram", sa.String(length=2), nullable=False),
        sa.Column("issue_count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_title_gram_counts_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", "gram", name=op.f("pk_title_gram_counts")),
    )
    _backfill()
    # The board's order breaks rank ties by number: with it in the index, the first page is
    # read in order instead of sorting every issue of equal rank.
    op.drop_index("ix_issues_project_rank", table_name="issues")
    op.create_index("ix_issues_project_rank", "issues", ["project_id", "rank", "number"], unique=False)
    op.create_index(
        "ix_issues_project_assignee_status",
        "issues",
        ["project_id", "assignee_id", "status_id", "priority", "type"],
        unique=False,
    )
    if op.get_bind().dialect.name == "postgresql":
        for table in VACUUMED:
            op.execute(f"ALTER TABLE {table} SET ({SETTINGS})")


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        for table in VACUUMED:
            op.execute(
                f"ALTER TABLE {table} RESET (autovacuum_vacuum_scale_factor, "
                "autovacuum_vacuum_insert_scale_factor, autovacuum_analyze_scale_factor)"
            )
    op.drop_index("ix_issues_project_assignee_status", table_name="issues")
    op.drop_index("ix_issues_project_rank", table_name="issues")
    op.create_index("ix_issues_project_rank", "issues", ["project_id", "rank"], unique=False)
    op.drop_table("title_gram_counts")
