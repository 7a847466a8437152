"""Issues: create with defaults, keys, every list filter and sort, read, patch and delete."""

from __future__ import annotations

import pytest

from tests.tracker.support import (
    add_member,
    assert_error,
    issues_url,
    make_issue,
    make_label,
    make_project,
    project_url,
    register,
    statuses,
)


@pytest.fixture
def setup(client):
    tenant = register(client)
    project = make_project(client, tenant, key="WEB")
    return tenant, project


def _keys(response) -> list[str]:
    assert response.status_code == 200, response.get_json()
    return [i["key"] for i in response.get_json()["issues"]]


def test_create_with_only_a_title_uses_the_defaults(client, setup):
    tenant, project = setup
    issue = make_issue(client, tenant, project, title="Checkout quebra no Safari")
    assert issue["key"] == "WEB-1"
    assert issue["type"] == "task" and issue["priority"] == "none"
    assert issue["status"]["category"] == "todo" and issue["status"]["name"] == "Todo"
    assert issue["labels"] == [] and issue["assignee"] is None and issue["parent_id"] is None
    assert issue["children_count"] == 0
    assert issue["created_by"] == {"id": tenant.user_id, "name": issue["created_by"]["name"]}
    assert issue["created_at"] == issue["updated_at"]


def test_default_status_is_the_first_todo_by_position(client, setup):
    tenant, project = setup
    url = project_url(tenant, project) + "/statuses"
    ready = client.post(
        url,
        json={"name": "Ready", "color": "#123456", "category": "todo", "position": 0},
        headers=tenant.headers,
    ).get_json()
    assert make_issue(client, tenant, project)["status"]["id"] == ready["id"]


def test_create_with_every_field(client, setup):
    tenant, project = setup
    member = register(client)
    add_member(client, tenant, member)
    label = make_label(client, tenant, project, "bug")
    progress = statuses(client, tenant, project)["in_progress"]
    parent = make_issue(client, tenant, project, type="epic")
    issue = make_issue(
        client,
        tenant,
        project,
        title="Corrigir cálculo de frete",
        description="**Markdown** body",
        type="bug",
        priority="urgent",
        status_id=progress["id"],
        assignee_id=member.user_id,
        label_ids=[label["id"]],
        parent_id=parent["id"],
        start_date="2026-11-01",
        due_date="2026-11-30",
        estimate=5,
    )
    assert issue["key"] == "WEB-2"
    assert issue["status"] == {k: progress[k] for k in ("id", "name", "color", "category")}
    assert issue["assignee"]["id"] == member.user_id and "avatar_url" in issue["assignee"]
    assert issue["labels"] == [label]
    assert (issue["parent_id"], issue["start_date"], issue["due_date"], issue["estimate"]) == (
        parent["id"],
        "2026-11-01",
        "2026-11-30",
        5,
    )
    assert (issue["type"], issue["priority"], issue["description"]) == ("bug", "urgent", "**Markdown** body")


def test_keys_are_per_project_and_never_reused(client, setup):
    tenant, project = setup
    other = make_project(client, tenant, key="APP", name="App")
    assert [make_issue(client, tenant, project)["key"] for _ in range(3)] == ["WEB-1", "WEB-2", "WEB-3"]
    assert make_issue(client, tenant, other)["key"] == "APP-1"
    assert client.delete(issues_url(tenant, project) + "/WEB-3", headers=tenant.headers).status_code == 204
    assert make_issue(client, tenant, project)["key"] == "WEB-4"


def test_create_refuses_invalid_input_with_details(client, setup):
    tenant, project = setup
    url = issues_url(tenant, project)
    cases = [
        ({}, "title"),
        ({"title": ""}, "title"),
        ({"title": "x" * 501}, "title"),
        ({"title": "t", "type": "chore"}, "type"),
        ({"title": "t", "priority": "critical"}, "priority"),
        ({"title": "t", "estimate": -1}, "estimate"),
        ({"title": "t", "estimate": "lots"}, "estimate"),
        ({"title": "t", "due_date": "30/11/2026"}, "due_date"),
        ({"title": "t", "status_id": "not-a-uuid"}, "status_id"),
        ({"title": "t", "label_ids": "abc"}, "label_ids"),
        ({"title": "t", "colour": "red"}, "colour"),
        ({"title": "t", "start_date": "2026-12-01", "due_date": "2026-11-01"}, "due_date"),
    ]
    for body, field in cases:
        response = client.post(url, json=body, headers=tenant.headers)
        details = assert_error(response, 400, "VALIDATION_ERROR")["details"]
        assert field in {d["field"].split(".")[0] for d in details}, (body, details)


def test_references_must_belong_to_the_project_and_organization(client, setup):
    tenant, project = setup
    other_project = make_project(client, tenant, key="APP", name="App")
    foreign_status = statuses(client, tenant, other_project)["todo"]
    foreign_label = make_label(client, tenant, other_project, "elsewhere")
    foreign_parent = make_issue(client, tenant, other_project)
    outsider = register(client)
    url = issues_url(tenant, project)
    cases = [
        ({"status_id": foreign_status["id"]}, "status_id"),
        ({"label_ids": [foreign_label["id"]]}, "label_ids"),
        ({"parent_id": foreign_parent["id"]}, "parent_id"),
        ({"assignee_id": outsider.user_id}, "assignee_id"),
        ({"parent_id": "00000000-0000-0000-0000-000000000000"}, "parent_id"),
    ]
    for extra, field in cases:
        response = client.post(url, json={"title": "t", **extra}, headers=tenant.headers)
        details = assert_error(response, 400, "VALIDATION_ERROR")["details"]
        assert [d["field"] for d in details] == [field]
    # Nothing was created by the refused requests: the next key is still 1 after APP's.
    assert make_issue(client, tenant, project)["key"] == "WEB-1"


def test_list_filters(client, setup):
    tenant, project = setup
    member = register(client)
    add_member(client, tenant, member)
    st = statuses(client, tenant, project)
    bug_label = make_label(client, tenant, project, "bug")
    ui_label = make_label(client, tenant, project, "ui")
    epic = make_issue(client, tenant, project, title="Epic", type="epic")  # WEB-1
    make_issue(
        client,
        tenant,
        project,
        title="Login bug",
        type="bug",
        priority="high",
        label_ids=[bug_label["id"]],
        assignee_id=member.user_id,
    )  # WEB-2
    make_issue(
        client,
        tenant,
        project,
        title="Button colour",
        priority="low",
        label_ids=[ui_label["id"]],
        status_id=st["done"]["id"],
        parent_id=epic["id"],
    )  # WEB-3
    make_issue(
        client,
        tenant,
        project,
        title="LOGIN page copy",
        priority="urgent",
        status_id=st["in_progress"]["id"],
        parent_id=epic["id"],
    )  # WEB-4
    url = issues_url(tenant, project)
    h = tenant.headers

    def keys(query):
        return sorted(_keys(client.get(url, query_string=query, headers=h)))

    assert keys({"status_id": st["done"]["id"]}) == ["WEB-3"]
    assert keys([("status_id", st["done"]["id"]), ("status_id", st["in_progress"]["id"])]) == [
        "WEB-3",
        "WEB-4",
    ]
    assert keys({"priority": "high"}) == ["WEB-2"]
    assert keys([("priority", "high"), ("priority", "urgent")]) == ["WEB-2", "WEB-4"]
    assert keys({"type": "bug"}) == ["WEB-2"]
    assert keys({"assignee_id": member.user_id}) == ["WEB-2"]
    assert keys({"label_id": bug_label["id"]}) == ["WEB-2"]
    assert keys([("label_id", bug_label["id"]), ("label_id", ui_label["id"])]) == ["WEB-2", "WEB-3"]
    assert keys({"parent_id": epic["id"]}) == ["WEB-3", "WEB-4"]
    assert keys({"q": "login"}) == ["WEB-2", "WEB-4"]
    assert keys({"q": "LOGIN", "priority": "urgent"}) == ["WEB-4"]
    assert keys({"q": "%"}) == []
    assert keys({"q": "nothing like this"}) == []


def test_list_refuses_bad_query_values(client, setup):
    tenant, project = setup
    url = issues_url(tenant, project)
    for query, field in [
        ({"priority": "critical"}, "priority"),
        ({"type": "chore"}, "type"),
        ({"status_id": "x"}, "status_id"),
        ({"order_by": "title"}, "order_by"),
        ({"order": "up"}, "order"),
        ({"page": 0}, "page"),
        ({"per_page": 0}, "per_page"),
        ({"page": "two"}, "page"),
    ]:
        details = assert_error(
            client.get(url, query_string=query, headers=tenant.headers), 400, "VALIDATION_ERROR"
        )["details"]
        assert details[0]["field"].split(".")[0] == field


def test_order_by_priority_follows_urgency(client, setup):
    tenant, project = setup
    for priority in ("low", "urgent", "none", "medium", "high"):
        make_issue(client, tenant, project, title=priority, priority=priority)
    url = issues_url(tenant, project)
    titles = [
        i["title"]
        for i in client.get(url, query_string={"order_by": "priority"}, headers=tenant.headers).get_json()[
            "issues"
        ]
    ]
    assert titles == ["urgent", "high", "medium", "low", "none"]
    titles = [
        i["title"]
        for i in client.get(
            url, query_string={"order_by": "priority", "order": "asc"}, headers=tenant.headers
        ).get_json()["issues"]
    ]
    assert titles == ["none", "low", "medium", "high", "urgent"]


def test_order_by_created_updated_and_due_date(client, setup):
    tenant, project = setup
    make_issue(client, tenant, project, due_date="2026-12-10")  # WEB-1
    make_issue(client, tenant, project)  # WEB-2, no due date
    make_issue(client, tenant, project, due_date="2026-12-01")  # WEB-3
    url = issues_url(tenant, project)
    h = tenant.headers
    assert _keys(client.get(url, headers=h)) == ["WEB-3", "WEB-2", "WEB-1"]
    assert _keys(client.get(url, query_string={"order": "asc"}, headers=h)) == ["WEB-1", "WEB-2", "WEB-3"]
    assert _keys(client.get(url, query_string={"order_by": "due_date", "order": "asc"}, headers=h)) == [
        "WEB-3",
        "WEB-1",
        "WEB-2",
    ]
    assert _keys(client.get(url, query_string={"order_by": "due_date"}, headers=h)) == [
        "WEB-1",
        "WEB-3",
        "WEB-2",
    ]
    client.patch(url + "/WEB-1", json={"title": "touched"}, headers=h)
    assert _keys(client.get(url, query_string={"order_by": "updated_at"}, headers=h))[0] == "WEB-1"


def test_pagination_and_total(client, setup):
    tenant, project = setup
    for _ in range(7):
        make_issue(client, tenant, project)
    url = issues_url(tenant, project)
    h = tenant.headers
    page = client.get(url, query_string={"per_page": 3, "page": 2, "order": "asc"}, headers=h).get_json()
    assert (page["total"], page["page"], page["per_page"]) == (7, 2, 3)
    assert [i["key"] for i in page["issues"]] == ["WEB-4", "WEB-5", "WEB-6"]
    last = client.get(url, query_string={"per_page": 3, "page": 3}, headers=h).get_json()
    assert len(last["issues"]) == 1 and last["total"] == 7
    beyond = client.get(url, query_string={"per_page": 3, "page": 9}, headers=h).get_json()
    assert beyond["issues"] == [] and beyond["total"] == 7
    default = client.get(url, headers=h).get_json()
    assert default["per_page"] == 50 and default["page"] == 1
    clamped = client.get(url, query_string={"per_page": 1000}, headers=h).get_json()
    assert clamped["per_page"] == 100


def test_per_page_caps_the_page_at_100(client, setup):
    tenant, project = setup
    url = issues_url(tenant, project)
    for n in range(105):
        client.post(url, json={"title": f"bulk {n}"}, headers=tenant.headers)
    body = client.get(url, query_string={"per_page": 500}, headers=tenant.headers).get_json()
    assert len(body["issues"]) == 100 and body["total"] == 105


def test_read_by_key_with_relations_and_children(client, setup):
    tenant, project = setup
    parent = make_issue(client, tenant, project, title="Parent")
    child = make_issue(client, tenant, project, title="Child", parent_id=parent["id"])
    other = make_issue(client, tenant, project, title="Other")
    url = issues_url(tenant, project)
    client.post(
        f"{url}/{parent['key']}/relations",
        json={"type": "blocks", "related_issue_id": other["id"]},
        headers=tenant.headers,
    )
    body = client.get(f"{url}/{parent['key']}", headers=tenant.headers).get_json()
    assert body["children"] == [{"id": child["id"], "key": child["key"], "title": "Child"}]
    assert body["children_count"] == 1
    assert [(r["type"], r["issue"]) for r in body["relations"]] == [
        ("blocks", {"id": other["id"], "key": other["key"], "title": "Other"})
    ]
    assert "id" in body["relations"][0]
    listed = client.get(url, headers=tenant.headers)
    assert {i["key"]: i["children_count"] for i in listed.get_json()["issues"]}[parent["key"]] == 1
    # Keys are matched case-insensitively on the prefix; unknown or malformed keys are 404.
    assert client.get(f"{url}/web-1", headers=tenant.headers).status_code == 200
    for key in ("WEB-99", "APP-1", "WEB", "WEB-0", "1"):
        assert_error(client.get(f"{url}/{key}", headers=tenant.headers), 404, "NOT_FOUND")


def test_patch_any_subset(client, setup):
    tenant, project = setup
    member = register(client)
    add_member(client, tenant, member)
    label_a = make_label(client, tenant, project, "a")
    label_b = make_label(client, tenant, project, "b")
    done = statuses(client, tenant, project)["done"]
    issue = make_issue(
        client, tenant, project, title="Old", label_ids=[label_a["id"]], due_date="2026-12-01", estimate=3
    )
    url = issues_url(tenant, project) + "/" + issue["key"]
    h = tenant.headers

    response = client.patch(
        url,
        json={"title": "New", "status_id": done["id"], "priority": "high", "assignee_id": member.user_id},
        headers=h,
    )
    body = response.get_json()
    assert response.status_code == 200
    assert (body["title"], body["status"]["id"], body["priority"], body["assignee"]["id"]) == (
        "New",
        done["id"],
        "high",
        member.user_id,
    )
    assert body["labels"] == [label_a] and body["due_date"] == "2026-12-01" and body["estimate"] == 3
    assert body["updated_at"] > issue["updated_at"]
    assert "relations" in body and "children" in body

    body = client.patch(
        url,
        json={"label_ids": [label_b["id"]], "due_date": None, "estimate": None, "assignee_id": None},
        headers=h,
    ).get_json()
    assert body["labels"] == [label_b] and body["due_date"] is None and body["estimate"] is None
    assert body["assignee"] is None

    for bad, field in [
        ({"title": None}, "title"),
        ({"priority": "p0"}, "priority"),
        ({"status_id": None}, "status_id"),
        ({"key": "WEB-9"}, "key"),
        ({"assignee_id": "00000000-0000-0000-0000-000000000001"}, "assignee_id"),
        ({"start_date": "2027-01-01", "due_date": "2026-01-01"}, "due_date"),
    ]:
        details = assert_error(client.patch(url, json=bad, headers=h), 400, "VALIDATION_ERROR")["details"]
        assert details[0]["field"] == field, bad
    assert client.get(url, headers=h).get_json()["title"] == "New"


def test_parent_must_not_create_a_cycle(client, setup):
    tenant, project = setup
    a = make_issue(client, tenant, project)
    b = make_issue(client, tenant, project, parent_id=a["id"])
    c = make_issue(client, tenant, project, parent_id=b["id"])
    url = issues_url(tenant, project)
    for parent in (a, c):
        response = client.patch(f"{url}/{a['key']}", json={"parent_id": parent["id"]}, headers=tenant.headers)
        assert assert_error(response, 400, "VALIDATION_ERROR")["details"][0]["field"] == "parent_id"
    moved = client.patch(f"{url}/{c['key']}", json={"parent_id": a["id"]}, headers=tenant.headers)
    assert moved.status_code == 200 and moved.get_json()["parent_id"] == a["id"]
    detached = client.patch(f"{url}/{c['key']}", json={"parent_id": None}, headers=tenant.headers)
    assert detached.get_json()["parent_id"] is None


def test_delete_removes_the_whole_sub_tree(client, setup):
    tenant, project = setup
    root = make_issue(client, tenant, project)  # WEB-1
    child = make_issue(client, tenant, project, parent_id=root["id"])  # WEB-2
    make_issue(client, tenant, project, parent_id=child["id"])  # WEB-3
    keep = make_issue(client, tenant, project)  # WEB-4
    url = issues_url(tenant, project)
    client.post(
        f"{url}/WEB-3/relations",
        json={"type": "relates_to", "related_issue_id": keep["id"]},
        headers=tenant.headers,
    )
    response = client.delete(f"{url}/WEB-1", headers=tenant.headers)
    assert response.status_code == 204 and response.data == b""
    for key in ("WEB-1", "WEB-2", "WEB-3"):
        assert_error(client.get(f"{url}/{key}", headers=tenant.headers), 404, "NOT_FOUND")
    remaining = client.get(f"{url}/WEB-4", headers=tenant.headers).get_json()
    assert remaining["relations"] == []
    assert client.get(url, headers=tenant.headers).get_json()["total"] == 1
    assert_error(client.delete(f"{url}/WEB-1", headers=tenant.headers), 404, "NOT_FOUND")


def test_a_project_in_another_workspace_of_the_same_organization_is_not_found_under_this_slug(client, setup):
    tenant, project = setup
    client.post(
        "/tracker/api/v1/workspaces",
        json={"organization_id": tenant.org_id, "name": "Second"},
        headers=tenant.headers,
    )
    url = f"/tracker/api/v1/workspaces/second/projects/{project['id']}/issues"
    assert_error(client.get(url, headers=tenant.headers), 404, "NOT_FOUND")


def test_totals_count_each_matching_issue_once(client, setup):
    tenant, project = setup
    red = make_label(client, tenant, project, "red")
    blue = make_label(client, tenant, project, "blue")
    other_project = make_project(client, tenant, key="APP", name="App")
    foreign = make_label(client, tenant, other_project, "red")
    make_issue(client, tenant, other_project, label_ids=[foreign["id"]])
    make_issue(client, tenant, project, label_ids=[red["id"], blue["id"]])
    make_issue(client, tenant, project, label_ids=[blue["id"]])
    make_issue(client, tenant, project)
    url = issues_url(tenant, project)

    def total(query):
        response = client.get(url, query_string=query, headers=tenant.headers)
        assert response.status_code == 200
        body = response.get_json()
        assert len(body["issues"]) == body["total"]
        return body["total"]

    assert total({}) == 3
    assert total([("label_id", red["id"]), ("label_id", blue["id"])]) == 2
    assert total({"label_id": blue["id"]}) == 2
    assert total({"label_id": foreign["id"]}) == 0
    assert total({"label_id": red["id"], "priority": "none"}) == 1
    client.delete(f"{url}/WEB-1", headers=tenant.headers)
    assert total({}) == 2
    assert total({"label_id": red["id"]}) == 0


def test_hostile_text_is_bad_input_not_a_server_error(client, setup):
    tenant, project = setup
    url = issues_url(tenant, project)
    for body, field in [
        ({"title": "a\x00b"}, "title"),
        ({"title": "ok", "description": "\x00"}, "description"),
    ]:
        details = assert_error(client.post(url, json=body, headers=tenant.headers), 400, "VALIDATION_ERROR")[
            "details"
        ]
        assert details[0]["field"] == field
    assert_error(
        client.get(url, query_string={"q": "a\x00"}, headers=tenant.headers), 400, "VALIDATION_ERROR"
    )
    assert_error(client.get("/tracker/api/v1/workspaces/a%00b", headers=tenant.headers), 404, "NOT_FOUND")
    make_issue(client, tenant, project)
    # A path with a control character names nothing.
    assert_error(client.get(f"{url}/WEB-1%0A", headers=tenant.headers), 404, "NOT_FOUND")
    created = client.post(
        f"/tracker/api/v1/workspaces/{tenant.slug}/projects",
        json={"name": "Newline", "key": "NEW\n"},
        headers=tenant.headers,
    )
    assert_error(created, 400, "VALIDATION_ERROR")
    # Unicode titles round-trip and search finds them.
    make_issue(client, tenant, project, title="Promoção de calçados")
    found = client.get(url, query_string={"q": "calçados"}, headers=tenant.headers).get_json()
    assert [i["title"] for i in found["issues"]] == ["Promoção de calçados"]


def test_search_pages_and_totals(client, setup):
    tenant, project = setup
    for n in range(5):
        make_issue(client, tenant, project, title=f"Checkout step {n}")
    make_issue(client, tenant, project, title="Unrelated")
    url = issues_url(tenant, project)

    def page(number):
        query = {"q": "CHECKOUT", "per_page": 2, "page": number, "order": "asc"}
        return client.get(url, query_string=query, headers=tenant.headers).get_json()

    assert [i["title"] for i in page(1)["issues"]] == ["Checkout step 0", "Checkout step 1"]
    assert [i["title"] for i in page(3)["issues"]] == ["Checkout step 4"]
    assert page(3)["total"] == 5
    beyond = page(9)
    assert beyond["issues"] == [] and beyond["total"] == 5


def test_search_honours_every_sort(client, setup):
    tenant, project = setup
    make_issue(client, tenant, project, title="Fix login A", priority="low", due_date="2026-12-05")  # WEB-1
    make_issue(client, tenant, project, title="Fix login B", priority="urgent")  # WEB-2
    make_issue(
        client, tenant, project, title="Fix login C", priority="medium", due_date="2026-12-01"
    )  # WEB-3
    make_issue(client, tenant, project, title="Other", priority="urgent")  # WEB-4
    url = issues_url(tenant, project)

    def keys(**query):
        return _keys(client.get(url, query_string={"q": "login", **query}, headers=tenant.headers))

    assert keys() == ["WEB-3", "WEB-2", "WEB-1"]
    assert keys(order="asc") == ["WEB-1", "WEB-2", "WEB-3"]
    assert keys(order_by="priority") == ["WEB-2", "WEB-3", "WEB-1"]
    assert keys(order_by="due_date", order="asc") == ["WEB-3", "WEB-1", "WEB-2"]
    assert keys(order_by="due_date") == ["WEB-1", "WEB-3", "WEB-2"]
    client.patch(f"{url}/WEB-1", json={"estimate": 2}, headers=tenant.headers)
    assert keys(order_by="updated_at")[0] == "WEB-1"


def test_list_statement_built_once_per_shape_matches_the_one_built_each_time(client, setup, monkeypatch):
    """The page statement kept per filter shape (values as parameters) answers what the one
    built from ``_conditions`` for each request answers, for every filter, order and page."""
    from services.tracker import issue_reads

    tenant, project = setup
    member = register(client)
    add_member(client, tenant, member)
    st = statuses(client, tenant, project)
    bug = make_label(client, tenant, project, "bug")
    ui = make_label(client, tenant, project, "ui")
    epic = make_issue(client, tenant, project, title="Epic checkout", type="epic")
    for n, (priority, status, labels) in enumerate(
        [
            ("high", "done", [bug]),
            ("low", "in_progress", [ui, bug]),
            ("urgent", "todo", []),
            ("none", "done", [ui]),
        ]
    ):
        make_issue(
            client,
            tenant,
            project,
            title=f"Checkout step {n} login",
            priority=priority,
            status_id=st[status]["id"],
            label_ids=[label["id"] for label in labels],
            assignee_id=member.user_id if n % 2 else None,
            parent_id=epic["id"] if n < 2 else None,
            due_date=f"2026-12-0{n + 1}" if n != 2 else None,
        )
    url = issues_url(tenant, project)
    queries = [
        {},
        {"per_page": 2, "page": 2},
        [("status_id", st["done"]["id"]), ("status_id", st["todo"]["id"]), ("priority", "high")],
        [("priority", "low"), ("priority", "urgent"), ("type", "task"), ("type", "epic")],
        {"assignee_id": member.user_id, "order_by": "due_date", "order": "asc"},
        {"parent_id": epic["id"], "order_by": "rank"},
        [("label_id", bug["id"]), ("label_id", ui["id"]), ("order_by", "priority")],
        {"q": "checkout login", "order_by": "updated_at", "order": "asc"},
        {"q": "step", "label_id": ui["id"], "per_page": 1},
    ]
    kept = [client.get(url, query_string=q, headers=tenant.headers).get_json() for q in queries]
    monkeypatch.setattr(issue_reads, "_page_shape", lambda filters: None)
    built = [client.get(url, query_string=q, headers=tenant.headers).get_json() for q in queries]
    assert kept == built
    assert [len(page["issues"]) for page in kept] == [5, 2, 1, 2, 2, 2, 3, 4, 1]
