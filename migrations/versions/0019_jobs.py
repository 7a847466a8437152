"""background jobs: state, progress and result of long work run by the queue

Revision ID: 0019
Revises: 0016
Create Date: 2026-11-24 18:00:00

One new table; nothing existing changes. ``lock_key`` is unique and NULL once a
job finishes (NULLs never collide on either engine), so at most one queued or
running job holds a given key, e.g. the batch generation of one ISO week.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0019'
down_revision = '0016'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('jobs',
    sa.Column('kind', sa.String(length=40), nullable=False),
    sa.Column('state', sa.String(length=10), nullable=False),
    sa.Column('progress', sa.SmallInteger(), nullable=False),
    sa.Column('message', sa.String(length=200), nullable=False),
    sa.Column('params', sa.JSON(), nullable=False),
    sa.Column('result', sa.JSON(), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('lock_key', sa.String(length=120), nullable=True),
    sa.Column('requested_by_id', sa.Uuid(), nullable=True),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('heartbeat_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("state IN ('queued', 'running', 'done', 'failed')", name=op.f('ck_jobs_state_known')),
    sa.CheckConstraint('progress >= 0 AND progress <= 100', name=op.f('ck_jobs_progress_percent')),
    sa.ForeignKeyConstraint(['requested_by_id'], ['users.id'], name=op.f('fk_jobs_requested_by_id_users'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_jobs')),
    sa.UniqueConstraint('lock_key', name=op.f('uq_jobs_lock_key'))
    )
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.create_index('ix_jobs_requested_by_id_created_at', ['requested_by_id', 'created_at'], unique=False)
        batch_op.create_index('ix_jobs_state', ['state'], unique=False)
        batch_op.create_index('ix_jobs_finished_at', ['finished_at'], unique=False)


def downgrade():
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_index('ix_jobs_finished_at')
        batch_op.drop_index('ix_jobs_state')
        batch_op.drop_index('ix_jobs_requested_by_id_created_at')

    op.drop_table('jobs')
