"""transfer rules: shipping costs per shipment and per km

Revision ID: 0016
Revises: 0018
Create Date: 2026-11-24 18:00:00

Two integer columns on the single rules row, in thousandths of an expected
unit sold (the engine's currency): ``custo_envio`` per shipment (one origin ->
destination route in a batch, shared by its items) and ``custo_km`` per km of
it. The row already saved gets the documented defaults (300 and 1).
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0016'
down_revision = '0018'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('regras_remanejamento', schema=None) as batch_op:
        batch_op.add_column(sa.Column('custo_envio', sa.Integer(), server_default='300', nullable=False))
        batch_op.add_column(sa.Column('custo_km', sa.Integer(), server_default='1', nullable=False))


def downgrade():
    with op.batch_alter_table('regras_remanejamento', schema=None) as batch_op:
        batch_op.drop_column('custo_km')
        batch_op.drop_column('custo_envio')
