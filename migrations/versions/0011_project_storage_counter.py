"""project storage counter: the bytes of each project's issue texts, kept on write

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-22 16:40:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade():
    # A plain ALTER: a batch copy of ``projects`` on SQLite would cascade to its issues.
    op.add_column('projects', sa.Column('storage_bytes', sa.BigInteger(), server_default='0', nullable=False))
    if op.get_bind().dialect.name == 'postgresql':
        length = "coalesce(octet_length(title), 0) + coalesce(octet_length(description), 0)"
    else:
        length = "coalesce(length(CAST(title AS BLOB)), 0) + coalesce(length(CAST(description AS BLOB)), 0)"
    op.execute(
        f"UPDATE projects SET storage_bytes = coalesce("
        f"(SELECT sum({length}) FROM issues WHERE issues.project_id = projects.id), 0)"
    )


def downgrade():
    op.drop_column('projects', 'storage_bytes')
