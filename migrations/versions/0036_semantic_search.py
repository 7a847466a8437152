"""semantic search: issue vectors, each organization's encoder state, and the issues to re-embed

Revision ID: 0036
Revises: 0035
Create Date: 2026-12-02 09:00:00

The tables start empty: ``flask tracker reindex-search`` fills them for the
issues already stored (until then keyword and semantic search find nothing
older than the first write after the upgrade).
"""

import sqlalchemy as sa
from alembic import op

revision = "0036"
down_revision = "0035"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "issue_vectors",
        sa.Column("issue_id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("model_version", sa.Integer(), nullable=False),
        sa.Column("revision", sa.BigInteger(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("words", sa.Text(), nullable=False),
        sa.Column("embedded_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["issue_id"], ["issues.id"], name=op.f("fk_issue_vectors_issue_id_issues"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["organization_id"], ["organizations.id"], name=op.f("fk_issue_vectors_organization_id_organizations"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], name=op.f("fk_issue_vectors_project_id_projects"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("issue_id", name=op.f("pk_issue_vectors")),
    )
    op.create_index("ix_issue_vectors_organization_revision", "issue_vectors", ["organization_id", "revision"])
    op.create_index(
        "ix_issue_vectors_words_trgm", "issue_vectors", ["words"],
        postgresql_using="gin", postgresql_ops={"words": "gin_trgm_ops"},
    )
    op.create_table(
        "search_models",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("encoder", sa.String(length=200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("dims", sa.Integer(), nullable=False),
        sa.Column("state", sa.LargeBinary(), nullable=False),
        sa.Column("documents", sa.Integer(), nullable=False),
        sa.Column("revision", sa.BigInteger(), nullable=False),
        sa.Column("fitted_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["organization_id"], ["organizations.id"], name=op.f("fk_search_models_organization_id_organizations"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("organization_id", name=op.f("pk_search_models")),
    )
    op.create_table(
        "search_pending",
        sa.Column("issue_id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("queued_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["issue_id"], ["issues.id"], name=op.f("fk_search_pending_issue_id_issues"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["organization_id"], ["organizations.id"], name=op.f("fk_search_pending_organization_id_organizations"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("issue_id", name=op.f("pk_search_pending")),
    )
    op.create_index("ix_search_pending_organization_id", "search_pending", ["organization_id"])


def downgrade():
    op.drop_index("ix_search_pending_organization_id", table_name="search_pending")
    op.drop_table("search_pending")
    op.drop_table("search_models")
    op.drop_index("ix_issue_vectors_words_trgm", table_name="issue_vectors", postgresql_using="gin", postgresql_ops={"words": "gin_trgm_ops"})
    op.drop_index("ix_issue_vectors_organization_revision", table_name="issue_vectors")
    op.drop_table("issue_vectors")
