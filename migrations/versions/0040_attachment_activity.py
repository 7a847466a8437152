"""issue history: attachments uploaded and deleted

Revision ID: 0040
Revises: 0039
Create Date: 2026-12-02 15:30:00

An upload and a deletion of an attachment now write an entry in the issue's history
(``attachment_added`` / ``attachment_deleted``), so ``ck_issue_activity_kind_valid``
admits the two kinds. On PostgreSQL the new constraint is added ``NOT VALID`` and then
validated, so the table is not locked against writes while its rows are checked; SQLite
copies the table with the new constraint (batch mode).
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0040"
down_revision = "0039"
branch_labels = None
depends_on = None

NAME = "ck_issue_activity_kind_valid"
OLD_KINDS = (
    "created",
    "updated",
    "status_changed",
    "relation_added",
    "relation_removed",
    "sub_issue_added",
    "sub_issue_removed",
    "comment_added",
    "comment_edited",
    "comment_deleted",
)
NEW_KINDS = (*OLD_KINDS, "attachment_added", "attachment_deleted")


def _condition(kinds):
    return "kind IN (" + ", ".join(f"'{kind}'" for kind in kinds) + ")"


def _replace(kinds):
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER TABLE issue_activity DROP CONSTRAINT {NAME}")
        op.execute(f"ALTER TABLE issue_activity ADD CONSTRAINT {NAME} CHECK ({_condition(kinds)}) NOT VALID")
        op.execute(f"ALTER TABLE issue_activity VALIDATE CONSTRAINT {NAME}")
        return
    with op.batch_alter_table("issue_activity", schema=None) as batch_op:
        batch_op.drop_constraint(op.f(NAME), type_="check")
        batch_op.create_check_constraint(op.f(NAME), sa.text(_condition(kinds)))


def upgrade():
    _replace(NEW_KINDS)


def downgrade():
    # The old constraint does not admit the entries of attachments.
    op.execute("DELETE FROM issue_activity WHERE kind IN ('attachment_added', 'attachment_deleted')")
    _replace(OLD_KINDS)
