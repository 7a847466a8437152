"""Issue list latency with custom fields, on PostgreSQL, through the API.

    .venv/bin/python benchmarks/tracker_custom_fields.py [--issues 100000] [--runs 3] [--reload]

Uses its own database (``giro_bench_custom_fields`` by default, created when
missing), migrated to the current schema. Loads one project (enterprise plan)
with ``--issues`` issues and five custom fields (text, number, date, select,
multi-select), every issue holding a value in each (about 1.5 rows for the
multi-select), in SQL; later runs reuse it unless ``--reload``. Then, through
the Flask test client with a real bearer token, times a first page of 50
issues with their values, the same filtered by a select, by a multi-select
option and by a number, and a page of 100; prints min/median/max of
``--runs`` runs of each (ms) and the statements each request ran.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import flask_migrate  # noqa: E402
import psycopg  # noqa: E402
from sqlalchemy import event, select, text  # noqa: E402

from app import create_app  # noqa: E402
from config import normalize_database_url  # noqa: E402
from extensions import db  # noqa: E402
from models.tracker import Project, Workspace  # noqa: E402
from services import auth as auth_service  # noqa: E402
from services.tracker import accounts, custom_fields, issue_counts, workspaces  # noqa: E402

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/giro_bench_custom_fields"
API = "/tracker/api/v1"
OWNER_EMAIL = "bench-fields@giro.test"
PASSWORD = "bench-password-1"
SLUG = "bench-fields"
FIELDS = (
    ("Cliente", "text", []),
    ("Pontos", "number", []),
    ("Entrega", "date", []),
    ("Canal", "select", ["loja", "site", "app", "marketplace"]),
    ("Regiões", "multi_select", ["sul", "sudeste", "norte", "nordeste", "centro_oeste"]),
)


def ensure_database(url: str) -> None:
    conninfo = psycopg.conninfo.conninfo_to_dict(url.replace("postgresql+psycopg://", "postgresql://"))
    name = conninfo["dbname"]
    with psycopg.connect(**{**conninfo, "dbname": "postgres"}, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def setup(app, issues: int, reload: bool):
    with app.app_context():
        owner = auth_service.find_user_by_email(OWNER_EMAIL)
        if owner is None:
            owner = auth_service.create_user(email=OWNER_EMAIL, password=PASSWORD, name="Bench Owner")
            organization = accounts.create_organization("Bench Fields", owner, "enterprise")
            accounts.create_workspace(organization, "Bench", SLUG)
            project = workspaces.create_project(owner, SLUG, {"name": "Bench", "key": "CF"})
            for name, kind, options in FIELDS:
                custom_fields.create_field(
                    owner, SLUG, project.id, custom_fields.FieldDefinition(name, kind, options, False)
                )
            db.session.commit()
        workspace = db.session.scalar(select(Workspace).where(Workspace.slug == SLUG))
        project = db.session.scalar(select(Project).where(Project.workspace_id == workspace.id))
        project_id = project.id
        if reload or project.issue_count != issues:
            load(project, owner.id, issues)
        return project_id


def load(project: Project, owner_id, issues: int) -> None:
    started = time.perf_counter()
    params = {"project": project.id, "org": project.organization_id, "owner": owner_id, "n": issues}
    db.session.execute(text("DELETE FROM issues WHERE project_id = :project"), params)
    db.session.execute(
        text(
            "INSERT INTO issues (id, project_id, organization_id, number, title, search_text, type, priority,"
            " status_id, created_by_id, created_at, updated_at)"
            " SELECT gen_random_uuid(), :project, :org, g, 'Issue ' || g, '', 'task', g % 5,"
            " (SELECT id FROM statuses WHERE project_id = :project ORDER BY position LIMIT 1), :owner,"
            " now() - make_interval(secs => g), now()"
            " FROM generate_series(1, :n) AS g"
        ),
        params,
    )
    fields = {
        slug: field_id
        for slug, field_id in db.session.execute(
            text("SELECT slug, id FROM custom_fields WHERE project_id = :project"), params
        )
    }
    values = [
        ("cliente", "text_value", "'Loja ' || (i.number % 500)"),
        ("pontos", "number_value", "(i.number % 13)::float"),
        ("entrega", "date_value", "DATE '2026-01-01' + (i.number % 365)"),
        ("canal", "text_value", "(ARRAY['loja','site','app','marketplace'])[1 + i.number % 4]"),
        (
            "regioes",
            "text_value",
            "(ARRAY['sul','sudeste','norte','nordeste','centro_oeste'])[1 + i.number % 5]",
        ),
    ]
    for slug, column, expression in values:
        db.session.execute(
            text(
                f"INSERT INTO custom_field_values (id, issue_id, field_id, {column})"
                f" SELECT gen_random_uuid(), i.id, :field, {expression} FROM issues i WHERE i.project_id = :project"
            ),
            {**params, "field": fields[slug]},
        )
    # Half the issues hold a second region.
    db.session.execute(
        text(
            "INSERT INTO custom_field_values (id, issue_id, field_id, text_value)"
            " SELECT gen_random_uuid(), i.id, :field, 'sudeste' FROM issues i"
            " WHERE i.project_id = :project AND i.number % 2 = 0 AND i.number % 5 <> 1"
        ),
        {**params, "field": fields["regioes"]},
    )
    db.session.execute(
        text("UPDATE projects SET issue_count = :n, issue_counter = :n WHERE id = :project"), params
    )
    # The list's counts, summed from the issues just inserted (as migration 0028 does).
    issue_counts.rebuild(project.id)
    db.session.commit()
    db.session.execute(text("ANALYZE issues"))
    db.session.execute(text("ANALYZE custom_field_values"))
    db.session.commit()
    print(f"loaded {issues:,} issues with their values in {time.perf_counter() - started:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    parser.add_argument("--issues", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--reload", action="store_true")
    args = parser.parse_args()
    url = normalize_database_url(args.database_url)
    ensure_database(url)
    app = create_app({"SQLALCHEMY_DATABASE_URI": url})
    with app.app_context():
        flask_migrate.upgrade(revision="heads")
    project_id = setup(app, args.issues, args.reload)
    client = app.test_client()
    login = client.post(f"{API}/auth/login", json={"email": OWNER_EMAIL, "password": PASSWORD})
    headers = {"Authorization": f"Bearer {login.get_json()['access_token']}"}
    path = f"{API}/workspaces/{SLUG}/projects/{project_id}/issues"
    scenarios = [
        ("first page of 50 with every field's value", ""),
        ("page of 100", "?per_page=100"),
        ("filter select: custom_field=canal:site", "?custom_field=canal:site"),
        ("filter multi_select: custom_field=regioes:norte", "?custom_field=regioes:norte"),
        ("filter number: custom_field=pontos:7", "?custom_field=pontos:7"),
        ("two filters: canal:app & regioes:sudeste", "?custom_field=canal:app&custom_field=regioes:sudeste"),
    ]
    with app.app_context():
        engine = db.engine
    print(f"{args.issues:,} issues; {args.runs} runs each; ms min / median / max; statements per request")
    for name, query in scenarios:
        timings, statements = [], []
        for _ in range(args.runs):
            seen: list[str] = []

            def count(conn, cursor, statement, *rest, seen=seen):
                seen.append(statement)

            event.listen(engine, "before_cursor_execute", count)
            started = time.perf_counter()
            response = client.get(path + query, headers=headers)
            timings.append((time.perf_counter() - started) * 1000)
            event.remove(engine, "before_cursor_execute", count)
            assert response.status_code == 200, response.get_json()
            statements.append(len(seen))
        total = response.get_json()["total"]
        print(
            f"{name}: {min(timings):.1f} / {statistics.median(timings):.1f} / {max(timings):.1f}"
            f"  ({statements[-1]} statements, total {total:,})"
        )


if __name__ == "__main__":
    main()
