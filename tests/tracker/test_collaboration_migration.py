"""Migration 0014 adds the collaboration tables and takes them away again, on a database of its own."""

from __future__ import annotations

import flask_migrate
import sqlalchemy as sa

from app import create_app
from extensions import db

TABLES = {"comments", "issue_activity", "issue_watchers", "notifications", "notification_emails"}


def test_upgrade_downgrade_and_upgrade_again(fresh_database_url):
    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": fresh_database_url})
    with app.app_context():
        flask_migrate.upgrade(revision="0014")
        assert set(sa.inspect(db.engine).get_table_names()) >= TABLES
        flask_migrate.downgrade(revision="0013")
        assert not TABLES & set(sa.inspect(db.engine).get_table_names())
        flask_migrate.upgrade(revision="0014")
        inspector = sa.inspect(db.engine)
        assert set(inspector.get_table_names()) >= TABLES
        unread = next(
            i for i in inspector.get_indexes("notifications") if i["name"] == "ix_notifications_unread"
        )
        assert unread["column_names"] == ["user_id", "created_at", "id"]
        db.engine.dispose()
