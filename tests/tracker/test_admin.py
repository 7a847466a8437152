"""Administration: superadmin only, statistics, users, organizations, workspaces, plans."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from extensions import db
from models.auth import User
from models.base import utcnow
from tests.tracker.support import (
    API,
    PASSWORD,
    add_member,
    assert_error,
    make_issue,
    make_project,
    register,
    statuses,
    superadmin,
)

ADMIN_ROUTES = [
    ("get", "/admin/stats", None),
    ("get", "/admin/users", None),
    ("patch", "/admin/users/{user_id}", {"banned": True}),
    ("get", "/admin/organizations", None),
    ("patch", "/admin/organizations/{org_id}", {"suspended": True}),
    ("get", "/admin/workspaces", None),
    ("patch", "/admin/workspaces/{workspace_id}", {"name": "x"}),
    ("get", "/admin/plans", None),
    ("post", "/admin/plans", {"id": "x"}),
    ("patch", "/admin/plans/free", {"price_brl": 1}),
]


def _workspace_id(client, tenant) -> str:
    return client.get(f"{API}/workspaces/{tenant.slug}", headers=tenant.headers).get_json()["id"]


@pytest.mark.parametrize(("method", "path", "body"), ADMIN_ROUTES)
def test_only_superadmins_reach_the_admin_area(client, method, path, body):
    user = register(client)
    url = API + path.format(
        user_id=user.user_id, org_id=user.org_id, workspace_id=_workspace_id(client, user)
    )
    assert_error(getattr(client, method)(url, json=body, headers=user.headers), 403, "FORBIDDEN")
    assert_error(getattr(client, method)(url, json=body), 401, "UNAUTHORIZED")


def test_stats_are_computed_from_the_data(client, app):
    root = superadmin(client)
    alice = register(client)
    bob = register(client)
    idle = register(client)
    project = make_project(client, alice)
    done = statuses(client, alice, project)["done"]
    cancelled = statuses(client, alice, project)["cancelled"]
    make_issue(client, alice, project, title="Ação", description="café")  # 6 + 5 bytes
    make_issue(client, alice, project, title="abc", status_id=done["id"])  # 3 bytes
    make_issue(client, alice, project, title="xy", status_id=cancelled["id"])  # 2 bytes
    make_project(client, bob, key="BOB")
    client.patch(f"{API}/admin/organizations/{bob.org_id}", json={"plan": "pro"}, headers=root.headers)
    with app.app_context():
        user = db.session.scalar(select(User).where(User.email == idle.email))
        user.last_seen_at = utcnow() - timedelta(days=31)
        db.session.commit()

    stats = client.get(f"{API}/admin/stats", headers=root.headers).get_json()
    assert stats["organizations"] == {"total": 4, "by_plan": {"free": 3, "pro": 1, "enterprise": 0}}
    assert stats["users"] == {"total": 4, "active_last_30d": 3}
    assert stats["workspaces"] == {"total": 4}
    assert stats["projects"] == {"total": 2}
    assert stats["issues"] == {"total": 3, "open": 1, "done": 1}
    assert stats["storage_used_bytes"] == 16


def test_users_list_search_and_pagination(client):
    root = superadmin(client)
    ana = register(client, name="Ana Lima", email="ana@lima.test")
    register(client, name="Bruno Costa", email="bruno@costa.test")
    add_member(client, root, ana)
    url = f"{API}/admin/users"
    body = client.get(url, headers=root.headers).get_json()
    assert body["total"] == 3 and len(body["users"]) == 3 and body["per_page"] == 50
    by_email = {u["email"]: u for u in body["users"]}
    assert by_email["ana@lima.test"]["organization_count"] == 2
    assert by_email["root@giro.test"]["superadmin"] is True
    assert set(by_email["ana@lima.test"]) >= {
        "id",
        "name",
        "email",
        "created_at",
        "superadmin",
        "banned",
        "organization_count",
    }
    assert [
        u["email"]
        for u in client.get(url, query_string={"q": "LIMA"}, headers=root.headers).get_json()["users"]
    ] == ["ana@lima.test"]
    assert [
        u["name"]
        for u in client.get(url, query_string={"q": "bruno"}, headers=root.headers).get_json()["users"]
    ] == ["Bruno Costa"]
    page = client.get(url, query_string={"per_page": 2, "page": 2}, headers=root.headers).get_json()
    assert (page["total"], len(page["users"]), page["page"]) == (3, 1, 2)
    assert client.get(url, query_string={"per_page": 999}, headers=root.headers).get_json()["per_page"] == 100
    assert_error(client.get(url, query_string={"page": -1}, headers=root.headers), 400, "VALIDATION_ERROR")


def test_ban_blocks_login_live_tokens_and_refresh(client):
    root = superadmin(client)
    user = register(client)
    response = client.patch(f"{API}/admin/users/{user.user_id}", json={"banned": True}, headers=root.headers)
    assert response.status_code == 200 and response.get_json()["banned"] is True
    assert_error(client.get(f"{API}/auth/me", headers=user.headers), 403, "USER_BANNED")
    login = client.post(f"{API}/auth/login", json={"email": user.email, "password": PASSWORD})
    assert_error(login, 403, "USER_BANNED")
    # Banning revoked the refresh tokens too, and refreshing says why.
    refresh = client.post(f"{API}/auth/refresh", json={"refresh_token": user.refresh_token})
    assert_error(refresh, 403, "USER_BANNED")

    client.patch(f"{API}/admin/users/{user.user_id}", json={"banned": False}, headers=root.headers)
    assert (
        client.post(f"{API}/auth/login", json={"email": user.email, "password": PASSWORD}).status_code == 200
    )


def test_grant_and_take_superadmin(client):
    root = superadmin(client)
    user = register(client)
    granted = client.patch(
        f"{API}/admin/users/{user.user_id}", json={"superadmin": True}, headers=root.headers
    )
    assert granted.get_json()["superadmin"] is True
    assert client.get(f"{API}/admin/stats", headers=user.headers).status_code == 200
    # The new superadmin may demote another, but not themselves.
    assert_error(
        client.patch(f"{API}/admin/users/{user.user_id}", json={"superadmin": False}, headers=user.headers),
        403,
        "FORBIDDEN",
    )
    assert_error(
        client.patch(f"{API}/admin/users/{user.user_id}", json={"banned": True}, headers=user.headers),
        403,
        "FORBIDDEN",
    )
    client.patch(f"{API}/admin/users/{user.user_id}", json={"superadmin": False}, headers=root.headers)
    assert_error(client.get(f"{API}/admin/stats", headers=user.headers), 403, "FORBIDDEN")


def test_user_patch_errors(client):
    root = superadmin(client)
    assert_error(
        client.patch(f"{API}/admin/users/{root.org_id}", json={"banned": True}, headers=root.headers),
        404,
        "NOT_FOUND",
    )
    assert_error(
        client.patch(f"{API}/admin/users/{root.user_id}", json={"banned": "maybe"}, headers=root.headers),
        400,
        "VALIDATION_ERROR",
    )
    # A body that only looks like a ban is invalid before it is a self-ban.
    for body in ({"banned": "yes"}, {"banned": 1}, {"superadmin": "false"}):
        response = client.patch(f"{API}/admin/users/{root.user_id}", json=body, headers=root.headers)
        assert_error(response, 400, "VALIDATION_ERROR")


def test_organizations_list_filter_and_patch(client):
    root = superadmin(client)
    shop = register(client, name="Sapataria Paulista")
    register(client, name="Moda Sul")
    make_issue(client, shop, make_project(client, shop))
    url = f"{API}/admin/organizations"
    body = client.get(url, headers=root.headers).get_json()
    assert body["total"] == 3
    row = next(o for o in body["organizations"] if o["id"] == shop.org_id)
    assert (row["plan"], row["member_count"], row["issue_count"], row["suspended"]) == ("free", 1, 1, False)
    assert set(row) >= {"id", "name", "slug", "plan", "member_count", "issue_count", "created_at"}

    patched = client.patch(f"{url}/{shop.org_id}", json={"plan": "pro"}, headers=root.headers)
    assert patched.status_code == 200 and patched.get_json()["plan"] == "pro"
    assert patched.get_json()["limits"]["members"] == 50
    assert [
        o["id"]
        for o in client.get(url, query_string={"plan": "pro"}, headers=root.headers).get_json()[
            "organizations"
        ]
    ] == [shop.org_id]
    assert [
        o["name"]
        for o in client.get(url, query_string={"q": "sul"}, headers=root.headers).get_json()["organizations"]
    ] == ["Moda Sul"]
    paged = client.get(url, query_string={"per_page": 1}, headers=root.headers).get_json()
    assert paged["total"] == 3 and len(paged["organizations"]) == 1

    unknown = client.patch(f"{url}/{shop.org_id}", json={"plan": "platinum"}, headers=root.headers)
    assert assert_error(unknown, 400, "VALIDATION_ERROR")["details"][0]["field"] == "plan"
    assert_error(
        client.patch(f"{url}/{shop.user_id}", json={"suspended": True}, headers=root.headers),
        404,
        "NOT_FOUND",
    )


def test_a_suspended_organization_answers_403_to_its_members(client):
    root = superadmin(client)
    owner = register(client)
    member = register(client)
    add_member(client, owner, member)
    project = make_project(client, owner)
    issue = make_issue(client, owner, project)
    client.patch(f"{API}/admin/organizations/{owner.org_id}", json={"suspended": True}, headers=root.headers)
    purl = f"{API}/workspaces/{owner.slug}/projects/{project['id']}"
    for who in (owner, member):
        for response in (
            client.get(f"{API}/workspaces/{owner.slug}", headers=who.headers),
            client.get(purl + "/issues", headers=who.headers),
            client.get(purl + f"/issues/{issue['key']}", headers=who.headers),
            client.post(purl + "/issues", json={"title": "x"}, headers=who.headers),
            client.get(f"{API}/organizations/{owner.org_id}/members", headers=who.headers),
        ):
            assert_error(response, 403, "ORGANIZATION_SUSPENDED")
    # Outsiders still cannot tell it exists.
    outsider = register(client)
    assert_error(client.get(f"{API}/workspaces/{owner.slug}", headers=outsider.headers), 404, "NOT_FOUND")
    # Their other organizations keep working.
    assert client.get(f"{API}/workspaces/{member.slug}", headers=member.headers).status_code == 200

    client.patch(f"{API}/admin/organizations/{owner.org_id}", json={"suspended": False}, headers=root.headers)
    assert client.get(purl + "/issues", headers=owner.headers).status_code == 200


def test_workspaces_list_and_patch(client):
    root = superadmin(client)
    owner = register(client, name="Calçados Norte")
    client.post(
        f"{API}/workspaces", json={"organization_id": owner.org_id, "name": "Outlet"}, headers=owner.headers
    )
    make_issue(client, owner, make_project(client, owner))
    url = f"{API}/admin/workspaces"
    body = client.get(url, headers=root.headers).get_json()
    assert body["total"] == 3
    mine = client.get(url, query_string={"organization_id": owner.org_id}, headers=root.headers).get_json()
    assert mine["total"] == 2
    default = next(w for w in mine["workspaces"] if w["slug"] == owner.slug)
    assert (default["project_count"], default["issue_count"]) == (1, 1)

    patched = client.patch(
        f"{url}/{default['id']}", json={"name": "Norte", "slug": "norte"}, headers=root.headers
    )
    assert patched.status_code == 200 and patched.get_json()["slug"] == "norte"
    assert client.get(f"{API}/workspaces/norte", headers=owner.headers).status_code == 200
    assert_error(
        client.patch(f"{url}/{default['id']}", json={"slug": "outlet"}, headers=root.headers), 409, "CONFLICT"
    )
    assert_error(
        client.patch(f"{url}/{owner.org_id}", json={"name": "x"}, headers=root.headers), 404, "NOT_FOUND"
    )
    assert_error(
        client.patch(f"{url}/{default['id']}", json={"plan": "x"}, headers=root.headers),
        400,
        "VALIDATION_ERROR",
    )


def test_plans_exist_on_a_fresh_install_and_can_be_created_and_patched(client):
    root = superadmin(client)
    url = f"{API}/admin/plans"
    plans = client.get(url, headers=root.headers).get_json()["plans"]
    assert [p["id"] for p in plans] == ["free", "pro", "enterprise"]
    assert set(plans[0]["limits"]) == {"members", "projects", "issues", "storage_bytes"}
    assert set(plans[0]["features"]) == {"semantic_search", "custom_fields", "sso", "audit_log"}

    body = {
        "id": "team",
        "name": "Team",
        "price_brl": 19,
        "limits": {"members": 10, "projects": 5, "issues": 500, "storage_bytes": 1000000},
        "features": {"sso": True},
    }
    created = client.post(url, json=body, headers=root.headers)
    assert created.status_code == 201
    assert created.get_json()["features"] == {
        "semantic_search": False,
        "custom_fields": False,
        "sso": True,
        "audit_log": False,
    }
    assert_error(client.post(url, json=body, headers=root.headers), 409, "CONFLICT")
    bad = client.post(
        url,
        json={"id": "Bad Id", "name": "", "price_brl": -1, "limits": {"members": 1}},
        headers=root.headers,
    )
    fields = {d["field"].split(".")[0] for d in assert_error(bad, 400, "VALIDATION_ERROR")["details"]}
    assert fields == {"id", "name", "price_brl", "limits"}

    patched = client.patch(
        f"{url}/team", json={"price_brl": 29, "limits": {"issues": 900}}, headers=root.headers
    )
    assert patched.status_code == 200
    assert patched.get_json()["price_brl"] == 29 and patched.get_json()["limits"]["issues"] == 900
    assert patched.get_json()["limits"]["members"] == 10
    assert_error(client.patch(f"{url}/nope", json={"price_brl": 1}, headers=root.headers), 404, "NOT_FOUND")
    assert_error(client.patch(f"{url}/a%00", json={"price_brl": 1}, headers=root.headers), 404, "NOT_FOUND")


def _tiny_plan(client, root, **limits):
    values = {"members": 2, "projects": 1, "issues": 2, "storage_bytes": 1000, **limits}
    response = client.post(
        f"{API}/admin/plans",
        json={"id": "tiny", "name": "Tiny", "price_brl": 0, "limits": values},
        headers=root.headers,
    )
    assert response.status_code == 201


def _assign(client, root, tenant, plan):
    response = client.patch(
        f"{API}/admin/organizations/{tenant.org_id}", json={"plan": plan}, headers=root.headers
    )
    assert response.status_code == 200


def test_issue_limit(client):
    root = superadmin(client)
    owner = register(client)
    _tiny_plan(client, root)
    _assign(client, root, owner, "tiny")
    project = make_project(client, owner)
    make_issue(client, owner, project)
    make_issue(client, owner, project)
    response = client.post(
        f"{API}/workspaces/{owner.slug}/projects/{project['id']}/issues",
        json={"title": "3rd"},
        headers=owner.headers,
    )
    body = assert_error(response, 402, "PLAN_LIMIT_REACHED")
    assert (body["resource"], body["limit"], body["current"]) == ("issues", 2, 2)


def test_project_limit(client):
    root = superadmin(client)
    owner = register(client)
    _tiny_plan(client, root)
    _assign(client, root, owner, "tiny")
    make_project(client, owner, key="ONE")
    response = client.post(
        f"{API}/workspaces/{owner.slug}/projects", json={"name": "Two", "key": "TWO"}, headers=owner.headers
    )
    body = assert_error(response, 402, "PLAN_LIMIT_REACHED")
    assert (body["resource"], body["limit"], body["current"]) == ("projects", 1, 1)


def test_member_limit_on_invitation_and_acceptance(client):
    root = superadmin(client)
    owner = register(client)
    first = register(client)
    second = register(client)
    _tiny_plan(client, root)
    _assign(client, root, owner, "tiny")
    url = f"{API}/organizations/{owner.org_id}/invitations"
    one = client.post(url, json={"email": first.email}, headers=owner.headers).get_json()
    two = client.post(url, json={"email": second.email}, headers=owner.headers).get_json()
    assert client.post(f"{API}/invitations/{one['id']}/accept", headers=first.headers).status_code == 201
    body = assert_error(
        client.post(f"{API}/invitations/{two['id']}/accept", headers=second.headers),
        402,
        "PLAN_LIMIT_REACHED",
    )
    assert (body["resource"], body["limit"], body["current"]) == ("members", 2, 2)
    body = assert_error(
        client.post(url, json={"email": "late@tracker.test"}, headers=owner.headers),
        402,
        "PLAN_LIMIT_REACHED",
    )
    assert body["resource"] == "members"


def test_storage_limit_counts_title_and_description_bytes(client):
    root = superadmin(client)
    owner = register(client)
    _tiny_plan(client, root, storage_bytes=20, issues=100)
    _assign(client, root, owner, "tiny")
    project = make_project(client, owner)
    url = f"{API}/workspaces/{owner.slug}/projects/{project['id']}/issues"
    issue = make_issue(client, owner, project, title="ação", description="x" * 10)  # 6 + 10 = 16 bytes
    body = assert_error(
        client.post(url, json={"title": "123456"}, headers=owner.headers), 402, "PLAN_LIMIT_REACHED"
    )
    assert (body["resource"], body["limit"], body["current"]) == ("storage_bytes", 20, 16)
    assert client.post(url, json={"title": "1234"}, headers=owner.headers).status_code == 201
    grow = client.patch(f"{url}/{issue['key']}", json={"description": "x" * 11}, headers=owner.headers)
    assert_error(grow, 402, "PLAN_LIMIT_REACHED")
    shrink = client.patch(f"{url}/{issue['key']}", json={"description": "x"}, headers=owner.headers)
    assert shrink.status_code == 200


def test_storage_in_use_follows_edits_and_deletes(client):
    root = superadmin(client)
    owner = register(client)
    _tiny_plan(client, root, storage_bytes=12, issues=100, projects=5)
    _assign(client, root, owner, "tiny")
    first, second = make_project(client, owner, key="ONE"), make_project(client, owner, key="TWO")
    one_url = f"{API}/workspaces/{owner.slug}/projects/{first['id']}/issues"
    two_url = f"{API}/workspaces/{owner.slug}/projects/{second['id']}/issues"
    parent = make_issue(client, owner, first, title="ação", description="x" * 5)  # 11 bytes
    assert_error(client.post(two_url, json={"title": "ab"}, headers=owner.headers), 402, "PLAN_LIMIT_REACHED")
    shrink = client.patch(f"{one_url}/{parent['key']}", json={"description": None}, headers=owner.headers)
    assert shrink.status_code == 200  # 6 bytes
    make_issue(client, owner, first, title="abc", parent_id=parent["id"])  # 9
    make_issue(client, owner, second, title="zz")  # 11

    def current():
        body = assert_error(
            client.post(two_url, json={"title": "x" * 12}, headers=owner.headers), 402, "PLAN_LIMIT_REACHED"
        )
        stats = client.get(f"{API}/admin/stats", headers=root.headers).get_json()
        # The counter the limit reads agrees with the bytes computed from the issues.
        assert body["current"] == stats["storage_used_bytes"]
        return body["current"]

    assert current() == 11
    # Deleting the parent takes its sub-issue's bytes too.
    assert client.delete(f"{one_url}/{parent['key']}", headers=owner.headers).status_code == 204
    assert current() == 2
    delete_two = client.delete(
        f"{API}/workspaces/{owner.slug}/projects/{second['id']}", headers=owner.headers
    )
    assert delete_two.status_code == 204
    # A deleted project's bytes are free again: 12 bytes fit exactly.
    assert client.post(one_url, json={"title": "x" * 12}, headers=owner.headers).status_code == 201


def test_a_plan_change_is_not_retroactive(client):
    root = superadmin(client)
    early = register(client)
    late = register(client)
    _tiny_plan(client, root, issues=1)
    _assign(client, root, early, "tiny")
    client.patch(f"{API}/admin/plans/tiny", json={"limits": {"issues": 3}}, headers=root.headers)
    _assign(client, root, late, "tiny")

    early_project = make_project(client, early)
    make_issue(client, early, early_project)
    response = client.post(
        f"{API}/workspaces/{early.slug}/projects/{early_project['id']}/issues",
        json={"title": "2nd"},
        headers=early.headers,
    )
    assert assert_error(response, 402, "PLAN_LIMIT_REACHED")["limit"] == 1

    late_project = make_project(client, late)
    for _ in range(3):
        make_issue(client, late, late_project)
    orgs = client.get(
        f"{API}/admin/organizations", query_string={"plan": "tiny"}, headers=root.headers
    ).get_json()
    assert {o["id"]: o["limits"]["issues"] for o in orgs["organizations"]} == {
        early.org_id: 1,
        late.org_id: 3,
    }

    # Assigning the plan again takes its current limits.
    _assign(client, root, early, "tiny")
    assert (
        client.post(
            f"{API}/workspaces/{early.slug}/projects/{early_project['id']}/issues",
            json={"title": "2nd"},
            headers=early.headers,
        ).status_code
        == 201
    )


def test_the_free_plan_is_assigned_on_registration(client):
    root = superadmin(client)
    tenant = register(client)
    orgs = client.get(f"{API}/admin/organizations", query_string={"q": tenant.slug}, headers=root.headers)
    row = next(o for o in orgs.get_json()["organizations"] if o["id"] == tenant.org_id)
    assert row["plan"] == "free" and row["limits"]["projects"] == 3
