"""Migration 0010 indexes the titles already stored, on a database of its own."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import flask_migrate
import sqlalchemy as sa

from app import create_app
from extensions import db
from models.tracker import Issue, IssueTitleTerm, TitleTerm
from services.tracker import search

T = {
    name: sa.table(name, *(sa.column(c, t) for c, t in columns))
    for name, columns in {
        "organizations": [
            ("id", sa.Uuid),
            ("name", sa.String),
            ("slug", sa.String),
            ("plan_id", sa.String),
            ("plan_limits", sa.JSON),
            ("plan_features", sa.JSON),
            ("suspended", sa.Boolean),
            ("created_at", sa.DateTime(timezone=True)),
        ],
        "workspaces": [
            ("id", sa.Uuid),
            ("organization_id", sa.Uuid),
            ("name", sa.String),
            ("slug", sa.String),
            ("created_at", sa.DateTime(timezone=True)),
        ],
        "projects": [
            ("id", sa.Uuid),
            ("workspace_id", sa.Uuid),
            ("organization_id", sa.Uuid),
            ("name", sa.String),
            ("key", sa.String),
            ("issue_counter", sa.Integer),
            ("issue_count", sa.Integer),
            ("created_at", sa.DateTime(timezone=True)),
        ],
        "statuses": [
            ("id", sa.Uuid),
            ("project_id", sa.Uuid),
            ("name", sa.String),
            ("color", sa.String),
            ("category", sa.String),
            ("position", sa.Integer),
        ],
        "labels": [("id", sa.Uuid), ("project_id", sa.Uuid), ("name", sa.String), ("color", sa.String)],
        "issue_labels": [("issue_id", sa.Uuid), ("label_id", sa.Uuid)],
        "issues": [
            ("id", sa.Uuid),
            ("project_id", sa.Uuid),
            ("organization_id", sa.Uuid),
            ("number", sa.Integer),
            ("title", sa.String),
            ("type", sa.String),
            ("priority", sa.SmallInteger),
            ("status_id", sa.Uuid),
            ("created_at", sa.DateTime(timezone=True)),
            ("updated_at", sa.DateTime(timezone=True)),
        ],
    }.items()
}


def test_existing_titles_become_searchable(fresh_database_url):
    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": fresh_database_url})
    now = datetime(2026, 11, 1, tzinfo=UTC)
    with app.app_context():
        flask_migrate.upgrade(revision="0009")
        org, ws, status = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
        web, ops = uuid.uuid4(), uuid.uuid4()
        rows = [
            (
                "organizations",
                [
                    dict(
                        id=org,
                        name="Sul",
                        slug="sul",
                        plan_id="free",
                        plan_limits={},
                        plan_features={},
                        suspended=False,
                        created_at=now,
                    )
                ],
            ),
            ("workspaces", [dict(id=ws, organization_id=org, name="Sul", slug="sul", created_at=now)]),
            (
                "projects",
                [
                    dict(
                        id=p,
                        workspace_id=ws,
                        organization_id=org,
                        name=k,
                        key=k,
                        issue_counter=3,
                        issue_count=3,
                        created_at=now,
                    )
                    for p, k in ((web, "WEB"), (ops, "OPS"))
                ],
            ),
            (
                "statuses",
                [
                    dict(
                        id=status,
                        project_id=web,
                        name="Todo",
                        color="#000000",
                        category="todo",
                        position=0,
                        created_at=now,
                    )
                ],
            ),
            (
                "issues",
                [
                    dict(
                        id=uuid.uuid4(),
                        project_id=project,
                        organization_id=org,
                        number=n,
                        title=title,
                        type="task",
                        priority=0,
                        status_id=status,
                        created_at=now,
                        updated_at=now,
                    )
                    for n, (project, title) in enumerate(
                        [
                            (web, "Calçado infantil sem estoque"),
                            (web, "Checkout lento; checkouts duplicados"),
                            (web, "Grade   de  TÊNIS"),
                            (ops, "Calçado na vitrine"),
                        ],
                        start=1,
                    )
                ],
            ),
        ]
        # The test session is bound to the suite's database: this one is reached directly.
        engine = db.engine
        label = uuid.uuid4()
        with engine.begin() as conn:
            for table, values in rows:
                conn.execute(T[table].insert(), values)
            conn.execute(T["labels"].insert(), [dict(id=label, project_id=web, name="bug", color="#ff0000")])
            labelled = conn.scalars(sa.select(T["issues"].c.id)).all()
            conn.execute(T["issue_labels"].insert(), [dict(issue_id=i, label_id=label) for i in labelled])

        flask_migrate.upgrade(revision="heads")

        with engine.connect() as conn:
            labels_kept = conn.scalar(sa.select(sa.func.count()).select_from(T["issue_labels"]))
            texts = dict(conn.execute(sa.select(Issue.title, Issue.search_text)).all())
            words = conn.execute(
                sa.select(Issue.title, TitleTerm.project_id, TitleTerm.term)
                .join(IssueTitleTerm, IssueTitleTerm.issue_id == Issue.id)
                .join(TitleTerm, TitleTerm.id == IssueTitleTerm.term_id)
            ).all()
            found = conn.scalars(
                sa.select(Issue.title).where(Issue.project_id == web, search.condition("TENIS grade"))
            ).all()
        # And back: the issues and their labels stay.
        flask_migrate.downgrade(revision="0009")
        with engine.connect() as conn:
            columns = {c["name"] for c in sa.inspect(conn).get_columns("issues")}
            after_downgrade = (
                conn.scalar(sa.select(sa.func.count()).select_from(T["issues"])),
                conn.scalar(sa.select(sa.func.count()).select_from(T["issue_labels"])),
            )
        engine.dispose()

    assert labels_kept == 4
    assert "search_text" not in columns and after_downgrade == (4, 4)
    assert texts == {title: search.searchable(title) for title in texts}
    assert texts["Grade   de  TÊNIS"] == "grade de tenis"
    assert texts["Calçado infantil sem estoque"] == "calcado infantil sem estoque"
    # Each issue holds exactly its title's words, in its own project's vocabulary.
    projects = {"Calçado na vitrine": ops}
    expected = {(title, projects.get(title, web), term) for title in texts for term in search.terms_of(title)}
    assert set(words) == expected and len(words) == len(expected)
    assert ("Calçado na vitrine", ops, "calcado") in expected
    assert found == ["Grade   de  TÊNIS"]
