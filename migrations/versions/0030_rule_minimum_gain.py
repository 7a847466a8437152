"""transfer rules: the minimum gain per unit moved

Revision ID: 0030
Revises: 0029
Create Date: 2026-11-27 12:30:00

One integer column on the single rules row, in thousandths of an expected unit
sold (the engine's currency, like ``custo_envio``): what each moved unit must
add. It was the engine's fixed 0.15; the row already saved keeps it (150).
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("regras_remanejamento", schema=None) as batch_op:
        batch_op.add_column(sa.Column("ganho_minimo", sa.Integer(), server_default="150", nullable=False))


def downgrade():
    with op.batch_alter_table("regras_remanejamento", schema=None) as batch_op:
        batch_op.drop_column("ganho_minimo")
