"""one history: tracker and remanejamento

Revision ID: 0009
Revises: 0002, 0003
Create Date: 2026-11-22 13:49:46.386458

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0009'
down_revision = ('0002', '0003')
branch_labels = None
depends_on = None


def upgrade():
    pass


def downgrade():
    pass
