"""stock in transit: what a destination received of an executed transfer, and when

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-25 17:20:00

- recomendacoes.quantidade_recebida / recebida_em: NULL while the transfer is
  not received; set together by a receipt (``receber``) or by a stock import
  that shows the goods at the destination.
- ix_recomendacoes_em_transito: the approved and executed ones not yet
  received, by destination and origin: every generation reads them, a store's
  in-transit list filters them, and they are few next to a batch's rows.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0020'
down_revision = "0019"
branch_labels = None
depends_on = None

IN_TRANSIT = "status IN ('aprovada', 'executada') AND recebida_em IS NULL"


def upgrade():
    with op.batch_alter_table('recomendacoes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('quantidade_recebida', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('recebida_em', sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index(
            'ix_recomendacoes_em_transito',
            ['destino_id', 'origem_id'],
            unique=False,
            postgresql_where=sa.text(IN_TRANSIT),
            sqlite_where=sa.text(IN_TRANSIT),
        )


def downgrade():
    with op.batch_alter_table('recomendacoes', schema=None) as batch_op:
        batch_op.drop_index(
            'ix_recomendacoes_em_transito',
            postgresql_where=sa.text(IN_TRANSIT),
            sqlite_where=sa.text(IN_TRANSIT),
        )
        batch_op.drop_column('recebida_em')
        batch_op.drop_column('quantidade_recebida')
