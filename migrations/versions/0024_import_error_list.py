"""stock import log: every bad line of a rejected file

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-25 18:30:00

- stock_import_logs.error_list: the bad lines of a rejected file, each
  {"line", "reason"}, at most the importer's cap (100); error_line and error
  keep the first of them as before.
- stock_import_logs.more_errors: how many further lines were bad beyond the cap.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0024'
down_revision = '0023'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('stock_import_logs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('error_list', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('more_errors', sa.Integer(), nullable=True))


def downgrade():
    with op.batch_alter_table('stock_import_logs', schema=None) as batch_op:
        batch_op.drop_column('more_errors')
        batch_op.drop_column('error_list')
