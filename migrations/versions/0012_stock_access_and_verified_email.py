"""stock access is granted, addresses are proven, logout ends access tokens

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-23 11:40:00

- ``users.papel`` becomes nullable: no role means no access to remanejamento.
  Accounts made by the tracker's public registration lose the ``visualizador``
  role they were given by default; accounts made by an operator keep theirs.
- ``users.email_verified_at`` and ``pending_email``; only verified addresses are
  unique. Operator-made accounts count as verified; registered ones must follow
  the link they are sent.
- ``email_verifications``, ``revoked_access_tokens`` and the access token paired
  with each refresh token.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None

VERIFIED = sa.text('email_verified_at IS NOT NULL')


def _registered_by_tracker(dialect: str) -> str:
    """Accounts whose own organization was created with them: the public registration."""
    if dialect == 'postgresql':
        close = 'abs(extract(epoch FROM (o.created_at - users.created_at))) < 60'
    else:
        close = 'abs(julianday(o.created_at) - julianday(users.created_at)) * 86400 < 60'
    return (
        "EXISTS (SELECT 1 FROM memberships m JOIN organizations o ON o.id = m.organization_id "
        f"WHERE m.user_id = users.id AND m.role = 'owner' AND {close})"
    )


def upgrade():
    op.create_table('email_verifications',
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('email', sa.String(length=320), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_email_verifications_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('token_hash', name=op.f('pk_email_verifications'))
    )
    op.create_index(op.f('ix_email_verifications_user_id'), 'email_verifications', ['user_id'], unique=False)
    op.create_table('revoked_access_tokens',
    sa.Column('jti', sa.String(length=64), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('jti', name=op.f('pk_revoked_access_tokens'))
    )
    op.create_index(op.f('ix_revoked_access_tokens_expires_at'), 'revoked_access_tokens', ['expires_at'], unique=False)
    op.add_column('refresh_tokens', sa.Column('access_jti', sa.String(length=64), nullable=True))
    op.add_column('refresh_tokens', sa.Column('access_expires_at', sa.DateTime(timezone=True), nullable=True))

    op.add_column('users', sa.Column('email_verified_at', sa.DateTime(timezone=True), nullable=True))
    op.add_column('users', sa.Column('pending_email', sa.String(length=320), nullable=True))
    # SQLite rebuilds the table here; migrations/env.py turns foreign keys off meanwhile
    # so the rebuild cannot cascade to the rows that point at users.
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.alter_column('papel', existing_type=sa.String(length=20), nullable=True)
        batch_op.drop_constraint('uq_users_email', type_='unique')
        batch_op.create_index('ix_users_email', ['email'], unique=False)

    registered = _registered_by_tracker(op.get_bind().dialect.name)
    op.execute(f"UPDATE users SET papel = NULL WHERE papel = 'visualizador' AND {registered}")
    op.execute(f"UPDATE users SET email_verified_at = created_at WHERE NOT {registered}")
    op.create_index('uq_users_email_verified', 'users', ['email'], unique=True,
                    postgresql_where=VERIFIED, sqlite_where=VERIFIED)


def downgrade():
    # Unverified duplicates of an address cannot survive the old unique constraint.
    op.execute(
        "DELETE FROM users WHERE email_verified_at IS NULL AND EXISTS "
        "(SELECT 1 FROM users AS other WHERE other.email = users.email AND other.id <> users.id "
        "AND (other.email_verified_at IS NOT NULL OR other.created_at < users.created_at))"
    )
    op.execute("UPDATE users SET papel = 'visualizador' WHERE papel IS NULL")
    op.drop_index('uq_users_email_verified', table_name='users')
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_index('ix_users_email')
        batch_op.create_unique_constraint('uq_users_email', ['email'])
        batch_op.alter_column('papel', existing_type=sa.String(length=20), nullable=False)
    op.drop_column('users', 'pending_email')
    op.drop_column('users', 'email_verified_at')
    op.drop_column('refresh_tokens', 'access_expires_at')
    op.drop_column('refresh_tokens', 'access_jti')
    op.drop_index(op.f('ix_revoked_access_tokens_expires_at'), table_name='revoked_access_tokens')
    op.drop_table('revoked_access_tokens')
    op.drop_index(op.f('ix_email_verifications_user_id'), table_name='email_verifications')
    op.drop_table('email_verifications')
