"""pending invitations: at most one per organization and e-mail address

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-23 09:00:00

Two invitations sent at once could both pass the service's check and leave
two pending invitations to one address. A partial unique index on the pending
ones now refuses the second (the API answers 409).

Duplicates already stored are resolved first: the newest pending invitation
of each (organization, address) stays and the older ones are deleted. An
invitation has no withdrawn state (withdrawing one deletes it), and the
newest carries the role the organization chose last; accepting any of them
would have given the same membership.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None

PENDING = sa.text('accepted_at IS NULL')


def upgrade():
    # Newer: a later created_at, or the same one and a greater id (a stable tie-break);
    # both compare the same way on PostgreSQL and SQLite (ISO text, hex uuids).
    op.execute(
        """
        DELETE FROM invitations
        WHERE accepted_at IS NULL
          AND EXISTS (
            SELECT 1 FROM invitations AS newer
            WHERE newer.organization_id = invitations.organization_id
              AND newer.email = invitations.email
              AND newer.accepted_at IS NULL
              AND (newer.created_at > invitations.created_at
                   OR (newer.created_at = invitations.created_at AND newer.id > invitations.id))
          )
        """
    )
    op.create_index(
        'uq_invitations_pending_organization_id_email',
        'invitations',
        ['organization_id', 'email'],
        unique=True,
        postgresql_where=PENDING,
        sqlite_where=PENDING,
    )


def downgrade():
    op.drop_index('uq_invitations_pending_organization_id_email', table_name='invitations')
