"""Test harness.

The schema is built once per session by the migrations, on SQLite by default
or on the database named by ``TEST_DATABASE_URL``. Each test runs inside a
transaction that is rolled back at the end; requests commit to a SAVEPOINT
(``join_transaction_mode="create_savepoint"``), so views behave as in
production while nothing leaks between tests. Tests marked ``committing``
(concurrency) use real transactions and empty every table afterwards.
"""

from __future__ import annotations

import contextvars
import os

import flask_migrate
import pytest
import sqlalchemy as sa
from flask.ctx import _cv_app
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import scoped_session, sessionmaker

# The suite's transaction holds SQLite's write lock, which rate-limit counters kept in the
# database would wait for, and the limiter is one per process, whichever app the test makes:
# every app of the suite counts in memory. The servers the tests start (tests/test_soak.py)
# count in the database or Redis, as deployed.
os.environ["RATELIMIT_STORAGE_URI"] = "memory://"

from app import create_app
from config import normalize_database_url
from extensions import db

# The OpenID provider (panva's oidc-provider on loopback) for the single sign-on tests, and an
# SMTP server on loopback for the e-mail tests.
pytest_plugins = ["tests.oidc", "tests.mail_sink"]

SUPERADMIN_EMAIL = "root@giro.test"


def _database_url(tmp_path_factory) -> str:
    url = os.environ.get("TEST_DATABASE_URL")
    if not url:
        return f"sqlite:///{tmp_path_factory.mktemp('db') / 'test.db'}"
    url = normalize_database_url(url)
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    return url


class IsolatedClient(FlaskClient):
    """Each request runs in an app context (and so a session) of its own, as in
    production, even while the test holds one for its factories. Otherwise Flask
    reuses the test's context, and a request that rolls back would discard the
    test's own data."""

    def open(self, *args, **kwargs):
        context = contextvars.Context()
        response = context.run(super().open, *args, **kwargs)
        if "Content-Length" not in response.headers:
            response.response = _ReadInContext(context, response.response)
        return response


class _ReadInContext:
    """A streamed body read in its request's context: ``stream_with_context`` pushed the
    request there and pops it when the body ends, which only that context allows."""

    def __init__(self, context: contextvars.Context, body):
        self._context = context
        self._body = body
        self._items = context.run(iter, body)

    def __iter__(self):
        return self

    def __next__(self):
        return self._context.run(next, self._items)

    def close(self):
        close = getattr(self._body, "close", None)
        if close is not None:
            self._context.run(close)


class IsolatedCliRunner(FlaskCliRunner):
    """The same isolation for CLI commands."""

    def invoke(self, *args, **kwargs):
        return contextvars.Context().run(super().invoke, *args, **kwargs)


def pytest_collection_modifyitems(config, items):
    """``make test`` runs the suite on SQLite and PostgreSQL at once (``TEST_BOTH_DATABASES=1``):
    a test marked ``any_database(on=...)`` proves nothing about the database, so it runs in one
    of the two runs only, the one it names (the split balances the two runs' time). Alone,
    either run runs everything."""
    if os.environ.get("TEST_BOTH_DATABASES") != "1":
        return
    here = "postgresql" if os.environ.get("TEST_DATABASE_URL") else "sqlite"
    elsewhere = [
        item
        for item in items
        if (marker := item.get_closest_marker("any_database")) is not None and marker.kwargs["on"] != here
    ]
    if elsewhere:
        config.hook.pytest_deselected(items=elsewhere)
        items[:] = [item for item in items if item not in elsewhere]


@pytest.fixture(scope="session")
def app(tmp_path_factory):
    app = create_app(
        {
            "TESTING": True,
            "SQLALCHEMY_DATABASE_URI": _database_url(tmp_path_factory),
            "ARGON2_TIME_COST": 1,
            "ARGON2_MEMORY_COST": 1024,
            "SUPERADMIN_EMAIL": SUPERADMIN_EMAIL,
            "SMTP_HOST": None,
            "JOBS_SPOOL_DIR": str(tmp_path_factory.mktemp("spool")),
            "STORAGE_URL": tmp_path_factory.mktemp("attachments").as_uri(),
            # Every issue write queues the search index's job; only the tests that read the index
            # run it (``search_indexing``), the others leave it queued.
            "JOBS_EAGER_DEFERRED": ("busca",),
        }
    )
    app.test_client_class = IsolatedClient
    app.test_cli_runner_class = IsolatedCliRunner
    with app.app_context():
        flask_migrate.upgrade(revision="heads")
        app.extensions["seed_rows"] = _snapshot_seed_rows()
    return app


def _snapshot_seed_rows() -> dict:
    """Rows the migrations seed (plans, ...), restored after a committing test."""
    rows = {}
    with db.engine.connect() as conn:
        for table in db.metadata.sorted_tables:
            found = [dict(r._mapping) for r in conn.execute(table.select())]
            if found:
                rows[table.name] = found
    return rows


def _app_ctx_id() -> int:
    return id(_cv_app.get(None))


@pytest.fixture(autouse=True)
def db_session(request, app):
    if request.node.get_closest_marker("committing"):
        yield None
        _empty_all_tables(app)
        return
    with app.app_context():
        connection = db.engine.connect()
        transaction = connection.begin()
        session = scoped_session(
            sessionmaker(bind=connection, join_transaction_mode="create_savepoint"),
            scopefunc=_app_ctx_id,
        )
        original = db.session
        db.session = session
        try:
            yield session
        finally:
            session.remove()
            db.session = original
            transaction.rollback()
            connection.close()


def _empty_all_tables(app) -> None:
    with app.app_context():
        db.session.remove()
        seed = app.extensions["seed_rows"]
        with db.engine.begin() as conn:
            for table in reversed(db.metadata.sorted_tables):
                conn.execute(table.delete())
            for table in db.metadata.sorted_tables:
                if table.name in seed:
                    conn.execute(table.insert(), seed[table.name])


@pytest.fixture(autouse=True)
def _fresh_rate_limits(app):
    """Each test starts with untouched sign-in counters."""
    from extensions import limiter

    with app.app_context():
        limiter.reset()


@pytest.fixture
def search_indexing(app, monkeypatch):
    """The search index's jobs run after each commit, as a worker would run them."""
    monkeypatch.setitem(app.config, "JOBS_EAGER_DEFERRED", ())


@pytest.fixture
def fresh_database_url(tmp_path):
    """An empty database of its own, for tests that run migrations step by step."""
    base = os.environ.get("TEST_DATABASE_URL")
    if not base:
        yield f"sqlite:///{tmp_path / 'migration.db'}"
        return
    url = make_url(normalize_database_url(base))
    name = f"{url.database}_migration"
    admin = sa.create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    yield url.set(database=name).render_as_string(hide_password=False)
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def ctx(app):
    """An app context for tests that call services or factories directly."""
    with app.app_context():
        yield
