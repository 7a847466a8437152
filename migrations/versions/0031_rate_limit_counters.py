"""rate-limit counters in the database when no Redis is configured

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-02 01:00:00

Without Redis each worker process counted sign-in failures and account e-mails on
its own, so three workers allowed three budgets. One row per budget key and window.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "rate_limit_counters",
        sa.Column("key", sa.String(length=700), nullable=False),
        sa.Column("hits", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_rate_limit_counters")),
    )
    op.create_index(op.f("ix_rate_limit_counters_expires_at"), "rate_limit_counters", ["expires_at"])


def downgrade():
    op.drop_index(op.f("ix_rate_limit_counters_expires_at"), table_name="rate_limit_counters")
    op.drop_table("rate_limit_counters")
