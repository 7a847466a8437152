"""tracker webhooks: an organization's subscriptions and the delivery outbox

Revision ID: 0022
Revises: 0019
Create Date: 2026-11-25 17:15:00

New tables only; nothing existing changes. Indexes follow the reads:
- webhooks (organization_id): an organization's webhooks, and the webhooks a
  change must be delivered to;
- webhook_deliveries (webhook_id, created_at): a webhook's last deliveries;
- webhook_deliveries (next_attempt_at) on the rows still to send (partial):
  the sender's scan stays as small as its backlog.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0022'
down_revision = '0021'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('webhooks',
    sa.Column('organization_id', sa.Uuid(), nullable=False),
    sa.Column('url', sa.String(length=2000), nullable=False),
    sa.Column('events', sa.JSON(), nullable=False),
    sa.Column('secret', sa.String(length=200), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('created_by_id', sa.Uuid(), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('failing_since', sa.DateTime(timezone=True), nullable=True),
    sa.Column('disabled_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('disabled_reason', sa.String(length=300), nullable=True),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['created_by_id'], ['users.id'], name=op.f('fk_webhooks_created_by_id_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_webhooks_organization_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_webhooks'))
    )
    with op.batch_alter_table('webhooks', schema=None) as batch_op:
        batch_op.create_index('ix_webhooks_organization_id', ['organization_id'], unique=False)
        batch_op.create_index('ix_webhooks_created_by_id', ['created_by_id'], unique=False)

    op.create_table('webhook_deliveries',
    sa.Column('webhook_id', sa.Uuid(), nullable=False),
    sa.Column('event', sa.String(length=40), nullable=False),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('state', sa.String(length=10), nullable=False),
    sa.Column('attempts', sa.SmallInteger(), nullable=False),
    sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('claimed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_attempt_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('delivered_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('response_status', sa.Integer(), nullable=True),
    sa.Column('last_error', sa.String(length=500), nullable=True),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("state IN ('pending', 'sending', 'delivered', 'failed')", name=op.f('ck_webhook_deliveries_state_valid')),
    sa.ForeignKeyConstraint(['webhook_id'], ['webhooks.id'], name=op.f('fk_webhook_deliveries_webhook_id_webhooks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_webhook_deliveries'))
    )
    with op.batch_alter_table('webhook_deliveries', schema=None) as batch_op:
        batch_op.create_index('ix_webhook_deliveries_webhook_id_created_at', ['webhook_id', 'created_at'], unique=False)
        batch_op.create_index('ix_webhook_deliveries_due', ['next_attempt_at'], unique=False, postgresql_where=sa.text("state IN ('pending', 'sending')"), sqlite_where=sa.text("state IN ('pending', 'sending')"))


def downgrade():
    with op.batch_alter_table('webhook_deliveries', schema=None) as batch_op:
        batch_op.drop_index('ix_webhook_deliveries_due', postgresql_where=sa.text("state IN ('pending', 'sending')"), sqlite_where=sa.text("state IN ('pending', 'sending')"))
        batch_op.drop_index('ix_webhook_deliveries_webhook_id_created_at')

    op.drop_table('webhook_deliveries')
    with op.batch_alter_table('webhooks', schema=None) as batch_op:
        batch_op.drop_index('ix_webhooks_created_by_id')
        batch_op.drop_index('ix_webhooks_organization_id')

    op.drop_table('webhooks')
