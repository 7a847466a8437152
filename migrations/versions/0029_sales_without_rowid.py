"""sales stored in primary-key order on SQLite (WITHOUT ROWID)

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-26 19:30:00

On SQLite a table with a composite primary key is a rowid table plus a separate
index on that key: every sales row was written twice, once in each. As a
WITHOUT ROWID table the rows live in the primary key itself, so an import
writes about a third less, and the engine's "last N days" scan reads rows in
key order without a lookup per row. PostgreSQL has no such distinction.
"""

from alembic import op

# revision identifiers, used by Alembic.
revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None


def _rebuild_vendas(with_rowid: bool) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    # No column changes: the table is copied into one built with the new storage.
    with op.batch_alter_table("vendas", recreate="always", table_kwargs={"sqlite_with_rowid": with_rowid}):
        pass


def upgrade():
    _rebuild_vendas(with_rowid=False)


def downgrade():
    _rebuild_vendas(with_rowid=True)
