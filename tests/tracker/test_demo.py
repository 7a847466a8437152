"""``flask demo load`` seeds the tracker too: the demo accounts' organization, with work in it."""

from __future__ import annotations

from services.stock.demo import DEMO_PASSWORD
from tests.tracker.support import API, Tenant

SMALL = ("--stores", "3", "--products", "6")


def load(runner, *args: str) -> str:
    result = runner.invoke(args=["demo", "load", *args])
    assert result.exit_code == 0, result.output
    return result.output


def demo_person(client, local: str) -> Tenant:
    email = f"{local}@demo.giro.com.br"
    response = client.post(f"{API}/auth/login", json={"email": email, "password": DEMO_PASSWORD})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    headers = {"Authorization": f"Bearer {body['access_token']}"}
    me = client.get(f"{API}/auth/me", headers=headers).get_json()
    [workspace] = client.get(f"{API}/workspaces", headers=headers).get_json()["workspaces"]
    return Tenant(
        user_id=me["id"],
        email=email,
        access_token=body["access_token"],
        refresh_token=body["refresh_token"],
        org_id=me["organizations"][0]["id"],
        slug=workspace["slug"],
    )


def get(client, who: Tenant, path: str, **query) -> dict:
    response = client.get(f"{API}{path}", query_string=query, headers=who.headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def all_issues(client, who: Tenant) -> dict[str, list[dict]]:
    projects = get(client, who, f"/workspaces/{who.slug}/projects")["projects"]
    return {
        p["key"]: get(client, who, f"/workspaces/{who.slug}/projects/{p['id']}/issues", per_page=100)[
            "issues"
        ]
        for p in projects
    } | {"_ids": projects}


def test_the_demo_accounts_share_an_organization_with_real_work(client, runner):
    output = load(runner, *SMALL)
    assert "tracker demo: organization 'Lojas Giro'" in output

    roles = {}
    for local in ("admin", "superadmin", "planejador", "gerente", "visualizador"):
        person = demo_person(client, local)
        [organization] = get(client, person, "/auth/me")["organizations"]
        assert organization["name"] == "Lojas Giro"
        roles[local] = organization["role"]
    assert roles == {
        "admin": "owner",
        "superadmin": "admin",
        "planejador": "member",
        "gerente": "member",
        "visualizador": "viewer",
    }

    owner = demo_person(client, "admin")
    found = all_issues(client, owner)
    projects = found.pop("_ids")
    assert len(projects) == 4  # the three of the demo's story, and the operations project (OPS)
    every = [issue for issues in found.values() for issue in issues]
    assert len(every) >= 30
    categories = {issue["status"]["category"] for issue in every}
    assert {"backlog", "todo", "in_progress", "done"} <= categories
    assert all(issue["title"] and " " in issue["title"] for issue in every)
    assert sum(1 for issue in every if issue["labels"]) >= 25
    assert len({issue["assignee"]["id"] for issue in every if issue["assignee"]}) >= 4
    assert sum(1 for issue in every if issue["parent_id"]) >= 5

    # The busiest issue has comments (one @mentioning a colleague), a history and relations.
    web = next(p for p in projects if p["key"] == "WEB")
    base = f"/workspaces/{owner.slug}/projects/{web['id']}/issues/WEB-1"
    comments = get(client, owner, base + "/comments")["comments"]
    assert len(comments) >= 3 and any("@planejador@demo.giro.com.br" in c["body"] for c in comments)
    kinds = {entry["kind"] for entry in get(client, owner, base + "/activity", per_page=100)["activity"]}
    assert {"created", "status_changed", "updated", "relation_added", "sub_issue_added"} <= kinds
    issue = get(client, owner, base)
    assert issue["relations"] and issue["children_count"] >= 2

    # Each person has a few unread notifications waiting, none queued for e-mail to fake addresses.
    planejador = demo_person(client, "planejador")
    inbox = get(client, planejador, "/notifications")
    assert inbox["total"] > inbox["unread"] > 0

    # The pages show it on first run.
    signed_in = client.post("/login", data={"email": "gerente@demo.giro.com.br", "senha": DEMO_PASSWORD})
    assert signed_in.status_code == 302
    board = client.get(f"/tracker/w/{owner.slug}/p/{web['id']}/board")
    assert board.status_code == 200 and "Checkout não finaliza com Pix" in board.get_data(as_text=True)
    page = client.get(f"/tracker/w/{owner.slug}/p/{web['id']}/issues/WEB-1").get_data(as_text=True)
    assert "mudou o status de" in page and "Reproduzi no iPhone" in page


def test_loading_again_adds_no_second_organization(client, runner):
    load(runner, *SMALL)
    owner = demo_person(client, "admin")
    before = {key: len(issues) for key, issues in all_issues(client, owner).items()}
    again = load(runner, "--if-empty")
    assert "tracker demo" not in again
    load(runner, *SMALL, "--replace")
    owner = demo_person(client, "admin")
    assert len(get(client, owner, "/auth/me")["organizations"]) == 1
    assert {key: len(issues) for key, issues in all_issues(client, owner).items()} == before
