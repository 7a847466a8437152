"""A project's settings page: statuses (add, edit, reorder, delete) and labels, with the API's rules."""

from __future__ import annotations

from tests.test_pages_tracker import HX, sign_in
from tests.tracker.support import (
    add_member,
    make_issue,
    make_label,
    make_project,
    project_url,
    register,
    statuses,
)


def settings_path(tenant, project) -> str:
    return f"/tracker/w/{tenant.slug}/p/{project['id']}/settings"


def api_statuses(client, tenant, project) -> list[tuple[str, str, str]]:
    body = client.get(project_url(tenant, project) + "/statuses", headers=tenant.headers).get_json()
    ordered = sorted(body["statuses"], key=lambda s: (s["position"], s["name"]))
    return [(s["name"], s["category"], s["color"]) for s in ordered]


def test_owners_shape_the_board_columns(client):
    owner = register(client, name="Olga Dona")
    project = make_project(client, owner)
    csrf = sign_in(client, owner)
    path = settings_path(owner, project)
    page = client.get(path).get_data(as_text=True)
    assert "Em andamento" in page and "Adicionar status" in page and "Configurações" in page

    added = client.post(
        f"{path}/statuses",
        data={"name": "Em revisão", "color": "#a855f7", "category": "in_progress"},
        headers={**csrf, **HX},
    )
    assert added.status_code == 200 and "<html" not in added.get_data(as_text=True)
    assert api_statuses(client, owner, project)[-1] == ("Em revisão", "in_progress", "#a855f7")
    bad = client.post(
        f"{path}/statuses", data={"name": "", "color": "azul", "category": "todo"}, headers={**csrf, **HX}
    )
    assert bad.status_code == 422
    assert "Campo obrigatório." in bad.get_data(as_text=True) and "Use uma cor como #1a2b3c." in bad.get_data(
        as_text=True
    )

    listed = client.get(project_url(owner, project) + "/statuses", headers=owner.headers).get_json()
    review = next(s for s in listed["statuses"] if s["name"] == "Em revisão")

    def order():
        return [name for name, _, _ in api_statuses(client, owner, project)]

    for _ in range(2):
        moved = client.post(
            f"{path}/statuses/{review['id']}/move", data={"direction": "up"}, headers={**csrf, **HX}
        )
        assert moved.status_code == 200
    assert order() == ["Backlog", "Todo", "In Progress", "Em revisão", "Done", "Cancelled"]
    down = client.post(
        f"{path}/statuses/{review['id']}/move", data={"direction": "down"}, headers={**csrf, **HX}
    )
    assert down.status_code == 200
    assert order() == ["Backlog", "Todo", "In Progress", "Done", "Em revisão", "Cancelled"]
    renamed = client.post(
        f"{path}/statuses/{review['id']}",
        data={"name": "Revisão", "color": "#a855f7", "category": "in_progress"},
        headers={**csrf, **HX},
    )
    assert renamed.status_code == 200 and "Revisão" in [n for n, _, _ in api_statuses(client, owner, project)]

    # A status in use stays, and says why.
    todo = statuses(client, owner, project)["todo"]
    make_issue(client, owner, project, status_id=todo["id"])
    kept = client.post(f"{path}/statuses/{todo['id']}/delete", headers={**csrf, **HX})
    assert kept.status_code == 409
    assert "Há tarefas com este status" in kept.get_data(as_text=True)
    assert client.post(f"{path}/statuses/{review['id']}/delete", headers={**csrf, **HX}).status_code == 200
    assert "Revisão" not in [n for n, _, _ in api_statuses(client, owner, project)]


def test_labels_and_who_may_change_what(client):
    owner = register(client, name="Olga Dona")
    member = register(client, name="Mauro Membro")
    stranger = register(client, name="Otto Fora")
    add_member(client, owner, member)
    project = make_project(client, owner)
    csrf = sign_in(client, owner)
    path = settings_path(owner, project)
    created = client.post(
        f"{path}/labels", data={"name": "Vitrine", "color": "#eab308"}, headers={**csrf, **HX}
    )
    assert created.status_code == 200 and "Vitrine" in created.get_data(as_text=True)
    twice = client.post(
        f"{path}/labels", data={"name": "Vitrine", "color": "#eab308"}, headers={**csrf, **HX}
    )
    assert twice.status_code == 409
    assert "Já existe uma etiqueta com esse nome neste projeto." in twice.get_data(as_text=True)
    doomed = make_label(client, owner, project, "Antiga")
    issue = make_issue(client, owner, project, label_ids=[doomed["id"]])
    assert client.post(f"{path}/labels/{doomed['id']}/delete", headers={**csrf, **HX}).status_code == 200
    labels = client.get(project_url(owner, project) + "/labels", headers=owner.headers).get_json()["labels"]
    assert [label["name"] for label in labels] == ["Vitrine"]
    after = client.get(
        f"{project_url(owner, project)}/issues/{issue['key']}", headers=owner.headers
    ).get_json()
    assert after["labels"] == []

    # A member reads the settings without controls; changes are refused by the service.
    csrf = sign_in(client, member)
    page = client.get(path).get_data(as_text=True)
    assert "Vitrine" in page and "Adicionar status" not in page and "Criar etiqueta" not in page
    refused = client.post(f"{path}/labels", data={"name": "X", "color": "#000000"}, headers={**csrf, **HX})
    assert refused.status_code == 403
    todo = statuses(client, owner, project)["todo"]
    assert (
        client.post(
            f"{path}/statuses/{todo['id']}/move", data={"direction": "down"}, headers={**csrf, **HX}
        ).status_code
        == 403
    )

    csrf = sign_in(client, stranger)
    assert client.get(path).status_code == 404
    assert client.post(f"{path}/statuses/{todo['id']}/delete", headers={**csrf, **HX}).status_code == 404
