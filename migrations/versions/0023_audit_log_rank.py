"""tracker audit log and board order

Revision ID: 0023
Revises: 0019
Create Date: 2026-11-25 17:00:00

- audit_log: an organization's administrative events, newest first by
  (organization_id, created_at, id), filtered by actor or action within it;
- issues.rank: each issue's place on its project's board. Existing issues are
  numbered in the order the board showed them until now (priority, then newest
  first), 65536 apart, so moves have room between neighbours.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0023'
down_revision = "0022"
branch_labels = None
depends_on = None

RANK_STEP = 65536


def upgrade():
    op.create_table('audit_log',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('organization_id', sa.Uuid(), nullable=False),
    sa.Column('actor_id', sa.Uuid(), nullable=True),
    sa.Column('actor_name', sa.String(length=200), nullable=True),
    sa.Column('action', sa.String(length=40), nullable=False),
    sa.Column('target_type', sa.String(length=30), nullable=False),
    sa.Column('target_id', sa.String(length=64), nullable=True),
    sa.Column('target_name', sa.String(length=320), nullable=True),
    sa.Column('details', sa.JSON(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['actor_id'], ['users.id'], name=op.f('fk_audit_log_actor_id_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_audit_log_organization_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_log'))
    )
    with op.batch_alter_table('audit_log', schema=None) as batch_op:
        batch_op.create_index('ix_audit_log_actor_id', ['actor_id'], unique=False)
        batch_op.create_index('ix_audit_log_organization_id_action', ['organization_id', 'action', 'created_at'], unique=False)
        batch_op.create_index('ix_audit_log_organization_id_actor_id', ['organization_id', 'actor_id', 'created_at'], unique=False)
        batch_op.create_index('ix_audit_log_organization_id_created_at', ['organization_id', 'created_at', 'id'], unique=False)

    op.add_column('issues', sa.Column('rank', sa.BigInteger(), server_default='0', nullable=False))
    op.execute(
        "UPDATE issues SET rank = ranked.position * %d FROM ("
        " SELECT id, row_number() OVER (PARTITION BY project_id ORDER BY priority DESC, created_at DESC, number DESC)"
        " AS position FROM issues) AS ranked WHERE ranked.id = issues.id" % RANK_STEP
    )
    op.create_index('ix_issues_project_rank', 'issues', ['project_id', 'rank'], unique=False)


def downgrade():
    op.drop_index('ix_issues_project_rank', table_name='issues')
    with op.batch_alter_table('issues', schema=None) as batch_op:
        batch_op.drop_column('rank')
    with op.batch_alter_table('audit_log', schema=None) as batch_op:
        batch_op.drop_index('ix_audit_log_organization_id_created_at')
        batch_op.drop_index('ix_audit_log_organization_id_actor_id')
        batch_op.drop_index('ix_audit_log_organization_id_action')
        batch_op.drop_index('ix_audit_log_actor_id')
    op.drop_table('audit_log')
