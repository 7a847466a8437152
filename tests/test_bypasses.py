"""The framework bypasses kept for speed give what the framework gives.

Three remain because each saves more than 15 % on an endpoint a README figure measures
(``benchmarks/bypasses.py``, docs/benchmarks.md): ``services.rows.DriverRead`` (SQLAlchemy's
execution), ``schemas.fast`` (marshmallow's dump; its own tests: ``tests/test_fast_dump.py``) and
the liveness probe in front of Flask. If a release of the library under one of them changes
what the plain path answers, these tests fail.
"""

from __future__ import annotations

import contextlib

import pytest
from sqlalchemy import event

from extensions import db
from tests.factories import auth_headers, make_user
from tests.tracker.custom_fields_support import make_field, on_plan
from tests.tracker.support import API, issues_url, make_issue, make_label, make_project, register


@contextlib.contextmanager
def through_sqlalchemy():
    """While anything listens to the engine's cursor events, every DriverRead statement runs
    through the connection's ``execute``, SQLAlchemy's own path."""

    def listening(*_args):
        return None

    event.listen(db.engine, "before_cursor_execute", listening)
    try:
        yield
    finally:
        event.remove(db.engine, "before_cursor_execute", listening)


def test_the_reads_on_the_driver_cursor_give_what_sqlalchemy_gives(client, ctx):
    owner = register(client, name="Olga Dona")
    on_plan(client, owner)
    project = make_project(client, owner)
    make_field(client, owner, project, name="Loja", type="text")
    make_field(client, owner, project, name="Prazo", type="date")
    make_field(client, owner, project, name="Custo", type="number")
    label = make_label(client, owner, project, "urgente")
    parent = make_issue(client, owner, project, priority="high", due_date="2026-12-24", estimate=3)
    child = make_issue(
        client,
        owner,
        project,
        parent_id=parent["id"],
        label_ids=[label["id"]],
        custom_fields={"loja": "LJ001", "prazo": "2026-12-20", "custo": 12.5},
    )
    related = client.post(
        f"{issues_url(owner, project)}/{parent['key']}/relations",
        json={"related_issue_id": child["id"], "type": "blocks"},
        headers=owner.headers,
    )
    assert related.status_code == 201, related.get_json()
    planner = make_user(papel="planejador")
    stock = auth_headers(client, planner)
    reads = [
        ("/api/v1/auth/me", stock),
        (f"{API}/auth/me", owner.headers),
        (issues_url(owner, project), owner.headers),
        (f"{issues_url(owner, project)}?priority=high&priority=none", owner.headers),
        (f"{issues_url(owner, project)}/{parent['key']}", owner.headers),
        (f"{issues_url(owner, project)}/{child['key']}", owner.headers),
    ]

    def answers() -> list:
        found = []
        for path, headers in reads:
            response = client.get(path, headers=headers)
            assert response.status_code == 200, (path, response.get_json())
            found.append(response.get_json())
        return found

    fast = answers()
    with through_sqlalchemy():
        plain = answers()
    assert fast == plain
    # The values the column types convert came through: dates, numbers, uuids, the custom fields.
    issue = fast[5]
    assert issue["custom_fields"] == {"loja": "LJ001", "prazo": "2026-12-20", "custo": 12.5}
    assert fast[4]["due_date"] == "2026-12-24" and fast[4]["estimate"] == 3


@pytest.mark.parametrize("path", ["/health", "/tracker/health"])
def test_the_probe_in_front_of_flask_answers_what_the_flask_view_answers(app, client, path):
    probes = app.wsgi_app
    while not hasattr(probes, "probes"):  # the middlewares wrap one another
        probes = probes.wsgi_app if hasattr(probes, "wsgi_app") else probes.app
    in_front = client.get(path, headers={"X-Request-ID": "probe-1"})
    saved, probes.probes = probes.probes, {}
    try:
        through_flask = client.get(path, headers={"X-Request-ID": "probe-1"})
    finally:
        probes.probes = saved
    assert in_front.status_code == through_flask.status_code == 200
    assert in_front.get_json() == through_flask.get_json()
    for header in (
        "Content-Type",
        "Content-Length",
        "X-Request-ID",
        "Content-Security-Policy",
        "X-Frame-Options",
    ):
        assert in_front.headers.get(header) == through_flask.headers.get(header), header
