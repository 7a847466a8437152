"""Every unique value raced by several requests at once: 201 for one, 409 for the others, never 500.

On PostgreSQL the racers run in concurrent transactions that can all pass a
service's duplicate check before any commits; the unique constraint settles it
(``services/unique.py``). SQLite queues writing requests, so there the same
tests pin down the answers without the race.
"""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import func, select

from extensions import db
from models.tracker import (
    Invitation,
    IssueRelation,
    Label,
    Membership,
    Organization,
    Plan,
    Project,
    Workspace,
)
from tests.racing import RACERS, one_winner, race, seen_now
from tests.tracker.support import (
    API,
    PASSWORD,
    issues_url,
    make_issue,
    make_project,
    project_url,
    register,
    superadmin,
)

pytestmark = pytest.mark.committing


def rows(app, model, *where) -> int:
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(model).where(*where))


def test_registrations_with_one_name_all_succeed_with_their_own_slugs(app):
    bodies = [
        {"name": "Maria Corrida", "email": f"maria{n}@race.test", "password": PASSWORD} for n in range(RACERS)
    ]
    results = race(app, [lambda c, body=body: c.post(f"{API}/auth/register", json=body) for body in bodies])

    assert [status for status, _ in results] == [201] * RACERS, results
    client = app.test_client()
    org_slugs, workspace_slugs = set(), set()
    for _, body in results:
        headers = {"Authorization": f"Bearer {body['access_token']}"}
        org_slugs.add(client.get(f"{API}/auth/me", headers=headers).get_json()["organizations"][0]["slug"])
        workspaces = client.get(f"{API}/workspaces", headers=headers).get_json()["workspaces"]
        workspace_slugs.update(w["slug"] for w in workspaces)
    assert len(org_slugs) == len(workspace_slugs) == RACERS
    assert all(slug.startswith("maria-corrida") for slug in org_slugs | workspace_slugs)
    assert "maria-corrida" in org_slugs and "maria-corrida" in workspace_slugs
    assert rows(app, Organization, Organization.slug.like("maria-corrida%")) == RACERS
    assert rows(app, Workspace, Workspace.slug.like("maria-corrida%")) == RACERS


def test_one_project_key_in_a_workspace(app):
    tenant = register(app.test_client())
    url = f"{API}/workspaces/{tenant.slug}/projects"
    seen_now(app)
    results = race(
        app,
        [
            lambda c, n=n: c.post(url, json={"name": f"Loja {n}", "key": "LOJA"}, headers=tenant.headers)
            for n in range(RACERS)
        ],
    )

    winner = one_winner(results)
    assert all(body["field"] == "key" for status, body in results if status == 409)
    assert rows(app, Project, Project.key == "LOJA") == 1
    listed = app.test_client().get(url, headers=tenant.headers).get_json()["projects"]
    assert [p["id"] for p in listed] == [winner["id"]]


def test_one_workspace_slug_when_created(app):
    tenant = register(app.test_client())
    body = {"organization_id": tenant.org_id, "name": "Vendas", "slug": "vendas-sul"}
    seen_now(app)
    results = race(app, [lambda c: c.post(f"{API}/workspaces", json=body, headers=tenant.headers)] * RACERS)

    one_winner(results)
    assert rows(app, Workspace, Workspace.slug == "vendas-sul") == 1


def test_one_workspace_slug_when_renamed(app):
    client = app.test_client()
    tenant = register(client)
    slugs = [f"equipe-{n}" for n in range(RACERS)]
    for slug in slugs:
        body = {"organization_id": tenant.org_id, "name": slug, "slug": slug}
        assert client.post(f"{API}/workspaces", json=body, headers=tenant.headers).status_code == 201
    seen_now(app)
    results = race(
        app,
        [
            lambda c, slug=slug: c.patch(
                f"{API}/workspaces/{slug}", json={"slug": "equipe-final"}, headers=tenant.headers
            )
            for slug in slugs
        ],
    )

    one_winner(results, won=200)
    assert rows(app, Workspace, Workspace.slug == "equipe-final") == 1
    assert rows(app, Workspace, Workspace.slug.in_(slugs)) == RACERS - 1


def test_one_label_name_in_a_project(app):
    client = app.test_client()
    tenant = register(client)
    url = project_url(tenant, make_project(client, tenant)) + "/labels"
    seen_now(app)
    results = race(
        app,
        [
            lambda c, n=n: c.post(
                url, json={"name": "urgente", "color": f"#00000{n}"}, headers=tenant.headers
            )
            for n in range(RACERS)
        ],
    )

    one_winner(results)
    assert rows(app, Label, Label.name == "urgente") == 1


def test_one_relation_between_two_issues_from_either_side(app):
    client = app.test_client()
    tenant = register(client)
    project = make_project(client, tenant)
    a, b = make_issue(client, tenant, project), make_issue(client, tenant, project)
    url = issues_url(tenant, project)
    # Half from each end, with every type: a relation and its inverse share one unique key.
    types = ["blocks", "relates_to", "duplicates", "is_blocked_by"]
    sends = []
    for n in range(RACERS):
        source, target = (a, b) if n % 2 == 0 else (b, a)
        body = {"type": types[n % len(types)], "related_issue_id": target["id"]}
        sends.append(
            lambda c, key=source["key"], body=body: c.post(
                f"{url}/{key}/relations", json=body, headers=tenant.headers
            )
        )
    seen_now(app)
    results = race(app, sends)

    one_winner(results)
    assert rows(app, IssueRelation) == 2
    for issue in (a, b):
        detail = client.get(f"{url}/{issue['key']}", headers=tenant.headers).get_json()
        assert len(detail["relations"]) == 1


def test_one_pending_invitation_per_address(app):
    owner = register(app.test_client())
    url = f"{API}/organizations/{owner.org_id}/invitations"
    # The address is compared as stored: lowercased.
    emails = ["Convidada@Race.test", "convidada@race.test", "CONVIDADA@RACE.TEST"] * RACERS
    seen_now(app)
    results = race(
        app,
        [
            lambda c, email=email: c.post(url, json={"email": email, "role": "member"}, headers=owner.headers)
            for email in emails[:RACERS]
        ],
    )

    one_winner(results)
    assert all(body["field"] == "email" for status, body in results if status == 409)
    assert rows(app, Invitation, Invitation.email == "convidada@race.test") == 1
    pending = app.test_client().get(url, headers=owner.headers).get_json()["invitations"]
    assert len(pending) == 1


def test_an_invitation_accepted_at_once_is_accepted_once(app):
    client = app.test_client()
    owner, guest = register(client), register(client)
    invited = client.post(
        f"{API}/organizations/{owner.org_id}/invitations",
        json={"email": guest.email, "role": "member"},
        headers=owner.headers,
    )
    assert invited.status_code == 201
    accept = f"{API}/invitations/{invited.get_json()['id']}/accept"
    seen_now(app)
    results = race(app, [lambda c: c.post(accept, headers=guest.headers)] * RACERS)

    # The others find the invitation accepted, as a second accept a moment later does.
    statuses = sorted(status for status, _ in results)
    assert statuses == [201] + [404] * (RACERS - 1), results
    assert (
        rows(app, Membership, Membership.user_id == uuid.UUID(guest.user_id)) == 2
    )  # their own and this one
    members = client.get(f"{API}/organizations/{owner.org_id}/members", headers=owner.headers).get_json()
    assert sorted(m["user"]["email"] for m in members["members"]) == sorted([owner.email, guest.email])


def test_one_plan_id(app):
    root = superadmin(app.test_client())
    body = {
        "id": "corrida",
        "name": "Corrida",
        "price_brl": 10,
        "limits": {"members": 5, "projects": 5, "issues": 100, "storage_bytes": 10_000},
    }
    seen_now(app)
    results = race(app, [lambda c: c.post(f"{API}/admin/plans", json=body, headers=root.headers)] * RACERS)

    one_winner(results)
    assert rows(app, Plan, Plan.id == "corrida") == 1
