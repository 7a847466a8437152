"""An attachment uploaded or deleted through the API is written in the issue's history (the
activity API and the issue page's timeline) and told to the webhooks subscribed to
``attachment.created`` / ``attachment.deleted``; deleting the whole issue tells neither."""

from __future__ import annotations

import io
import json

import pytest

from tests.test_pages_tracker import sign_in
from tests.tracker.collab_support import issue_url, team
from tests.tracker.support import API, make_issue
from tests.tracker.test_webhooks import Receiver

FILE = b"%PDF-1.4\nnota fiscal\n"


@pytest.fixture(autouse=True)
def _own_directory(app, monkeypatch, tmp_path):
    monkeypatch.setitem(app.config, "STORAGE_URL", (tmp_path / "files").as_uri())


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()


@pytest.fixture
def setup(client):
    owner, (member,), project = team(client, "member")
    issue = make_issue(client, owner, project, title="Nota da vitrine")
    return owner, member, project, issue["key"]


def upload(client, who, owner, project, key: str, filename: str = "nota.pdf") -> dict:
    response = client.post(
        issue_url(owner, project, key) + "/attachments",
        data={"file": (io.BytesIO(FILE), filename, "application/pdf")},
        headers=who.headers,
        content_type="multipart/form-data",
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def delete(client, who, owner, project, key: str, attachment_id: str) -> None:
    url = f"{issue_url(owner, project, key)}/attachments/{attachment_id}"
    response = client.delete(url, headers=who.headers)
    assert response.status_code == 204, response.get_json()


def activity(client, owner, project, key: str) -> list[dict]:
    response = client.get(issue_url(owner, project, key) + "/activity", headers=owner.headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["activity"]


def hook(client, owner, url: str, events: list[str]) -> dict:
    response = client.post(
        f"{API}/organizations/{owner.org_id}/webhooks",
        json={"url": url, "events": events},
        headers=owner.headers,
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def deliveries(client, owner, webhook: dict) -> list[dict]:
    url = f"{API}/organizations/{owner.org_id}/webhooks/{webhook['id']}/deliveries"
    response = client.get(url, headers=owner.headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["deliveries"]


def test_an_upload_and_its_deletion_are_in_the_history(client, setup):
    owner, member, project, key = setup
    attached = upload(client, member, owner, project, key)
    added = activity(client, owner, project, key)[-1]
    assert added["kind"] == "attachment_added"
    assert added["new"] == {"id": attached["id"], "filename": "nota.pdf"}
    assert added["old"] is None and added["actor"]["id"] == member.user_id

    delete(client, owner, owner, project, key, attached["id"])
    kinds = [entry["kind"] for entry in activity(client, owner, project, key)]
    assert kinds == ["created", "attachment_added", "attachment_deleted"]
    removed = activity(client, owner, project, key)[-1]
    assert removed["old"] == {"id": attached["id"], "filename": "nota.pdf"}
    assert removed["new"] is None and removed["actor"]["id"] == owner.user_id


def test_webhooks_hear_of_an_upload_and_of_its_deletion(client, setup, receiver):
    owner, member, project, key = setup
    created_hook = hook(client, owner, receiver.url, ["attachment.created"])
    deleted_hook = hook(client, owner, receiver.url, ["attachment.deleted"])
    attached = upload(client, member, owner, project, key)
    assert [d["event"] for d in deliveries(client, owner, created_hook)] == ["attachment.created"]
    assert deliveries(client, owner, deleted_hook) == []
    sent = json.loads(receiver.requests[-1]["body"])
    assert sent["event"] == "attachment.created"
    data = sent["data"]
    assert data["attachment"] == {**attached, "created_at": data["attachment"]["created_at"]}
    assert data["attachment"]["id"] == attached["id"] and data["attachment"]["filename"] == "nota.pdf"
    assert data["issue"]["key"] == key and data["issue"]["title"] == "Nota da vitrine"
    assert data["actor"]["id"] == member.user_id and data["organization_id"] == owner.org_id

    delete(client, owner, owner, project, key, attached["id"])
    assert [d["event"] for d in deliveries(client, owner, deleted_hook)] == ["attachment.deleted"]
    assert len(deliveries(client, owner, created_hook)) == 1
    gone = json.loads(receiver.requests[-1]["body"])
    assert gone["event"] == "attachment.deleted"
    assert gone["data"]["attachment"]["id"] == attached["id"]
    assert gone["data"]["attachment"]["created_by"]["id"] == member.user_id
    assert gone["data"]["issue"]["key"] == key and gone["data"]["actor"]["id"] == owner.user_id


def test_deleting_the_issue_tells_no_attachment_deletion(client, setup, receiver):
    owner, member, project, key = setup
    upload(client, member, owner, project, key)
    deleted_hook = hook(client, owner, receiver.url, ["attachment.deleted", "issue.deleted"])
    assert client.delete(issue_url(owner, project, key), headers=owner.headers).status_code == 204
    assert [d["event"] for d in deliveries(client, owner, deleted_hook)] == ["issue.deleted"]


def test_the_issue_page_timeline_names_the_file_attached_and_removed(client, setup):
    owner, member, project, key = setup
    attached = upload(client, member, owner, project, key, filename="<b>foto&.png")
    sign_in(client, owner)
    page = f"/tracker/w/{owner.slug}/p/{project['id']}/issues/{key}"
    html = client.get(page).get_data(as_text=True)
    assert "anexou <strong>&lt;b&gt;foto&amp;.png</strong>" in html
    assert "<b>foto" not in html

    delete(client, owner, owner, project, key, attached["id"])
    html = client.get(page).get_data(as_text=True)
    assert "removeu o anexo <strong>&lt;b&gt;foto&amp;.png</strong>" in html
    assert "anexou <strong>&lt;b&gt;foto&amp;.png</strong>" in html
