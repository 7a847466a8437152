"""Migration 0012 takes the default stock role from self-registered accounts, and keeps the rest."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import flask_migrate
import sqlalchemy as sa

from app import create_app
from extensions import db
from tests.tracker.test_search_migration import T

# The organizations table as migration 0011 left it, shared with the other migration tests.
organizations = T["organizations"]

users = sa.table(
    "users",
    *(
        sa.column(name, kind)
        for name, kind in [
            ("id", sa.Uuid),
            ("name", sa.String),
            ("email", sa.String),
            ("password_hash", sa.String),
            ("papel", sa.String),
            ("superadmin", sa.Boolean),
            ("banned", sa.Boolean),
            ("notif_email", sa.Boolean),
            ("notif_push", sa.Boolean),
            ("digest_semanal", sa.Boolean),
            ("created_at", sa.DateTime(timezone=True)),
        ]
    ),
)
memberships = sa.table(
    "memberships",
    *(
        sa.column(n, t)
        for n, t in [
            ("organization_id", sa.Uuid),
            ("user_id", sa.Uuid),
            ("role", sa.String),
            ("created_at", sa.DateTime(timezone=True)),
        ]
    ),
)
refresh_tokens = sa.table(
    "refresh_tokens",
    *(
        sa.column(n, t)
        for n, t in [
            ("jti", sa.String),
            ("user_id", sa.Uuid),
            ("family_id", sa.Uuid),
            ("remember", sa.Boolean),
            ("expires_at", sa.DateTime(timezone=True)),
            ("created_at", sa.DateTime(timezone=True)),
        ]
    ),
)


def _user(email: str, papel: str, created_at: datetime) -> dict:
    return dict(
        id=uuid.uuid4(),
        name=email,
        email=email,
        password_hash="x",
        papel=papel,
        superadmin=False,
        banned=False,
        notif_email=True,
        notif_push=False,
        digest_semanal=True,
        created_at=created_at,
    )


def test_registered_accounts_lose_the_implied_role_and_operator_accounts_keep_theirs(fresh_database_url):
    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": fresh_database_url})
    now = datetime(2026, 11, 1, 12, tzinfo=UTC)
    registered = _user("signup@tracker.test", "visualizador", now)
    planner = _user("planner@giro.test", "planejador", now - timedelta(days=30))
    viewer = _user("viewer@giro.test", "visualizador", now - timedelta(days=30))
    # An operator-made viewer who later created an organization of their own keeps the role.
    viewer_org_later = _user("later@giro.test", "visualizador", now - timedelta(days=30))
    with app.app_context():
        flask_migrate.upgrade(revision="0011")
        engine = db.engine
        with engine.begin() as conn:
            conn.execute(users.insert(), [registered, planner, viewer, viewer_org_later])
            for owner, created in ((registered, now + timedelta(seconds=1)), (viewer_org_later, now)):
                org = uuid.uuid4()
                conn.execute(
                    organizations.insert(),
                    [
                        dict(
                            id=org,
                            name=owner["email"],
                            slug=owner["email"].split("@")[0],
                            plan_id="free",
                            plan_limits={},
                            plan_features={},
                            suspended=False,
                            created_at=created,
                        )
                    ],
                )
                conn.execute(
                    memberships.insert(),
                    [dict(organization_id=org, user_id=owner["id"], role="owner", created_at=created)],
                )
            conn.execute(
                refresh_tokens.insert(),
                [
                    dict(
                        jti=f"jti-{u['email']}",
                        user_id=u["id"],
                        family_id=uuid.uuid4(),
                        remember=True,
                        expires_at=now + timedelta(days=7),
                        created_at=now,
                    )
                    for u in (registered, planner)
                ],
            )

        flask_migrate.upgrade(revision="heads")
        with engine.connect() as conn:
            rows = {
                r.email: (r.papel, r.email_verified_at is not None)
                for r in conn.execute(sa.text("SELECT email, papel, email_verified_at FROM users"))
            }
            # Rebuilding the users table (SQLite) must not cascade to what points at it.
            tokens = conn.scalar(sa.text("SELECT count(*) FROM refresh_tokens"))
            owners = conn.scalar(sa.text("SELECT count(*) FROM memberships"))

        flask_migrate.downgrade(revision="0011")
        with engine.connect() as conn:
            papeis_after_downgrade = dict(conn.execute(sa.text("SELECT email, papel FROM users")).all())
        engine.dispose()

    assert rows == {
        "signup@tracker.test": (None, False),
        "planner@giro.test": ("planejador", True),
        "viewer@giro.test": ("visualizador", True),
        "later@giro.test": ("visualizador", True),
    }
    assert (tokens, owners) == (2, 2)
    assert papeis_after_downgrade["signup@tracker.test"] == "visualizador"
