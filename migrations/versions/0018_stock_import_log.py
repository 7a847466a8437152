"""stock import log and the account's display language

Revision ID: 0018
Revises: 0014
Create Date: 2026-11-24 18:00:00

- stock_import_logs: one row per CSV import (command line or the admin page),
  accepted or rejected, for the admin's "last imports" list (newest first,
  hence the created_at index); the account that ran it is kept as SET NULL
  so deleting an account keeps the history.
- users.idioma: the language the pages format numbers and dates in; empty
  means pt-BR whatever the browser's Accept-Language says.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0018'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('stock_import_logs',
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('filename', sa.String(length=255), nullable=False),
    sa.Column('rows', sa.Integer(), nullable=False),
    sa.Column('inserted', sa.Integer(), nullable=False),
    sa.Column('updated', sa.Integer(), nullable=False),
    sa.Column('unchanged', sa.Integer(), nullable=False),
    sa.Column('removed', sa.Integer(), nullable=False),
    sa.Column('ok', sa.Boolean(), nullable=False),
    sa.Column('error_line', sa.Integer(), nullable=True),
    sa.Column('error', sa.String(length=500), nullable=True),
    sa.Column('seconds', sa.Float(), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.CheckConstraint("kind IN ('stores', 'products', 'stock', 'sales', 'campaigns')", name=op.f('ck_stock_import_logs_kind_valid')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_stock_import_logs_user_id_users'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_stock_import_logs'))
    )
    with op.batch_alter_table('stock_import_logs', schema=None) as batch_op:
        batch_op.create_index('ix_stock_import_logs_created_at', ['created_at'], unique=False)
        batch_op.create_index('ix_stock_import_logs_user_id', ['user_id'], unique=False)

    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('idioma', sa.String(length=10), nullable=True))


def downgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('idioma')
    with op.batch_alter_table('stock_import_logs', schema=None) as batch_op:
        batch_op.drop_index('ix_stock_import_logs_user_id')
        batch_op.drop_index('ix_stock_import_logs_created_at')
    op.drop_table('stock_import_logs')
