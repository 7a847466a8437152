"""The organization's webhooks page: add (the secret shown once), refuse in place, enable and
disable, delete, the last deliveries; owners and admins only, isolation as the API."""

from __future__ import annotations

from tests.test_pages_tracker import HX, sign_in
from tests.tracker.collab_support import team
from tests.tracker.support import API, make_issue, register
from tests.tracker.test_webhooks import Receiver


def page_path(tenant) -> str:
    return f"/tracker/o/{tenant.org_id}/webhooks"


def api_hooks(client, owner) -> list[dict]:
    return client.get(f"{API}/organizations/{owner.org_id}/webhooks", headers=owner.headers).get_json()[
        "webhooks"
    ]


def test_an_owner_adds_a_webhook_sees_its_deliveries_disables_and_deletes_it(client):
    owner, _people, project = team(client)
    receiver = Receiver()
    try:
        csrf = sign_in(client, owner)
        page = client.get(page_path(owner))
        assert page.status_code == 200
        assert "Nenhum webhook nesta organização." in page.get_data(as_text=True)
        assert page_path(owner) in client.get("/tracker/").get_data(as_text=True)

        added = client.post(
            page_path(owner),
            data={"url": receiver.url, "events": ["issue.created", "comment.created"]},
            headers={**csrf, **HX},
        )
        body = added.get_data(as_text=True)
        assert added.status_code == 200 and "<html" not in body
        [hook] = api_hooks(client, owner)
        assert hook["events"] == ["issue.created", "comment.created"] and hook["url"] == receiver.url
        assert "Guarde o segredo agora" in body
        secret = body.split('id="created-secret" readonly value="')[1].split('"')[0]
        assert len(secret) == 64
        # Shown once: the page shows no secret afterwards.
        assert secret not in client.get(page_path(owner)).get_data(as_text=True)

        make_issue(client, owner, project)
        page = client.get(page_path(owner)).get_data(as_text=True)
        assert "Últimas entregas" in page and "Entregue" in page and "Tarefa criada" in page
        assert len(receiver.requests) == 1

        toggle = f"{page_path(owner)}/{hook['id']}/enabled"
        off = client.post(toggle, data={"enabled": "0"}, headers={**csrf, **HX})
        assert off.status_code == 200 and "Desativado" in off.get_data(as_text=True)
        assert api_hooks(client, owner)[0]["enabled"] is False
        make_issue(client, owner, project)
        assert len(receiver.requests) == 1
        on = client.post(toggle, data={"enabled": "1"}, headers={**csrf, **HX})
        assert on.status_code == 200 and api_hooks(client, owner)[0]["enabled"] is True

        removed = client.post(f"{page_path(owner)}/{hook['id']}/delete", headers={**csrf, **HX})
        assert removed.status_code == 200 and api_hooks(client, owner) == []
    finally:
        receiver.close()


def test_a_refused_address_is_said_next_to_the_field(client):
    owner = register(client)
    csrf = sign_in(client, owner)
    refused = client.post(
        page_path(owner),
        data={"url": "https://10.0.0.1/hook", "events": ["issue.created"]},
        headers={**csrf, **HX},
    )
    body = refused.get_data(as_text=True)
    assert refused.status_code == 422 and 'id="webhook-url-error"' in body
    assert "endereços privados" in body and 'value="https://10.0.0.1/hook"' in body
    no_events = client.post(
        page_path(owner), data={"url": "https://hooks.example.com"}, headers={**csrf, **HX}
    )
    assert no_events.status_code == 422 and "Escolha pelo menos um evento." in no_events.get_data(
        as_text=True
    )
    assert api_hooks(client, owner) == []


def test_members_and_other_organizations_cannot_open_the_page(client):
    owner, (member,), _project = team(client, "member")
    stranger = register(client)
    sign_in(client, member)
    assert client.get(page_path(owner)).status_code == 403
    assert page_path(owner) not in client.get("/tracker/").get_data(as_text=True)
    csrf = sign_in(client, stranger)
    assert client.get(page_path(owner)).status_code == 404
    refused = client.post(
        page_path(owner),
        data={"url": "https://hooks.example.com", "events": ["issue.created"]},
        headers={**csrf, **HX},
    )
    assert refused.status_code == 404
    assert api_hooks(client, owner) == []
