"""Migration 0038 resolves the mentions of the comments already stored, on a database of its own."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import flask_migrate
import sqlalchemy as sa

from app import create_app
from extensions import db
from models import Comment, Issue, Membership, Organization, Project, Status, User, Workspace

NOW = datetime(2026, 11, 1, tzinfo=UTC)


def _person(email: str, *, verified: bool = True, age: int = 0) -> dict:
    return dict(
        id=uuid.uuid4(),
        name=email.split("@")[0].title(),
        email=email,
        password_hash="x",
        email_verified_at=NOW if verified else None,
        created_at=datetime(2026, 10, 1 + age, tzinfo=UTC),
    )


def test_stored_comments_get_their_mentions_and_lose_them_on_downgrade(fresh_database_url):
    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": fresh_database_url})
    org, ws, project, status, issue = (uuid.uuid4() for _ in range(5))
    ana = _person("ana@loja.test")
    # Two unproven accounts of the same address, both members: the older one is named.
    first, second = _person("dup@loja.test", verified=False), _person("dup@loja.test", verified=False, age=1)
    outsider = _person("fora@outra.test")
    bodies = {
        "prose": "@Ana@Loja.test e @dup@loja.test, vejam; @fora@outra.test não é membro.",
        "code": "`@ana@loja.test` em código e\n\n    @ana@loja.test\n\nnão mencionam.",
        "none": "Sem menções.",
    }
    comment_ids = {name: uuid.uuid4() for name in bodies}
    with app.app_context():
        flask_migrate.upgrade(revision="0037")
        # The test session is bound to the suite's database: this one is reached directly.
        engine = db.engine
        with engine.begin() as conn:
            conn.execute(
                sa.insert(Organization.__table__),
                [dict(id=org, name="Sul", slug="sul", plan_id="free", plan_limits={}, plan_features={})],
            )
            conn.execute(
                sa.insert(Workspace.__table__), [dict(id=ws, organization_id=org, name="Sul", slug="sul")]
            )
            conn.execute(
                sa.insert(Project.__table__),
                [
                    dict(
                        id=project,
                        workspace_id=ws,
                        organization_id=org,
                        name="Web",
                        key="WEB",
                        issue_counter=1,
                    )
                ],
            )
            conn.execute(
                sa.insert(Status.__table__),
                [
                    dict(
                        id=status,
                        project_id=project,
                        name="A fazer",
                        color="#000000",
                        category="todo",
                        position=0,
                    )
                ],
            )
            conn.execute(
                sa.insert(Issue.__table__),
                [
                    dict(
                        id=issue,
                        project_id=project,
                        organization_id=org,
                        number=1,
                        title="Checkout",
                        type="task",
                        priority=0,
                        status_id=status,
                    )
                ],
            )
            conn.execute(sa.insert(User.__table__), [ana, first, second, outsider])
            conn.execute(
                sa.insert(Membership.__table__),
                [dict(organization_id=org, user_id=p["id"], role="member") for p in (ana, first, second)],
            )
            conn.execute(
                sa.insert(Comment.__table__),
                [
                    dict(id=comment_ids[name], issue_id=issue, author_id=ana["id"], body=body)
                    for name, body in bodies.items()
                ],
            )

        flask_migrate.upgrade(revision="heads")
        mentions = sa.table(
            "comment_mentions",
            sa.column("comment_id", sa.Uuid),
            sa.column("address"),
            sa.column("user_id", sa.Uuid),
        )
        with engine.connect() as conn:
            stored = set(
                conn.execute(sa.select(mentions.c.comment_id, mentions.c.address, mentions.c.user_id))
            )
        flask_migrate.downgrade(revision="0037")
        with engine.connect() as conn:
            tables = set(sa.inspect(conn).get_table_names())
            comments_kept = conn.scalar(sa.select(sa.func.count()).select_from(Comment.__table__))
        engine.dispose()

    assert stored == {
        (comment_ids["prose"], "ana@loja.test", ana["id"]),
        (comment_ids["prose"], "dup@loja.test", first["id"]),
    }
    assert "comment_mentions" not in tables and comments_kept == 3
