"""Migration 0013 keeps one pending invitation per organization and address, on a database of its own."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import flask_migrate
import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from app import create_app
from extensions import db
from tests.tracker.test_search_migration import T

INVITATIONS = sa.table(
    "invitations",
    *(
        sa.column(name, kind)
        for name, kind in [
            ("id", sa.Uuid),
            ("organization_id", sa.Uuid),
            ("email", sa.String),
            ("role", sa.String),
            ("accepted_at", sa.DateTime(timezone=True)),
            ("created_at", sa.DateTime(timezone=True)),
        ]
    ),
)


def _id(n: int) -> uuid.UUID:
    return uuid.UUID(int=n)


def test_older_pending_duplicates_go_and_the_index_holds(fresh_database_url):
    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": fresh_database_url})
    day = datetime(2026, 11, 1, tzinfo=UTC)
    sul, norte = uuid.uuid4(), uuid.uuid4()

    def invitation(n: int, org: uuid.UUID, email: str, created: int, accepted: bool = False) -> dict:
        return dict(
            id=_id(n),
            organization_id=org,
            email=email,
            role="member" if n % 2 else "viewer",
            accepted_at=day if accepted else None,
            created_at=day + timedelta(hours=created),
        )

    with app.app_context():
        flask_migrate.upgrade(revision="0011")
        engine = db.engine
        with engine.begin() as conn:
            conn.execute(
                T["organizations"].insert(),
                [
                    dict(
                        id=org,
                        name=slug,
                        slug=slug,
                        plan_id="free",
                        plan_limits={},
                        plan_features={},
                        suspended=False,
                        created_at=day,
                    )
                    for org, slug in ((sul, "sul"), (norte, "norte"))
                ],
            )
            conn.execute(
                INVITATIONS.insert(),
                [
                    # Three pending to one address: the newest stays.
                    invitation(1, sul, "ana@giro.test", created=1),
                    invitation(2, sul, "ana@giro.test", created=3),
                    invitation(3, sul, "ana@giro.test", created=2),
                    # Accepted ones are history: they stay, whatever their age.
                    invitation(4, sul, "ana@giro.test", created=9, accepted=True),
                    invitation(5, sul, "ana@giro.test", created=0, accepted=True),
                    # Another organization, another address: untouched.
                    invitation(6, norte, "ana@giro.test", created=1),
                    invitation(7, sul, "bia@giro.test", created=1),
                    # The same instant: the greater id stays.
                    invitation(8, norte, "caio@giro.test", created=5),
                    invitation(9, norte, "caio@giro.test", created=5),
                ],
            )

        flask_migrate.upgrade(revision="heads")

        with engine.connect() as conn:
            kept = set(conn.scalars(sa.select(INVITATIONS.c.id)))
        assert kept == {_id(n) for n in (2, 4, 5, 6, 7, 9)}
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(INVITATIONS.insert(), [invitation(10, sul, "bia@giro.test", created=7)])
        with engine.begin() as conn:
            conn.execute(
                INVITATIONS.insert(), [invitation(11, sul, "bia@giro.test", created=7, accepted=True)]
            )

        flask_migrate.downgrade(revision="0011")
        with engine.begin() as conn:
            conn.execute(INVITATIONS.insert(), [invitation(12, sul, "bia@giro.test", created=8)])
        engine.dispose()
