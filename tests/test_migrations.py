"""The schema comes only from the migrations, and they match the models on this engine."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from flask import current_app

from extensions import db


# An index on an expression exists only on PostgreSQL (``ddl_if``): SQLite has none to compare.
@pytest.mark.filterwarnings("ignore:autogenerate skipping metadata-specified expression-based index")
def test_migrations_leave_no_drift(ctx):
    with db.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True, "render_as_batch": True})
        diff = compare_metadata(context, db.metadata)
    assert diff == [], f"models and migrations differ: {diff}"


def test_migrations_have_a_single_head(ctx):
    config = current_app.extensions["migrate"].migrate.get_config()
    heads = ScriptDirectory.from_config(config).get_heads()
    assert len(heads) == 1, f"several migration heads: {heads} (add a merge revision)"
