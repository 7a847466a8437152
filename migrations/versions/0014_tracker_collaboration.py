"""tracker collaboration: comments, issue activity, watchers, notifications and their e-mail outbox

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-23 12:00:00

New tables only; nothing existing changes. Indexes follow the reads:
- comments (issue_id, created_at, id): an issue's comments oldest first, a page at a time;
- issue_activity (issue_id, id): an issue's timeline in the order it was written;
- notifications (user_id, created_at, id), and the same on the unread ones only
  (partial): the inbox newest first, its unread filter and count;
- notification_emails (next_attempt_at) on the rows still to send (partial):
  the sender's scan stays as small as its backlog;
- one index per foreign key to users (author, actor, watcher) and to issues
  where it does not lead an index already, so deleting an account or an issue
  finds its rows by index.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('comments',
    sa.Column('issue_id', sa.Uuid(), nullable=False),
    sa.Column('author_id', sa.Uuid(), nullable=True),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('edited', sa.Boolean(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['author_id'], ['users.id'], name=op.f('fk_comments_author_id_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['issue_id'], ['issues.id'], name=op.f('fk_comments_issue_id_issues'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_comments'))
    )
    with op.batch_alter_table('comments', schema=None) as batch_op:
        batch_op.create_index('ix_comments_author_id', ['author_id'], unique=False)
        batch_op.create_index('ix_comments_issue_id_created_at', ['issue_id', 'created_at', 'id'], unique=False)

    op.create_table('issue_activity',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('issue_id', sa.Uuid(), nullable=False),
    sa.Column('actor_id', sa.Uuid(), nullable=True),
    sa.Column('kind', sa.String(length=30), nullable=False),
    sa.Column('field', sa.String(length=40), nullable=True),
    sa.Column('old_value', sa.JSON(), nullable=True),
    sa.Column('new_value', sa.JSON(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("kind IN ('created', 'updated', 'status_changed', 'relation_added', 'relation_removed', 'sub_issue_added', 'sub_issue_removed', 'comment_added', 'comment_edited', 'comment_deleted')", name=op.f('ck_issue_activity_kind_valid')),
    sa.ForeignKeyConstraint(['actor_id'], ['users.id'], name=op.f('fk_issue_activity_actor_id_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['issue_id'], ['issues.id'], name=op.f('fk_issue_activity_issue_id_issues'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_issue_activity'))
    )
    with op.batch_alter_table('issue_activity', schema=None) as batch_op:
        batch_op.create_index('ix_issue_activity_actor_id', ['actor_id'], unique=False)
        batch_op.create_index('ix_issue_activity_issue_id_id', ['issue_id', 'id'], unique=False)

    op.create_table('issue_watchers',
    sa.Column('issue_id', sa.Uuid(), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['issue_id'], ['issues.id'], name=op.f('fk_issue_watchers_issue_id_issues'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_issue_watchers_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('issue_id', 'user_id', name=op.f('pk_issue_watchers'))
    )
    with op.batch_alter_table('issue_watchers', schema=None) as batch_op:
        batch_op.create_index('ix_issue_watchers_user_id', ['user_id'], unique=False)

    op.create_table('notifications',
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('issue_id', sa.Uuid(), nullable=False),
    sa.Column('actor_id', sa.Uuid(), nullable=True),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('read_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("kind IN ('assigned', 'mentioned', 'commented', 'status_changed')", name=op.f('ck_notifications_kind_valid')),
    sa.ForeignKeyConstraint(['actor_id'], ['users.id'], name=op.f('fk_notifications_actor_id_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['issue_id'], ['issues.id'], name=op.f('fk_notifications_issue_id_issues'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_notifications_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_notifications'))
    )
    with op.batch_alter_table('notifications', schema=None) as batch_op:
        batch_op.create_index('ix_notifications_actor_id', ['actor_id'], unique=False)
        batch_op.create_index('ix_notifications_issue_id', ['issue_id'], unique=False)
        batch_op.create_index('ix_notifications_unread', ['user_id', 'created_at', 'id'], unique=False, postgresql_where=sa.text('read_at IS NULL'), sqlite_where=sa.text('read_at IS NULL'))
        batch_op.create_index('ix_notifications_user_id_created_at', ['user_id', 'created_at', 'id'], unique=False)

    op.create_table('notification_emails',
    sa.Column('notification_id', sa.Uuid(), nullable=False),
    sa.Column('state', sa.String(length=10), nullable=False),
    sa.Column('attempts', sa.SmallInteger(), nullable=False),
    sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('claimed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('sent_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_error', sa.String(length=500), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("state IN ('pending', 'sending', 'sent', 'skipped', 'failed')", name=op.f('ck_notification_emails_state_valid')),
    sa.ForeignKeyConstraint(['notification_id'], ['notifications.id'], name=op.f('fk_notification_emails_notification_id_notifications'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('notification_id', name=op.f('pk_notification_emails'))
    )
    with op.batch_alter_table('notification_emails', schema=None) as batch_op:
        batch_op.create_index('ix_notification_emails_due', ['next_attempt_at'], unique=False, postgresql_where=sa.text("state IN ('pending', 'sending')"), sqlite_where=sa.text("state IN ('pending', 'sending')"))



def downgrade():
    with op.batch_alter_table('notification_emails', schema=None) as batch_op:
        batch_op.drop_index('ix_notification_emails_due', postgresql_where=sa.text("state IN ('pending', 'sending')"), sqlite_where=sa.text("state IN ('pending', 'sending')"))

    op.drop_table('notification_emails')
    with op.batch_alter_table('notifications', schema=None) as batch_op:
        batch_op.drop_index('ix_notifications_user_id_created_at')
        batch_op.drop_index('ix_notifications_unread', postgresql_where=sa.text('read_at IS NULL'), sqlite_where=sa.text('read_at IS NULL'))
        batch_op.drop_index('ix_notifications_issue_id')
        batch_op.drop_index('ix_notifications_actor_id')

    op.drop_table('notifications')
    with op.batch_alter_table('issue_watchers', schema=None) as batch_op:
        batch_op.drop_index('ix_issue_watchers_user_id')

    op.drop_table('issue_watchers')
    with op.batch_alter_table('issue_activity', schema=None) as batch_op:
        batch_op.drop_index('ix_issue_activity_issue_id_id')
        batch_op.drop_index('ix_issue_activity_actor_id')

    op.drop_table('issue_activity')
    with op.batch_alter_table('comments', schema=None) as batch_op:
        batch_op.drop_index('ix_comments_issue_id_created_at')
        batch_op.drop_index('ix_comments_author_id')

    op.drop_table('comments')
