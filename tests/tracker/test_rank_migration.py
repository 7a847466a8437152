"""Migration 0023 numbers the issues already stored in the order the board showed them."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import flask_migrate
import sqlalchemy as sa

from app import create_app
from extensions import db
from tests.tracker.test_search_migration import T


def test_existing_issues_get_ranks_in_the_old_board_order(fresh_database_url):
    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": fresh_database_url})
    start = datetime(2026, 11, 1, tzinfo=UTC)
    with app.app_context():
        flask_migrate.upgrade(revision="0019")
        org, ws, web, ops = uuid.uuid4(), uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
        statuses = {web: uuid.uuid4(), ops: uuid.uuid4()}
        # (project, number, priority, hours after start)
        seeds = [
            (web, 1, 0, 1),
            (web, 2, 4, 2),
            (web, 3, 0, 3),
            (web, 4, 4, 0),
            (ops, 1, 2, 0),
            (ops, 2, 2, 5),
        ]
        with db.engine.begin() as conn:
            conn.execute(
                T["organizations"].insert(),
                [
                    dict(
                        id=org,
                        name="Sul",
                        slug="sul",
                        plan_id="free",
                        plan_limits={},
                        plan_features={},
                        suspended=False,
                        created_at=start,
                    )
                ],
            )
            conn.execute(
                T["workspaces"].insert(),
                [dict(id=ws, organization_id=org, name="Sul", slug="sul", created_at=start)],
            )
            conn.execute(
                T["projects"].insert(),
                [
                    dict(
                        id=p,
                        workspace_id=ws,
                        organization_id=org,
                        name=k,
                        key=k,
                        issue_counter=4,
                        issue_count=4,
                        created_at=start,
                    )
                    for p, k in ((web, "WEB"), (ops, "OPS"))
                ],
            )
            conn.execute(
                T["statuses"].insert(),
                [
                    dict(id=s, project_id=p, name="Todo", color="#000000", category="todo", position=0)
                    for p, s in statuses.items()
                ],
            )
            conn.execute(
                T["issues"].insert(),
                [
                    dict(
                        id=uuid.uuid4(),
                        project_id=project,
                        organization_id=org,
                        number=number,
                        title=f"{number}",
                        type="task",
                        priority=priority,
                        status_id=statuses[project],
                        created_at=start + timedelta(hours=hours),
                        updated_at=start,
                    )
                    for project, number, priority, hours in seeds
                ],
            )

        flask_migrate.upgrade(revision="heads")

        with db.engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT project_id, number, rank FROM issues")).all()
    ranks = {}
    for project_id, number, rank in rows:
        key = "WEB" if uuid.UUID(str(project_id)) == web else "OPS"
        ranks[f"{key}-{number}"] = rank
    web_order = sorted((k for k in ranks if k.startswith("WEB")), key=ranks.get)
    ops_order = sorted((k for k in ranks if k.startswith("OPS")), key=ranks.get)
    # Urgent first, then newest first: the order the board showed until now.
    assert web_order == ["WEB-2", "WEB-4", "WEB-3", "WEB-1"]
    assert ops_order == ["OPS-2", "OPS-1"]
    assert sorted(ranks[k] for k in web_order) == [65536, 131072, 196608, 262144]
