"""Board order and bulk edit through the pages: the board's move sends the card's place, and the
list's bulk form changes the selected issues."""

from __future__ import annotations

import re

from tests.test_pages_tracker import HX, board_path, list_path, sign_in
from tests.tracker.support import (
    add_member,
    issues_url,
    make_issue,
    make_label,
    make_project,
    register,
    statuses,
)


def bulk_path(tenant, project: dict) -> str:
    return f"/tracker/w/{tenant.slug}/p/{project['id']}/bulk-edit"


def column_order(html: str, status_id: str) -> list[str]:
    column = html.split(f'id="cards-{status_id}"')[1].split("</ol>")[0]
    return re.findall(r'data-key="([A-Z]+-\d+)"', column)


def test_a_card_moved_within_and_across_columns_keeps_its_place_on_reload(client):
    owner = register(client)
    project = make_project(client, owner)
    created = {n: make_issue(client, owner, project, title=f"Cartão {n}") for n in range(1, 4)}
    todo, done = (
        statuses(client, owner, project)["todo"]["id"],
        statuses(client, owner, project)["done"]["id"],
    )
    csrf = sign_in(client, owner)
    board = client.get(board_path(owner, project)).get_data(as_text=True)
    assert column_order(board, todo) == ["WEB-3", "WEB-2", "WEB-1"]
    assert f'data-id="{created[1]["id"]}"' in board
    moved = client.post(
        f"{list_path(owner, project)}/WEB-1/move",
        data={"before_id": created[3]["id"]},
        headers={**csrf, **HX},
    )
    assert moved.status_code == 200, moved.get_data(as_text=True)
    assert column_order(client.get(board_path(owner, project)).get_data(as_text=True), todo) == [
        "WEB-1",
        "WEB-3",
        "WEB-2",
    ]
    # Dropped at the bottom of another column: the status and the place both stay.
    make_issue(client, owner, project, title="Já feito", status_id=done)
    across = client.post(
        f"{list_path(owner, project)}/WEB-3/move",
        data={"status_id": done, "after_id": ""},
        headers={**csrf, **HX},
    )
    assert across.status_code == 200
    bottom = client.post(
        f"{list_path(owner, project)}/WEB-2/move",
        data={"status_id": done, "after_id": created[3]["id"]},
        headers={**csrf, **HX},
    )
    assert bottom.status_code == 200
    board = client.get(board_path(owner, project)).get_data(as_text=True)
    assert column_order(board, todo) == ["WEB-1"]
    assert column_order(board, done) == ["WEB-4", "WEB-3", "WEB-2"]
    # A neighbour from another project, or nothing to do, is refused in place.
    other = make_issue(client, owner, make_project(client, owner, key="APP", name="App"))
    refused = client.post(
        f"{list_path(owner, project)}/WEB-1/move", data={"before_id": other["id"]}, headers={**csrf, **HX}
    )
    assert refused.status_code == 422
    assert "vizinha precisa ser deste projeto" in refused.get_data(as_text=True)
    assert (
        client.post(f"{list_path(owner, project)}/WEB-1/move", data={}, headers={**csrf, **HX}).status_code
        == 422
    )


def test_bulk_edit_from_the_list(client):
    owner = register(client, name="Olga Dona")
    member = register(client, name="Mara Membro")
    add_member(client, owner, member)
    project = make_project(client, owner)
    label = make_label(client, owner, project, "urgente")
    for n in range(1, 4):
        make_issue(client, owner, project, title=f"Issue {n}")
    done = statuses(client, owner, project)["done"]["id"]
    csrf = sign_in(client, owner)
    page = client.get(list_path(owner, project), query_string={"q": "issue"}).get_data(as_text=True)
    assert 'id="bulk-form"' in page and 'name="keys" value="WEB-2"' in page
    response = client.post(
        bulk_path(owner, project),
        data={
            "keys": ["WEB-1", "WEB-3"],
            "status_id": done,
            "assignee_id": member.user_id,
            "priority": "",
            "add_label_ids": label["id"],
            "remove_label_ids": "",
            "list_query": "q=issue",
        },
        headers={**csrf, **HX},
    )
    body = response.get_data(as_text=True)
    assert response.status_code == 200, body
    assert "2 tarefas alteradas." in body and "<html" not in body
    assert 'name="list_query" value="q=issue"' in body
    for key, expected in (("WEB-1", True), ("WEB-2", False), ("WEB-3", True)):
        issue = client.get(f"{issues_url(owner, project)}/{key}", headers=owner.headers).get_json()
        assert (issue["status"]["id"] == done) is expected
        assert (issue["assignee"] is not None) is expected
        assert ([label_["name"] for label_ in issue["labels"]] == ["urgente"]) is expected
    # Unassign everyone, without htmx: back to the list with its filters.
    plain = client.post(
        bulk_path(owner, project),
        data={"keys": ["WEB-1", "WEB-3"], "assignee_id": "none", "list_query": "q=issue"},
        headers=csrf,
    )
    assert plain.status_code == 303 and plain.headers["Location"].endswith("/issues?q=issue")
    assert (
        client.get(f"{issues_url(owner, project)}/WEB-1", headers=owner.headers).get_json()["assignee"]
        is None
    )
    # Nothing selected, or nothing to change, is said in place.
    none_picked = client.post(bulk_path(owner, project), data={"priority": "high"}, headers={**csrf, **HX})
    assert none_picked.status_code == 422 and "Selecione pelo menos uma tarefa." in none_picked.get_data(
        as_text=True
    )
    nothing = client.post(bulk_path(owner, project), data={"keys": "WEB-1"}, headers={**csrf, **HX})
    assert nothing.status_code == 422 and "Escolha pelo menos uma alteração." in nothing.get_data(
        as_text=True
    )


def test_viewers_get_no_bulk_form_and_cannot_post_it(client):
    owner = register(client)
    viewer = register(client)
    add_member(client, owner, viewer, "viewer")
    project = make_project(client, owner)
    make_issue(client, owner, project)
    csrf = sign_in(client, viewer)
    assert 'id="bulk-form"' not in client.get(list_path(owner, project)).get_data(as_text=True)
    refused = client.post(
        bulk_path(owner, project),
        data={"keys": "WEB-1", "priority": "high"},
        headers={**csrf, **HX},
    )
    assert refused.status_code == 403
    assert (
        client.get(f"{issues_url(owner, project)}/WEB-1", headers=owner.headers).get_json()["priority"]
        == "none"
    )
    stranger = register(client)
    csrf = sign_in(client, stranger)
    assert (
        client.post(
            bulk_path(owner, project),
            data={"keys": "WEB-1", "priority": "high"},
            headers={**csrf, **HX},
        ).status_code
        == 404
    )
