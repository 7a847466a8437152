"""A request's transaction when another writer gets in its way: a read that writes late is run
again with the write lock (SQLite), a lock held past the database's wait answers 503 in the
service's dialect, and neither leaves anything half-written.

These tests commit for real: the conflicts need a second connection that sees the commits.
"""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, func, select, text

from extensions import db
from models.tracker_audit import AuditEvent
from models.tracker_collab import Comment
from services.tracker import audit
from tests.factories import auth_headers, make_user
from tests.prometheus import sample
from tests.tracker.support import API, make_issue, make_project, project_url, register, superadmin

pytestmark = pytest.mark.committing


def _count(app, model, **where) -> int:
    with app.app_context():
        query = select(func.count()).select_from(model).filter_by(**where)
        count = db.session.scalar(query)
        db.session.remove()
        return count


def _metric(client, outcome: str) -> float:
    scraped = client.get("/metrics").get_data(as_text=True)
    return sample(scraped, "giro_db_transaction_failures_total", outcome=outcome)


def test_an_export_whose_read_goes_stale_before_its_audit_row_is_written_answers_once(
    app, client, monkeypatch
):
    root = superadmin(client)
    owner = register(client, name="Olga Dona")
    upgraded = client.patch(
        f"{API}/admin/organizations/{owner.org_id}", json={"plan": "enterprise"}, headers=root.headers
    )
    assert upgraded.status_code == 200
    other = create_engine(app.config["SQLALCHEMY_DATABASE_URI"])
    real_export = audit.export_csv
    calls = []

    def export_while_another_worker_commits(*args, **kwargs):
        body = real_export(*args, **kwargs)  # read: the transaction holds its snapshot now
        calls.append(body)
        if len(calls) == 1:
            # Another worker commits a write before this request writes its audit row.
            with other.begin() as conn:
                conn.execute(text("UPDATE organizations SET name = 'Renomeada' WHERE name = 'Olga Dona'"))
        return body

    monkeypatch.setattr(audit, "export_csv", export_while_another_worker_commits)
    retried_before = _metric(client, "retried_with_write_lock")
    try:
        exported = client.get(
            f"{API}/organizations/{owner.org_id}/audit-log",
            query_string={"format": "csv"},
            headers=owner.headers,
        )
    finally:
        other.dispose()
    assert exported.status_code == 200, exported.get_data(as_text=True)
    assert exported.content_type.startswith("text/csv")
    # The export is recorded once, whether it ran once (PostgreSQL) or twice (SQLite).
    assert _count(app, AuditEvent, action="audit_log.exported") == 1
    if other.dialect.name == "sqlite":
        assert len(calls) == 2
        assert _metric(client, "retried_with_write_lock") == retried_before + 1
    else:
        assert len(calls) == 1


@pytest.fixture
def short_lock_wait(app, monkeypatch):
    """Requests wait 0.2 s for a lock (SQLite's busy timeout, PostgreSQL's lock_timeout), on
    connections opened from now on."""
    with app.app_context():
        engine = db.engine
    if engine.dialect.name == "sqlite":
        monkeypatch.setitem(app.config, "SQLITE_BUSY_TIMEOUT", 0.2)
        engine.dispose()
        yield
        monkeypatch.undo()
        engine.dispose()
        return
    database = engine.url.database
    with engine.connect() as conn:
        conn.execute(text(f"ALTER DATABASE \"{database}\" SET lock_timeout = '200ms'"))
        conn.commit()
    engine.dispose()
    try:
        yield
    finally:
        with engine.connect() as conn:
            conn.execute(text(f'ALTER DATABASE "{database}" RESET lock_timeout'))
            conn.commit()
        engine.dispose()


def test_a_lock_held_past_the_wait_answers_503_in_each_dialect_and_writes_nothing(
    app, client, short_lock_wait
):
    owner = register(client, name="Olga Dona")
    with app.app_context():
        planner = make_user(papel="planejador")
        db.session.commit()
        stock_headers = auth_headers(client, planner)
    project = make_project(client, owner)
    issue = make_issue(client, owner, project)
    comments = f"{project_url(owner, project)}/issues/{issue['key']}/comments"
    busy_before = _metric(client, "busy")

    other = create_engine(app.config["SQLALCHEMY_DATABASE_URI"])
    holder = other.connect()
    try:
        if other.dialect.name == "sqlite":
            holder.exec_driver_sql("BEGIN IMMEDIATE")  # another worker holds the write lock
        else:
            holder.execute(text("LOCK TABLE comments, users IN EXCLUSIVE MODE"))
        tracker = client.post(comments, json={"body": "Chegou?"}, headers=owner.headers)
        stock = client.patch("/api/v1/users/me", json={"nome": "Paula"}, headers=stock_headers)
    finally:
        holder.rollback()
        holder.close()
        other.dispose()

    assert tracker.status_code == 503 and tracker.headers["Retry-After"] == "1"
    body = tracker.get_json()
    assert body["error"] == "SERVICE_UNAVAILABLE" and "busy" in body["message"]
    assert body["request_id"] == tracker.headers["X-Request-ID"]
    assert stock.status_code == 503 and stock.headers["Retry-After"] == "1"
    assert stock.get_json() == {"detail": "Banco de dados ocupado; tente novamente em instantes"}
    assert _metric(client, "busy") == busy_before + 2
    assert _count(app, Comment) == 0

    # The lock gone, the same request goes through.
    assert client.post(comments, json={"body": "Chegou?"}, headers=owner.headers).status_code == 201
    assert _count(app, Comment) == 1
