"""The organization's audit log: events written with each administrative change, filters, CSV,
roles, isolation and the plan feature."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest

from tests.tracker.support import (
    API,
    add_member,
    assert_error,
    make_label,
    make_project,
    project_url,
    register,
    superadmin,
)


def log_url(tenant) -> str:
    return f"{API}/organizations/{tenant.org_id}/audit-log"


def events(client, tenant, who=None, **query) -> dict:
    response = client.get(
        log_url(tenant), query_string={"per_page": 100, **query}, headers=(who or tenant).headers
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def actions(client, tenant, **query) -> list[str]:
    """The actions of the log, oldest first."""
    return [event["action"] for event in reversed(events(client, tenant, **query)["events"])]


def on_plan(client, root, tenant, plan: str) -> None:
    response = client.patch(
        f"{API}/admin/organizations/{tenant.org_id}", json={"plan": plan}, headers=root.headers
    )
    assert response.status_code == 200, response.get_json()


@pytest.fixture
def org(client):
    """A superadmin, and an owner whose organization is on the enterprise plan (audit_log: true)."""
    root = superadmin(client)
    owner = register(client, name="Olga Dona")
    on_plan(client, root, owner, "enterprise")
    return root, owner


def test_people_events_with_actor_target_and_details(client, org):
    _root, owner = org
    person = register(client, name="Ana Membro")
    add_member(client, owner, person)  # invited, then joined
    changed = client.patch(
        f"{API}/organizations/{owner.org_id}/members/{person.user_id}",
        json={"role": "admin"},
        headers=owner.headers,
    )
    assert changed.status_code == 200
    invited = client.post(
        f"{API}/organizations/{owner.org_id}/invitations",
        json={"email": "x@loja.test"},
        headers=owner.headers,
    ).get_json()
    client.delete(f"{API}/organizations/{owner.org_id}/invitations/{invited['id']}", headers=owner.headers)
    removed = client.delete(
        f"{API}/organizations/{owner.org_id}/members/{person.user_id}", headers=owner.headers
    )
    assert removed.status_code == 204
    assert actions(client, owner) == [
        "organization.created",
        "plan.changed",
        "member.invited",
        "member.joined",
        "member.role_changed",
        "member.invited",
        "invitation.revoked",
        "member.removed",
    ]
    by_action = {e["action"]: e for e in events(client, owner)["events"]}
    role = by_action["member.role_changed"]
    assert role["actor"] == {"id": owner.user_id, "name": "Olga Dona"}
    assert role["target"]["type"] == "member" and role["target"]["id"] == person.user_id
    assert "Ana Membro" in role["target"]["name"] and person.email in role["target"]["name"]
    assert role["details"] == {"old": {"role": "member"}, "new": {"role": "admin"}}
    assert by_action["member.joined"]["actor"]["id"] == person.user_id
    assert by_action["member.removed"]["details"] == {"old": {"role": "admin"}}
    assert by_action["invitation.revoked"]["target"]["name"] == "x@loja.test"
    plan = by_action["plan.changed"]
    assert plan["details"] == {"old": {"plan": "free"}, "new": {"plan": "enterprise"}}
    created_at = datetime.fromisoformat(role["created_at"])
    assert abs(created_at - datetime.now(UTC)) < timedelta(minutes=5)


def test_workspace_project_status_and_label_events(client, org):
    _root, owner = org
    workspace = client.post(
        f"{API}/workspaces", json={"organization_id": owner.org_id, "name": "Lojas"}, headers=owner.headers
    ).get_json()
    renamed = client.patch(
        f"{API}/workspaces/{workspace['slug']}", json={"name": "Lojas SP"}, headers=owner.headers
    )
    assert renamed.status_code == 200
    project = make_project(client, owner)
    url = project_url(owner, project)
    assert client.patch(url, json={"name": "Site novo"}, headers=owner.headers).status_code == 200
    status = client.post(
        url + "/statuses",
        json={"name": "Revisão", "color": "#123456", "category": "in_progress"},
        headers=owner.headers,
    ).get_json()
    assert (
        client.patch(
            url + f"/statuses/{status['id']}", json={"name": "QA"}, headers=owner.headers
        ).status_code
        == 200
    )
    assert client.delete(url + f"/statuses/{status['id']}", headers=owner.headers).status_code == 204
    label = make_label(client, owner, project, "bug")
    assert client.delete(url + f"/labels/{label['id']}", headers=owner.headers).status_code == 204
    assert client.delete(url, headers=owner.headers).status_code == 204
    assert actions(client, owner)[2:] == [
        "workspace.created",
        "workspace.updated",
        "project.created",
        "project.updated",
        "status.created",
        "status.updated",
        "status.deleted",
        "label.created",
        "label.deleted",
        "project.deleted",
    ]
    by_action = {e["action"]: e for e in events(client, owner)["events"]}
    assert by_action["workspace.updated"]["details"] == {
        "old": {"name": "Lojas"},
        "new": {"name": "Lojas SP"},
    }
    assert by_action["project.updated"]["details"] == {
        "old": {"name": "Website"},
        "new": {"name": "Site novo"},
    }
    status_change = by_action["status.updated"]
    assert status_change["details"] == {"old": {"name": "Revisão"}, "new": {"name": "QA"}, "project": "WEB"}
    assert by_action["status.deleted"]["target"] == {"type": "status", "id": status["id"], "name": "QA"}
    assert by_action["label.created"]["details"]["new"] == {"name": "bug", "color": "#ff0000"}
    # The project is gone; its entries still name it.
    assert by_action["project.deleted"]["target"] == {
        "type": "project",
        "id": project["id"],
        "name": "Site novo",
    }


def test_platform_changes_are_in_the_organizations_log(client, org):
    root, owner = org
    admin_url = f"{API}/admin/organizations/{owner.org_id}"
    assert client.patch(admin_url, json={"suspended": True}, headers=root.headers).status_code == 200
    assert (
        client.patch(admin_url, json={"suspended": False, "name": "Nova"}, headers=root.headers).status_code
        == 200
    )
    assert actions(client, owner)[2:] == [
        "organization.suspended",
        "organization.reactivated",
        "organization.renamed",
    ]
    latest = events(client, owner)["events"]
    assert {e["actor"]["id"] for e in latest[:3]} == {root.user_id}


def test_filters_and_paging(client, org):
    _root, owner = org
    admin = register(client)
    add_member(client, owner, admin, "admin")
    make_project(client, owner, key="ONE", name="One")
    two = client.post(
        f"{API}/workspaces/{owner.slug}/projects", json={"name": "Two", "key": "TWO"}, headers=admin.headers
    )
    assert two.status_code == 201
    by_admin = events(client, owner, actor_id=admin.user_id)
    assert [e["action"] for e in by_admin["events"]] == ["project.created", "member.joined"]
    assert by_admin["total"] == 2
    projects = events(client, owner, action="project.created")
    assert [e["target"]["name"] for e in projects["events"]] == ["Two", "One"]
    every = events(client, owner)["events"]
    # since is inclusive, until exclusive.
    middle = every[2]["created_at"]
    newer = events(client, owner, since=middle)["events"]
    older = events(client, owner, until=middle)["events"]
    assert len(newer) + len(older) == len(every)
    assert all(e["created_at"] >= middle for e in newer) and all(e["created_at"] < middle for e in older)
    future = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    assert events(client, owner, since=future)["total"] == 0
    first = events(client, owner, per_page=2, page=1)
    second = events(client, owner, per_page=2, page=2)
    assert first["total"] == len(every) and (first["page"], first["per_page"]) == (1, 2)
    assert [e["id"] for e in first["events"] + second["events"]] == [e["id"] for e in every[:4]]
    for query, field in [
        ({"action": "issue.created"}, "action"),
        ({"actor_id": "nope"}, "actor_id"),
        ({"since": "ontem"}, "since"),
        ({"since": future, "until": middle}, "until"),
        ({"format": "xml"}, "format"),
    ]:
        response = client.get(log_url(owner), query_string=query, headers=owner.headers)
        body = assert_error(response, 400, "VALIDATION_ERROR")
        assert [d["field"] for d in body["details"]] == [field], query


def test_csv_export_is_itself_recorded(client, org):
    _root, owner = org
    make_project(client, owner, key="CSV", name='=HYPERLINK("x")')
    response = client.get(log_url(owner), query_string={"format": "csv"}, headers=owner.headers)
    assert response.status_code == 200
    assert response.mimetype == "text/csv"
    assert "attachment" in response.headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert [row["action"] for row in rows] == ["project.created", "plan.changed", "organization.created"]
    project_row = rows[0]
    # A cell that would start a spreadsheet formula is kept as text.
    assert project_row["target_name"] == '\'=HYPERLINK("x")'
    assert project_row["actor_id"] == owner.user_id and project_row["actor_name"] == "Olga Dona"
    assert '"key": "CSV"' in project_row["details"]
    filtered = client.get(
        log_url(owner), query_string={"format": "csv", "action": "plan.changed"}, headers=owner.headers
    )
    assert [row["action"] for row in csv.DictReader(io.StringIO(filtered.get_data(as_text=True)))] == [
        "plan.changed"
    ]
    exports = events(client, owner, action="audit_log.exported")["events"]
    assert len(exports) == 2
    assert exports[0]["details"] == {"filters": {"action": "plan.changed"}}
    assert exports[1]["details"] == {"filters": {}}


def test_only_owners_and_admins_read_and_other_organizations_see_nothing(client, org):
    _root, owner = org
    admin, member, viewer = register(client), register(client), register(client)
    add_member(client, owner, admin, "admin")
    add_member(client, owner, member, "member")
    add_member(client, owner, viewer, "viewer")
    assert events(client, owner, who=admin)["total"] > 0
    for who in (member, viewer):
        for query in ({}, {"format": "csv"}):
            assert_error(
                client.get(log_url(owner), query_string=query, headers=who.headers), 403, "FORBIDDEN"
            )
    stranger = register(client)
    for query in ({}, {"format": "csv"}):
        assert_error(
            client.get(log_url(owner), query_string=query, headers=stranger.headers), 404, "NOT_FOUND"
        )
    assert_error(client.get(log_url(owner)), 401, "UNAUTHORIZED")


def test_each_organization_sees_only_its_own_events(client, org):
    root, owner = org
    other = register(client)
    on_plan(client, root, other, "enterprise")
    make_project(client, other, key="OTH", name="Outra")
    make_project(client, owner, key="MINE", name="Minha")
    mine = [e["target"]["name"] for e in events(client, owner, action="project.created")["events"]]
    theirs = [e["target"]["name"] for e in events(client, other, action="project.created")["events"]]
    assert (mine, theirs) == (["Minha"], ["Outra"])


def test_without_the_plan_feature_402_names_it(client):
    owner = register(client)
    make_project(client, owner)
    for query in ({}, {"format": "csv"}):
        body = assert_error(
            client.get(log_url(owner), query_string=query, headers=owner.headers), 402, "PLAN_LIMIT_REACHED"
        )
        assert body["details"] == {"feature": "audit_log", "plan": "free", "available_in": ["enterprise"]}
    # A member who is not a manager hears 403 first, whatever the plan.
    member = register(client)
    add_member(client, owner, member)
    assert_error(client.get(log_url(owner), headers=member.headers), 403, "FORBIDDEN")
    # Events were recorded all along: moving to a plan with the log shows them.
    root = superadmin(client)
    on_plan(client, root, owner, "enterprise")
    assert actions(client, owner)[:3] == ["organization.created", "project.created", "member.invited"]
