"""Workspaces, projects, statuses, labels, members and invitations, with the role rules."""

from __future__ import annotations

import pytest

from tests.tracker.support import (
    API,
    add_member,
    assert_error,
    make_issue,
    make_label,
    make_project,
    project_url,
    register,
    statuses,
)


def test_a_fresh_registration_reaches_an_issue_with_the_api_alone(client):
    tenant = register(client)
    project = make_project(client, tenant, key="WEB", name="Website")
    assert set(project) >= {"id", "name", "key", "description", "workspace_id", "created_at"}
    issue = make_issue(client, tenant, project, title="First")
    assert issue["key"] == "WEB-1"


def test_workspaces_create_read_update(client):
    tenant = register(client)
    created = client.post(
        f"{API}/workspaces",
        json={"organization_id": tenant.org_id, "name": "Loja Centro"},
        headers=tenant.headers,
    )
    assert created.status_code == 201
    workspace = created.get_json()
    assert workspace["slug"] == "loja-centro" and workspace["organization_id"] == tenant.org_id

    got = client.get(f"{API}/workspaces/loja-centro", headers=tenant.headers)
    assert got.get_json()["id"] == workspace["id"]
    listed = client.get(f"{API}/workspaces", headers=tenant.headers).get_json()["workspaces"]
    assert {w["slug"] for w in listed} == {tenant.slug, "loja-centro"}

    renamed = client.patch(
        f"{API}/workspaces/loja-centro", json={"name": "Centro", "slug": "centro"}, headers=tenant.headers
    )
    assert renamed.status_code == 200 and renamed.get_json()["slug"] == "centro"
    assert_error(client.get(f"{API}/workspaces/loja-centro", headers=tenant.headers), 404, "NOT_FOUND")

    taken = client.post(
        f"{API}/workspaces",
        json={"organization_id": tenant.org_id, "name": "X", "slug": tenant.slug},
        headers=tenant.headers,
    )
    assert_error(taken, 409, "CONFLICT")
    bad_slug = client.post(
        f"{API}/workspaces",
        json={"organization_id": tenant.org_id, "name": "X", "slug": "Bad Slug"},
        headers=tenant.headers,
    )
    assert assert_error(bad_slug, 400, "VALIDATION_ERROR")["details"][0]["field"] == "slug"


def test_project_key_rules(client):
    tenant = register(client)
    url = f"{API}/workspaces/{tenant.slug}/projects"
    for key in ("W", "web", "1WEB", "WEB-1", "ABCDEFGHIJK"):
        response = client.post(url, json={"name": "P", "key": key}, headers=tenant.headers)
        assert assert_error(response, 400, "VALIDATION_ERROR")["details"][0]["field"] == "key", key
    make_project(client, tenant, key="WEB")
    assert_error(
        client.post(url, json={"name": "Again", "key": "WEB"}, headers=tenant.headers), 409, "CONFLICT"
    )
    assert_error(client.post(url, json={"key": "APP"}, headers=tenant.headers), 400, "VALIDATION_ERROR")


def test_projects_list_read_update_delete(client):
    tenant = register(client)
    web = make_project(client, tenant, key="WEB")
    app_project = make_project(client, tenant, key="APP", name="App")
    listed = client.get(f"{API}/workspaces/{tenant.slug}/projects", headers=tenant.headers).get_json()[
        "projects"
    ]
    assert [p["key"] for p in listed] == ["WEB", "APP"]

    url = project_url(tenant, web)
    assert client.get(url, headers=tenant.headers).get_json()["name"] == "Website"
    updated = client.patch(url, json={"name": "Site", "description": "Loja online"}, headers=tenant.headers)
    assert updated.get_json()["name"] == "Site" and updated.get_json()["description"] == "Loja online"
    assert_error(client.patch(url, json={"key": "NEW"}, headers=tenant.headers), 400, "VALIDATION_ERROR")

    make_issue(client, tenant, web)
    assert client.delete(url, headers=tenant.headers).status_code == 204
    assert_error(client.get(url, headers=tenant.headers), 404, "NOT_FOUND")
    assert_error(client.get(url + "/issues/WEB-1", headers=tenant.headers), 404, "NOT_FOUND")
    assert client.get(project_url(tenant, app_project), headers=tenant.headers).status_code == 200


def test_a_new_project_gets_the_five_default_statuses(client):
    tenant = register(client)
    project = make_project(client, tenant)
    body = client.get(project_url(tenant, project) + "/statuses", headers=tenant.headers).get_json()
    assert [(s["name"], s["category"], s["position"]) for s in body["statuses"]] == [
        ("Backlog", "backlog", 0),
        ("Todo", "todo", 1),
        ("In Progress", "in_progress", 2),
        ("Done", "done", 3),
        ("Cancelled", "cancelled", 4),
    ]
    assert all(s["color"].startswith("#") and len(s["color"]) == 7 for s in body["statuses"])


def test_statuses_create_update_delete(client):
    tenant = register(client)
    project = make_project(client, tenant)
    url = project_url(tenant, project) + "/statuses"
    created = client.post(
        url, json={"name": "Review", "color": "#aabbcc", "category": "in_progress"}, headers=tenant.headers
    )
    assert created.status_code == 201
    review = created.get_json()
    assert review["position"] == 5

    bad = client.post(url, json={"name": "X", "color": "red", "category": "later"}, headers=tenant.headers)
    assert {d["field"] for d in assert_error(bad, 400, "VALIDATION_ERROR")["details"]} == {
        "color",
        "category",
    }

    moved = client.patch(
        f"{url}/{review['id']}", json={"position": 3, "name": "Code review"}, headers=tenant.headers
    )
    assert moved.get_json()["position"] == 3 and moved.get_json()["name"] == "Code review"

    make_issue(client, tenant, project, status_id=review["id"])
    assert_error(client.delete(f"{url}/{review['id']}", headers=tenant.headers), 409, "CONFLICT")
    backlog = statuses(client, tenant, project)["backlog"]
    assert client.delete(f"{url}/{backlog['id']}", headers=tenant.headers).status_code == 204
    assert "backlog" not in statuses(client, tenant, project)


def test_labels_create_list_delete(client):
    tenant = register(client)
    project = make_project(client, tenant)
    url = project_url(tenant, project) + "/labels"
    bug = make_label(client, tenant, project, "bug", "#ff0000")
    make_label(client, tenant, project, "api", "#00ff00")
    assert [label["name"] for label in client.get(url, headers=tenant.headers).get_json()["labels"]] == [
        "api",
        "bug",
    ]
    dup = client.post(url, json={"name": "bug", "color": "#000000"}, headers=tenant.headers)
    assert_error(dup, 409, "CONFLICT")
    assert_error(
        client.post(url, json={"name": "x", "color": "#12345"}, headers=tenant.headers),
        400,
        "VALIDATION_ERROR",
    )

    issue = make_issue(client, tenant, project, label_ids=[bug["id"]])
    assert client.delete(f"{url}/{bug['id']}", headers=tenant.headers).status_code == 204
    again = client.get(project_url(tenant, project) + f"/issues/{issue['key']}", headers=tenant.headers)
    assert again.get_json()["labels"] == []


def test_invitation_flow_adds_a_member(client):
    owner = register(client)
    guest = register(client)
    invited = client.post(
        f"{API}/organizations/{owner.org_id}/invitations",
        json={"email": guest.email.upper(), "role": "viewer"},
        headers=owner.headers,
    )
    assert invited.status_code == 201
    invitation = invited.get_json()
    assert invitation["email"] == guest.email and invitation["role"] == "viewer"

    pending = client.get(f"{API}/organizations/{owner.org_id}/invitations", headers=owner.headers).get_json()
    assert [i["id"] for i in pending["invitations"]] == [invitation["id"]]
    mine = client.get(f"{API}/invitations", headers=guest.headers).get_json()["invitations"]
    assert [i["organization"]["id"] for i in mine] == [owner.org_id]

    # Somebody else cannot accept it.
    stranger = register(client)
    accept_url = f"{API}/invitations/{invitation['id']}/accept"
    assert_error(client.post(accept_url, headers=stranger.headers), 404, "NOT_FOUND")

    accepted = client.post(accept_url, headers=guest.headers)
    assert accepted.status_code == 201 and accepted.get_json()["role"] == "viewer"
    assert_error(client.post(accept_url, headers=guest.headers), 404, "NOT_FOUND")

    me = client.get(f"{API}/auth/me", headers=guest.headers).get_json()
    assert {(o["id"], o["role"]) for o in me["organizations"]} == {
        (guest.org_id, "owner"),
        (owner.org_id, "viewer"),
    }
    members = client.get(f"{API}/organizations/{owner.org_id}/members", headers=guest.headers).get_json()
    assert {(m["user"]["email"], m["role"]) for m in members["members"]} == {
        (owner.email, "owner"),
        (guest.email, "viewer"),
    }
    # The new member sees the workspace.
    assert client.get(f"{API}/workspaces/{owner.slug}", headers=guest.headers).status_code == 200


def test_invitation_conflicts_and_revocation(client):
    owner = register(client)
    member = register(client)
    add_member(client, owner, member)
    url = f"{API}/organizations/{owner.org_id}/invitations"
    assert_error(client.post(url, json={"email": member.email}, headers=owner.headers), 409, "CONFLICT")
    first = client.post(url, json={"email": "new@tracker.test"}, headers=owner.headers)
    assert first.status_code == 201 and first.get_json()["role"] == "member"
    assert_error(client.post(url, json={"email": "new@tracker.test"}, headers=owner.headers), 409, "CONFLICT")
    assert_error(
        client.post(url, json={"email": "x@y.test", "role": "boss"}, headers=owner.headers),
        400,
        "VALIDATION_ERROR",
    )
    invitation_id = first.get_json()["id"]
    assert client.delete(f"{url}/{invitation_id}", headers=owner.headers).status_code == 204
    assert_error(client.delete(f"{url}/{invitation_id}", headers=owner.headers), 404, "NOT_FOUND")


@pytest.mark.parametrize("role", ["member", "viewer"])
def test_members_and_viewers_cannot_manage(client, role):
    owner = register(client)
    person = register(client)
    project = make_project(client, owner)
    add_member(client, owner, person, role)
    h = person.headers
    purl = project_url(owner, project)
    checks = [
        client.post(f"{API}/workspaces/{owner.slug}/projects", json={"name": "P", "key": "NEW"}, headers=h),
        client.patch(purl, json={"name": "Renamed"}, headers=h),
        client.delete(purl, headers=h),
        client.post(
            purl + "/statuses", json={"name": "S", "color": "#000000", "category": "todo"}, headers=h
        ),
        client.post(purl + "/labels", json={"name": "L", "color": "#000000"}, headers=h),
        client.post(f"{API}/organizations/{owner.org_id}/invitations", json={"email": "z@z.test"}, headers=h),
        client.get(f"{API}/organizations/{owner.org_id}/invitations", headers=h),
        client.patch(
            f"{API}/organizations/{owner.org_id}/members/{owner.user_id}", json={"role": "viewer"}, headers=h
        ),
        client.post(f"{API}/workspaces", json={"organization_id": owner.org_id, "name": "W"}, headers=h),
        client.patch(f"{API}/workspaces/{owner.slug}", json={"name": "W"}, headers=h),
    ]
    for response in checks:
        assert_error(response, 403, "FORBIDDEN")
    # Reading is allowed to every role.
    assert client.get(purl + "/statuses", headers=h).status_code == 200
    assert client.get(purl + "/labels", headers=h).status_code == 200
    assert client.get(purl + "/issues", headers=h).status_code == 200


def test_viewers_read_only_members_write_issues(client):
    owner = register(client)
    viewer = register(client)
    member = register(client)
    project = make_project(client, owner)
    add_member(client, owner, viewer, "viewer")
    add_member(client, owner, member, "member")
    issue = make_issue(client, owner, project)
    url = project_url(owner, project) + "/issues"

    assert_error(client.post(url, json={"title": "no"}, headers=viewer.headers), 403, "FORBIDDEN")
    assert_error(
        client.patch(f"{url}/{issue['key']}", json={"title": "no"}, headers=viewer.headers), 403, "FORBIDDEN"
    )
    assert_error(client.delete(f"{url}/{issue['key']}", headers=viewer.headers), 403, "FORBIDDEN")
    other = make_issue(client, owner, project)
    assert_error(
        client.post(
            f"{url}/{issue['key']}/relations",
            json={"type": "relates_to", "related_issue_id": other["id"]},
            headers=viewer.headers,
        ),
        403,
        "FORBIDDEN",
    )
    assert client.get(f"{url}/{issue['key']}", headers=viewer.headers).status_code == 200

    created = client.post(url, json={"title": "by member"}, headers=member.headers)
    assert created.status_code == 201
    assert created.get_json()["created_by"]["id"] == member.user_id
    assert (
        client.patch(f"{url}/{issue['key']}", json={"priority": "high"}, headers=member.headers).status_code
        == 200
    )


def test_admins_manage_but_only_owners_touch_the_owner_role(client):
    owner = register(client)
    admin = register(client)
    member = register(client)
    add_member(client, owner, admin, "admin")
    add_member(client, owner, member, "member")
    members_url = f"{API}/organizations/{owner.org_id}/members"

    # An admin manages projects and members...
    assert (
        client.post(
            f"{API}/workspaces/{owner.slug}/projects", json={"name": "P", "key": "ADM"}, headers=admin.headers
        ).status_code
        == 201
    )
    promoted = client.patch(f"{members_url}/{member.user_id}", json={"role": "viewer"}, headers=admin.headers)
    assert promoted.status_code == 200 and promoted.get_json()["role"] == "viewer"
    # ...but neither makes an owner nor touches one.
    assert_error(
        client.patch(f"{members_url}/{member.user_id}", json={"role": "owner"}, headers=admin.headers),
        403,
        "FORBIDDEN",
    )
    assert_error(
        client.patch(f"{members_url}/{owner.user_id}", json={"role": "member"}, headers=admin.headers),
        403,
        "FORBIDDEN",
    )
    assert_error(client.delete(f"{members_url}/{owner.user_id}", headers=admin.headers), 403, "FORBIDDEN")
    assert_error(
        client.patch(f"{members_url}/{member.user_id}", json={"role": "god"}, headers=owner.headers),
        400,
        "VALIDATION_ERROR",
    )


def test_the_last_owner_stays(client):
    owner = register(client)
    other = register(client)
    add_member(client, owner, other, "member")
    members_url = f"{API}/organizations/{owner.org_id}/members"
    assert_error(
        client.patch(f"{members_url}/{owner.user_id}", json={"role": "admin"}, headers=owner.headers),
        409,
        "CONFLICT",
    )
    assert_error(client.delete(f"{members_url}/{owner.user_id}", headers=owner.headers), 409, "CONFLICT")

    # With a second owner, the first may step down.
    assert (
        client.patch(
            f"{members_url}/{other.user_id}", json={"role": "owner"}, headers=owner.headers
        ).status_code
        == 200
    )
    assert (
        client.patch(
            f"{members_url}/{owner.user_id}", json={"role": "admin"}, headers=owner.headers
        ).status_code
        == 200
    )


def test_removing_and_leaving(client):
    owner = register(client)
    member = register(client)
    leaver = register(client)
    add_member(client, owner, member)
    add_member(client, owner, leaver)
    members_url = f"{API}/organizations/{owner.org_id}/members"
    assert_error(client.delete(f"{members_url}/{owner.user_id}", headers=member.headers), 403, "FORBIDDEN")
    assert client.delete(f"{members_url}/{leaver.user_id}", headers=leaver.headers).status_code == 204
    assert client.delete(f"{members_url}/{member.user_id}", headers=owner.headers).status_code == 204
    assert_error(client.delete(f"{members_url}/{member.user_id}", headers=owner.headers), 404, "NOT_FOUND")
    # Gone members see nothing of the organization any more.
    assert_error(client.get(f"{API}/workspaces/{owner.slug}", headers=member.headers), 404, "NOT_FOUND")
    listed = client.get(f"{API}/organizations", headers=owner.headers).get_json()["organizations"]
    assert [o["id"] for o in listed] == [owner.org_id]
