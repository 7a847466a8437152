"""live updates: the decided recommendations of a batch by when they were decided

Revision ID: 0037
Revises: 0036
Create Date: 2026-12-02 10:00:00

An open batch page asks every few seconds whether one of its batch's recommendations was
decided since it last looked. ``ix_recomendacoes_decididas`` holds the moments without the
batch: SQLite read the whole batch through ``ix_recomendacoes_lote_ordem`` instead, and
PostgreSQL walked every batch's rows after a bulk decision on another one. Only decided
rows are indexed, as there: a new batch adds none.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0037"
down_revision = "0036"
branch_labels = None
depends_on = None

DECIDED = sa.text("ultima_acao_em IS NOT NULL")


def upgrade():
    op.create_index(
        "ix_recomendacoes_lote_decididas",
        "recomendacoes",
        ["lote_id", "ultima_acao_em"],
        unique=False,
        postgresql_where=DECIDED,
        sqlite_where=DECIDED,
    )


def downgrade():
    op.drop_index("ix_recomendacoes_lote_decididas", table_name="recomendacoes")
