"""refusal reason: why a recommendation was refused, on it and on its action log

Revision ID: 0021
Revises: 0019
Create Date: 2026-11-25 17:00:00

``motivo_recusa`` holds one of ``estoque_errado``, ``loja_recusa``, ``custo``,
``outro`` (NULL for refusals made before, or through the API without a reason);
``motivo_recusa_texto`` the planner's words. The action log keeps the code next
to its existing ``motivo`` text. The learning step reads the recommendation's code.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0021'
down_revision = '0020'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('recomendacoes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('motivo_recusa', sa.String(length=20), nullable=True))
        batch_op.add_column(sa.Column('motivo_recusa_texto', sa.Text(), nullable=True))
    with op.batch_alter_table('acoes_recomendacao', schema=None) as batch_op:
        batch_op.add_column(sa.Column('motivo_recusa', sa.String(length=20), nullable=True))


def downgrade():
    with op.batch_alter_table('acoes_recomendacao', schema=None) as batch_op:
        batch_op.drop_column('motivo_recusa')
    with op.batch_alter_table('recomendacoes', schema=None) as batch_op:
        batch_op.drop_column('motivo_recusa_texto')
        batch_op.drop_column('motivo_recusa')
