"""Custom fields: definitions per project, values on issues, the list filter and the plan gate."""

from __future__ import annotations

import pytest

from tests.tracker.custom_fields_support import fields_url, make_field, on_plan
from tests.tracker.support import (
    add_member,
    assert_error,
    issues_url,
    make_issue,
    make_project,
    project_url,
    register,
)


@pytest.fixture
def setup(client):
    """An owner on the pro plan with a project carrying one field of each type."""
    owner = register(client)
    on_plan(client, owner)
    project = make_project(client, owner)
    make_field(client, owner, project, name="Cliente afetado", type="text")
    make_field(client, owner, project, name="Pontos", type="number")
    make_field(client, owner, project, name="Data de entrega", type="date")
    make_field(client, owner, project, name="Canal", type="select", options=["loja", "site", "app"])
    make_field(
        client, owner, project, name="Regiões", type="multi_select", options=["sul", "sudeste", "norte"]
    )
    return owner, project


def _details(response) -> dict[str, str]:
    body = assert_error(response, 400, "VALIDATION_ERROR")
    return {detail["field"]: detail["message"] for detail in body["details"]}


def test_field_crud_and_slugs(client, setup):
    owner, project = setup
    listed = client.get(fields_url(owner, project), headers=owner.headers).get_json()["custom_fields"]
    assert [(f["slug"], f["type"]) for f in listed] == [
        ("cliente_afetado", "text"),
        ("pontos", "number"),
        ("data_de_entrega", "date"),
        ("canal", "select"),
        ("regioes", "multi_select"),
    ]
    canal = listed[3]
    assert canal["options"] == ["loja", "site", "app"] and canal["required"] is False
    renamed = client.patch(
        f"{fields_url(owner, project)}/{canal['id']}",
        json={"name": "Canal de venda", "required": True},
        headers=owner.headers,
    )
    assert renamed.status_code == 200
    assert renamed.get_json()["slug"] == "canal" and renamed.get_json()["name"] == "Canal de venda"
    assert renamed.get_json()["required"] is True
    # A second field whose name gives a taken slug.
    assert_error(
        client.post(
            fields_url(owner, project), json={"name": "canal", "type": "text"}, headers=owner.headers
        ),
        409,
        "CONFLICT",
    )
    deleted = client.delete(f"{fields_url(owner, project)}/{canal['id']}", headers=owner.headers)
    assert deleted.status_code == 204
    assert_error(
        client.delete(f"{fields_url(owner, project)}/{canal['id']}", headers=owner.headers), 404, "NOT_FOUND"
    )
    listed = client.get(fields_url(owner, project), headers=owner.headers).get_json()["custom_fields"]
    assert "canal" not in {f["slug"] for f in listed}


@pytest.mark.parametrize(
    "body, field",
    [
        ({"name": "X", "type": "select"}, "options"),
        ({"name": "X", "type": "select", "options": []}, "options"),
        ({"name": "X", "type": "select", "options": ["a", "a"]}, "options"),
        ({"name": "X", "type": "text", "options": ["a"]}, "options"),
        ({"name": "X", "type": "color"}, "type"),
        ({"name": "!!!", "type": "text"}, "name"),
        ({"type": "text"}, "name"),
        ({"name": "X", "type": "text", "slug": "x"}, "slug"),
    ],
)
def test_field_validation(client, setup, body, field):
    owner, project = setup
    assert field in _details(client.post(fields_url(owner, project), json=body, headers=owner.headers))


def test_roles_and_isolation(client, setup):
    owner, project = setup
    member, viewer, stranger = register(client), register(client), register(client)
    add_member(client, owner, member, "member")
    add_member(client, owner, viewer, "viewer")
    url = fields_url(owner, project)
    field_id = client.get(url, headers=owner.headers).get_json()["custom_fields"][0]["id"]
    for person in (member, viewer):
        assert client.get(url, headers=person.headers).status_code == 200
        assert_error(
            client.post(url, json={"name": "Y", "type": "text"}, headers=person.headers), 403, "FORBIDDEN"
        )
        assert_error(
            client.patch(f"{url}/{field_id}", json={"name": "Z"}, headers=person.headers), 403, "FORBIDDEN"
        )
        assert_error(client.delete(f"{url}/{field_id}", headers=person.headers), 403, "FORBIDDEN")
    # Another organization's project, even on a plan with the feature, is 404.
    on_plan(client, stranger)
    assert_error(client.get(url, headers=stranger.headers), 404, "NOT_FOUND")
    assert_error(
        client.post(url, json={"name": "Y", "type": "text"}, headers=stranger.headers), 404, "NOT_FOUND"
    )
    assert_error(client.delete(f"{url}/{field_id}", headers=stranger.headers), 404, "NOT_FOUND")
    # A field of another project of the same organization is 404 under this one.
    other = make_project(client, owner, key="APP", name="App")
    assert_error(
        client.patch(f"{fields_url(owner, other)}/{field_id}", json={"name": "Z"}, headers=owner.headers),
        404,
        "NOT_FOUND",
    )


def test_without_the_feature_402(client):
    owner = register(client)  # the free plan lacks custom_fields
    project = make_project(client, owner)
    url = fields_url(owner, project)
    for response in (
        client.get(url, headers=owner.headers),
        client.post(url, json={"name": "Y", "type": "text"}, headers=owner.headers),
        client.post(
            issues_url(owner, project),
            json={"title": "a", "custom_fields": {"y": "z"}},
            headers=owner.headers,
        ),
        client.get(issues_url(owner, project) + "?custom_field=y:z", headers=owner.headers),
    ):
        body = assert_error(response, 402, "PLAN_LIMIT_REACHED")
        assert body["details"]["feature"] == "custom_fields"
    # Reading and writing issues without custom fields works, with an empty object.
    issue = make_issue(client, owner, project)
    assert issue["custom_fields"] == {}
    read = client.get(f"{issues_url(owner, project)}/{issue['key']}", headers=owner.headers).get_json()
    assert read["custom_fields"] == {}


def test_a_plan_losing_the_feature_hides_values(client, setup):
    owner, project = setup
    issue = make_issue(client, owner, project, custom_fields={"pontos": 3})
    assert issue["custom_fields"]["pontos"] == 3
    on_plan(client, owner, "free")
    read = client.get(f"{issues_url(owner, project)}/{issue['key']}", headers=owner.headers).get_json()
    assert read["custom_fields"] == {}
    patched = client.patch(
        f"{issues_url(owner, project)}/{issue['key']}",
        json={"custom_fields": {"pontos": 4}},
        headers=owner.headers,
    )
    assert_error(patched, 402, "PLAN_LIMIT_REACHED")


def test_values_on_create_patch_and_read(client, setup):
    owner, project = setup
    values = {
        "cliente_afetado": "  Loja Centro  ",
        "pontos": 2.5,
        "data_de_entrega": "2026-12-01",
        "canal": "site",
        "regioes": ["norte", "sul", "norte"],
    }
    issue = make_issue(client, owner, project, custom_fields=values)
    expected = {
        "cliente_afetado": "Loja Centro",
        "pontos": 2.5,
        "data_de_entrega": "2026-12-01",
        "canal": "site",
        "regioes": ["sul", "norte"],  # in the field's order, once each
    }
    assert issue["custom_fields"] == expected
    url = f"{issues_url(owner, project)}/{issue['key']}"
    assert client.get(url, headers=owner.headers).get_json()["custom_fields"] == expected
    # A field named by id; null clears; fields left out keep their value.
    field_ids = {
        f["slug"]: f["id"]
        for f in client.get(fields_url(owner, project), headers=owner.headers).get_json()["custom_fields"]
    }
    patched = client.patch(
        url,
        json={"custom_fields": {field_ids["pontos"]: 8, "canal": None, "regioes": ["sudeste"]}},
        headers=owner.headers,
    )
    assert patched.status_code == 200, patched.get_json()
    assert patched.get_json()["custom_fields"] == {
        **expected,
        "pontos": 8,
        "canal": None,
        "regioes": ["sudeste"],
    }
    listed = client.get(issues_url(owner, project), headers=owner.headers).get_json()["issues"]
    assert listed[0]["custom_fields"]["pontos"] == 8
    # An issue without values shows every field as null.
    bare = make_issue(client, owner, project)
    assert bare["custom_fields"] == dict.fromkeys(expected)


@pytest.mark.parametrize(
    "values, field",
    [
        ({"nope": "x"}, "custom_fields.nope"),
        ({"cliente_afetado": 3}, "custom_fields.cliente_afetado"),
        ({"cliente_afetado": "a\x00b"}, "custom_fields.cliente_afetado"),
        ({"cliente_afetado": "x" * 2001}, "custom_fields.cliente_afetado"),
        ({"pontos": "3"}, "custom_fields.pontos"),
        ({"pontos": True}, "custom_fields.pontos"),
        ({"pontos": 1e16}, "custom_fields.pontos"),
        ({"data_de_entrega": "2026-02-30"}, "custom_fields.data_de_entrega"),
        ({"data_de_entrega": "20260201"}, "custom_fields.data_de_entrega"),
        ({"data_de_entrega": 20260201}, "custom_fields.data_de_entrega"),
        ({"canal": "fax"}, "custom_fields.canal"),
        ({"canal": ["loja"]}, "custom_fields.canal"),
        ({"regioes": ["sul", "leste"]}, "custom_fields.regioes"),
        ({"regioes": "sul"}, "custom_fields.regioes"),
    ],
)
def test_value_validation_names_the_field(client, setup, values, field):
    owner, project = setup
    created = client.post(
        issues_url(owner, project), json={"title": "t", "custom_fields": values}, headers=owner.headers
    )
    assert field in _details(created)
    issue = make_issue(client, owner, project)
    patched = client.patch(
        f"{issues_url(owner, project)}/{issue['key']}", json={"custom_fields": values}, headers=owner.headers
    )
    assert field in _details(patched)


def test_required_fields(client, setup):
    owner, project = setup
    make_field(client, owner, project, name="Sprint", type="number", required=True)
    assert "custom_fields.sprint" in _details(
        client.post(issues_url(owner, project), json={"title": "t"}, headers=owner.headers)
    )
    issue = make_issue(client, owner, project, custom_fields={"sprint": 1})
    assert "custom_fields.sprint" in _details(
        client.patch(
            f"{issues_url(owner, project)}/{issue['key']}",
            json={"custom_fields": {"sprint": None}},
            headers=owner.headers,
        )
    )


def test_changes_are_in_the_history(client, setup):
    owner, project = setup
    issue = make_issue(client, owner, project, custom_fields={"canal": "loja"})
    url = f"{issues_url(owner, project)}/{issue['key']}"
    client.patch(
        url,
        json={"custom_fields": {"canal": "app", "pontos": 5, "cliente_afetado": None}},
        headers=owner.headers,
    )
    # The same values again change nothing.
    client.patch(url, json={"custom_fields": {"canal": "app", "pontos": 5.0}}, headers=owner.headers)
    entries = client.get(f"{url}/activity?per_page=100", headers=owner.headers).get_json()["activity"]
    custom = sorted(
        (entry["field"], entry["old"], entry["new"])
        for entry in entries
        if (entry["field"] or "").startswith("custom_fields.")
    )
    assert custom == [("custom_fields.canal", "loja", "app"), ("custom_fields.pontos", None, 5)]
    assert all(
        entry["kind"] == "updated" for entry in entries if (entry["field"] or "").startswith("custom_fields.")
    )


def test_list_filter(client, setup):
    owner, project = setup
    a = make_issue(
        client, owner, project, custom_fields={"canal": "site", "regioes": ["sul", "norte"], "pontos": 3}
    )
    b = make_issue(
        client,
        owner,
        project,
        custom_fields={"canal": "loja", "regioes": ["norte"], "data_de_entrega": "2026-01-02"},
    )
    c = make_issue(client, owner, project, custom_fields={"cliente_afetado": "Loja 7", "pontos": 3.5})
    url = issues_url(owner, project)

    def keys(query: str) -> set[str]:
        response = client.get(f"{url}?{query}", headers=owner.headers)
        assert response.status_code == 200, response.get_json()
        body = response.get_json()
        assert body["total"] == len(body["issues"])
        return {issue["key"] for issue in body["issues"]}

    assert keys("custom_field=canal:site") == {a["key"]}
    assert keys("custom_field=regioes:norte") == {a["key"], b["key"]}
    assert keys("custom_field=regioes:norte&custom_field=canal:loja") == {b["key"]}
    assert keys("custom_field=pontos:3") == {a["key"]}
    assert keys("custom_field=pontos:3.5") == {c["key"]}
    assert keys("custom_field=data_de_entrega:2026-01-02") == {b["key"]}
    assert keys("custom_field=cliente_afetado:Loja 7") == {c["key"]}
    assert keys("custom_field=cliente_afetado:Loja") == set()
    assert keys("custom_field=regioes:sudeste") == set()
    for bad in (
        "custom_field=nope:1",
        "custom_field=canal",
        "custom_field=pontos:x",
        "custom_field=canal:fax",
        "custom_field=data_de_entrega:2026-13-01",
    ):
        assert "custom_field" in _details(client.get(f"{url}?{bad}", headers=owner.headers))


def test_deleting_a_field_or_an_option_deletes_its_values(client, setup):
    owner, project = setup
    issue = make_issue(client, owner, project, custom_fields={"regioes": ["sul", "norte"], "canal": "app"})
    url = f"{issues_url(owner, project)}/{issue['key']}"
    fields = {
        f["slug"]: f
        for f in client.get(fields_url(owner, project), headers=owner.headers).get_json()["custom_fields"]
    }
    changed = client.patch(
        f"{fields_url(owner, project)}/{fields['regioes']['id']}",
        json={"options": ["sul", "sudeste"]},
        headers=owner.headers,
    )
    assert changed.status_code == 200
    assert client.get(url, headers=owner.headers).get_json()["custom_fields"]["regioes"] == ["sul"]
    assert (
        client.delete(
            f"{fields_url(owner, project)}/{fields['canal']['id']}", headers=owner.headers
        ).status_code
        == 204
    )
    # Recreated with the same name: a new, empty field.
    make_field(client, owner, project, name="Canal", type="select", options=["app"])
    assert client.get(url, headers=owner.headers).get_json()["custom_fields"]["canal"] is None


def test_a_page_of_issues_reads_its_values_in_one_query(client, app, setup):
    from sqlalchemy import event

    from extensions import db

    owner, project = setup
    for n in range(12):
        make_issue(
            client, owner, project, custom_fields={"pontos": n, "regioes": ["sul", "norte"], "canal": "app"}
        )
    plain_owner = register(client)
    plain_project = make_project(client, plain_owner)
    for _ in range(12):
        make_issue(client, plain_owner, plain_project)

    def statements(url: str, headers: dict) -> int:
        seen: list[str] = []

        def count(conn, cursor, statement, *args):
            seen.append(statement)

        with app.app_context():
            engine = db.engine
        event.listen(engine, "before_cursor_execute", count)
        try:
            response = client.get(url, headers=headers)
        finally:
            event.remove(engine, "before_cursor_execute", count)
        assert response.status_code == 200
        return len(seen)

    with_fields = statements(issues_url(owner, project), owner.headers)
    without = statements(issues_url(plain_owner, plain_project), plain_owner.headers)
    assert with_fields == without + 1


def test_deleting_a_project_takes_its_fields_and_values(client, setup):
    owner, project = setup
    make_issue(client, owner, project, custom_fields={"canal": "app", "regioes": ["sul"]})
    assert client.delete(project_url(owner, project), headers=owner.headers).status_code == 204
    assert_error(client.get(fields_url(owner, project), headers=owner.headers), 404, "NOT_FOUND")
