"""Webhooks through the API and the CLI: managing them (roles, isolation, validation) and their
deliveries to a real HTTP receiver on loopback (signature, headers, retries, disabling, SSRF).

Jobs run inline once a request commits (``JOBS_EAGER``), so a change's delivery has been
attempted when its request returns, unless a test holds the queue back.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import threading
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from sqlalchemy import func, select

from models.base import utcnow
from tests.factories import captured_mail
from tests.racing import together
from tests.tracker.collab_support import comment, issue_url, team
from tests.tracker.support import API, add_member, assert_error, make_issue, make_project, register

EVENTS = ["issue.created", "issue.updated", "issue.deleted", "comment.created"]


class Receiver:
    """An HTTP server on 127.0.0.1 recording each request and answering the next queued status."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.statuses: list[int] = []
        self.default_status = 200
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                receiver.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status = receiver.statuses.pop(0) if receiver.statuses else receiver.default_status
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("Location", f"http://127.0.0.1:{receiver.port}/elsewhere")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *_args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()


def hooks_url(tenant) -> str:
    return f"{API}/organizations/{tenant.org_id}/webhooks"


def create_hook(client, tenant, url: str, events=None, **extra) -> dict:
    response = client.post(
        hooks_url(tenant), json={"url": url, "events": events or EVENTS, **extra}, headers=tenant.headers
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def deliveries(client, tenant, hook: dict) -> list[dict]:
    response = client.get(f"{hooks_url(tenant)}/{hook['id']}/deliveries", headers=tenant.headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["deliveries"]


def deliver(runner) -> str:
    result = runner.invoke(args=["tracker", "deliver"])
    assert result.exit_code == 0, result.output
    return result.output.strip()


def at(monkeypatch, moment: datetime) -> None:
    """The delivery pass's clock."""
    from services.tracker import webhook_delivery

    monkeypatch.setattr(webhook_delivery, "utcnow", lambda: moment)


def fake_dns(monkeypatch, answers: dict[str, str]) -> None:
    """Names resolving to the given addresses; any other name resolves as usual."""
    real = socket.getaddrinfo

    def lookup(host, port, *args, **kwargs):
        if host in answers:
            family = socket.AF_INET6 if ":" in answers[host] else socket.AF_INET
            return [(family, socket.SOCK_STREAM, 6, "", (answers[host], port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", lookup)


# --------------------------------------------------------------------------- managing


def test_an_owner_adds_lists_changes_and_deletes_webhooks(client):
    owner = register(client)
    created = create_hook(
        client, owner, "https://hooks.example.com/giro", ["comment.created", "issue.created"]
    )
    assert len(created["secret"]) == 64 and int(created["secret"], 16) >= 0
    # Events come back in their canonical order.
    assert created["events"] == ["issue.created", "comment.created"]
    assert created["enabled"] is True and created["failing_since"] is None
    chosen = create_hook(client, owner, "https://hooks.example.com/other", secret="my-own-secret-of-24-chars")
    assert chosen["secret"] == "my-own-secret-of-24-chars"

    listed = client.get(hooks_url(owner), headers=owner.headers).get_json()["webhooks"]
    assert [hook["id"] for hook in listed] == [created["id"], chosen["id"]]
    assert all("secret" not in hook for hook in listed)  # shown once, on creation

    changed = client.patch(
        f"{hooks_url(owner)}/{created['id']}",
        json={"events": ["issue.deleted"], "enabled": False, "url": "https://hooks.example.com/v2"},
        headers=owner.headers,
    )
    assert changed.status_code == 200, changed.get_json()
    body = changed.get_json()
    assert (body["events"], body["enabled"], body["url"]) == (
        ["issue.deleted"],
        False,
        "https://hooks.example.com/v2",
    )
    assert "secret" not in body

    assert client.delete(f"{hooks_url(owner)}/{created['id']}", headers=owner.headers).status_code == 204
    listed = client.get(hooks_url(owner), headers=owner.headers).get_json()["webhooks"]
    assert [hook["id"] for hook in listed] == [chosen["id"]]
    gone = client.delete(f"{hooks_url(owner)}/{created['id']}", headers=owner.headers)
    assert_error(gone, 404, "NOT_FOUND")


@pytest.mark.parametrize(
    "url",
    [
        "ftp://hooks.example.com/x",
        "not a url",
        "https://user:pw@hooks.example.com/x",
        "http://93.184.216.34/hook",  # plain http beyond loopback
        "https://10.0.0.8/hook",
        "https://192.168.1.20:8443/hook",
        "https://172.16.0.1/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[fe80::1]/hook",
        "https://[fd00::1]/hook",
        "https://224.0.0.1/hook",
        "https://240.0.0.1/hook",
        "https://0.0.0.0/hook",
        "https://100.64.0.1/hook",
        "https://[::ffff:10.0.0.1]/hook",
        "https://internal.example.com/hook",  # resolves to a private address
    ],
)
def test_a_url_that_is_not_https_or_reaches_a_private_address_is_refused(client, monkeypatch, url):
    fake_dns(monkeypatch, {"internal.example.com": "10.1.2.3"})
    owner = register(client)
    response = client.post(hooks_url(owner), json={"url": url, "events": EVENTS}, headers=owner.headers)
    body = assert_error(response, 400, "VALIDATION_ERROR")
    assert [detail["field"] for detail in body["details"]] == ["url"], body
    assert client.get(hooks_url(owner), headers=owner.headers).get_json()["webhooks"] == []


# IPv6 addresses that wrap a private or metadata IPv4 address: a NAT64 gateway or a 6to4
# relay delivers them to the address inside.
WRAPPED_PRIVATE = [
    "64:ff9b::a00:1",  # NAT64 well-known prefix, 10.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 well-known prefix, 169.254.169.254
    "64:ff9b:1::a00:1",  # NAT64 local-use prefix, /96 layout
    "64:ff9b:1:a00:0:100::",  # NAT64 local-use prefix, RFC 6052 /48 layout, 10.0.0.1
    "2002:a00:1::",  # 6to4, 10.0.0.1
    "2002:a9fe:a9fe::",  # 6to4, 169.254.169.254
    "::a00:1",  # IPv4-compatible, 10.0.0.1
    "::ffff:a9fe:a9fe",  # IPv4-mapped, 169.254.169.254
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo, client 10.0.0.1
]


@pytest.mark.parametrize("address", WRAPPED_PRIVATE)
def test_an_ipv6_address_wrapping_a_private_ipv4_address_is_refused_everywhere(
    client, receiver, monkeypatch, address
):
    owner, _people, project = team(client)
    created = client.post(
        hooks_url(owner), json={"url": f"https://[{address}]/hook", "events": EVENTS}, headers=owner.headers
    )
    assert assert_error(created, 400, "VALIDATION_ERROR")["details"][0]["field"] == "url"

    fake_dns(monkeypatch, {"hooks.example.com": "93.184.216.34"})
    hook = create_hook(client, owner, "https://hooks.example.com/giro")
    patched = client.patch(
        f"{hooks_url(owner)}/{hook['id']}", json={"url": f"https://[{address}]/"}, headers=owner.headers
    )
    assert assert_error(patched, 400, "VALIDATION_ERROR")["details"][0]["field"] == "url"

    connections = []
    monkeypatch.setattr(socket, "create_connection", lambda target, *a, **k: connections.append(target))
    fake_dns(monkeypatch, {"hooks.example.com": address})  # the name now answers with the wrapper
    make_issue(client, owner, project)
    assert connections == []
    [delivery] = deliveries(client, owner, hook)
    assert delivery["state"] == "pending" and delivery["error"].startswith("Refused"), delivery


@pytest.mark.parametrize("address", ["64:ff9b::5db8:d822", "2002:5db8:d822::"])
def test_an_ipv6_address_wrapping_a_public_ipv4_address_is_accepted(client, address):
    owner = register(client)
    created = client.post(
        hooks_url(owner), json={"url": f"https://[{address}]/hook", "events": EVENTS}, headers=owner.headers
    )
    assert created.status_code == 201, created.get_json()


def test_loopback_urls_are_accepted_and_events_are_checked(client):
    owner = register(client)
    for url in (
        "http://127.0.0.1:9/hook",
        "http://localhost:9/hook",
        "http://[::1]:9/",
        "https://127.0.0.1/",
    ):
        create_hook(client, owner, url)
    unknown = client.post(
        hooks_url(owner),
        json={"url": "https://hooks.example.com", "events": ["issue.moved"]},
        headers=owner.headers,
    )
    body = assert_error(unknown, 400, "VALIDATION_ERROR")
    assert body["details"][0]["field"].startswith("events"), body
    for events in ([], None):
        refused = client.post(
            hooks_url(owner),
            json={"url": "https://hooks.example.com", "events": events},
            headers=owner.headers,
        )
        assert_error(refused, 400, "VALIDATION_ERROR")
    short = client.post(
        hooks_url(owner),
        json={"url": "https://hooks.example.com", "events": EVENTS, "secret": "short"},
        headers=owner.headers,
    )
    assert assert_error(short, 400, "VALIDATION_ERROR")["details"][0]["field"] == "secret"
    hook = create_hook(client, owner, "https://hooks.example.com")
    bad_patch = client.patch(
        f"{hooks_url(owner)}/{hook['id']}", json={"url": "https://10.0.0.1/"}, headers=owner.headers
    )
    assert assert_error(bad_patch, 400, "VALIDATION_ERROR")["details"][0]["field"] == "url"


def test_only_owners_and_admins_manage_webhooks(client):
    owner, (admin, member, viewer), _project = team(client, "admin", "member", "viewer")
    response = client.post(
        hooks_url(owner), json={"url": "https://hooks.example.com/a", "events": EVENTS}, headers=admin.headers
    )
    assert response.status_code == 201, response.get_json()
    hook = response.get_json()
    for person in (member, viewer):
        assert_error(client.get(hooks_url(owner), headers=person.headers), 403, "FORBIDDEN")
        created = client.post(
            hooks_url(owner),
            json={"url": "https://hooks.example.com", "events": EVENTS},
            headers=person.headers,
        )
        assert_error(created, 403, "FORBIDDEN")
        one = f"{hooks_url(owner)}/{hook['id']}"
        assert_error(client.patch(one, json={"enabled": False}, headers=person.headers), 403, "FORBIDDEN")
        assert_error(client.delete(one, headers=person.headers), 403, "FORBIDDEN")
        assert_error(client.get(f"{one}/deliveries", headers=person.headers), 403, "FORBIDDEN")
    listed = client.get(hooks_url(owner), headers=owner.headers).get_json()["webhooks"]
    assert [h["id"] for h in listed] == [hook["id"]]
    assert client.get(hooks_url(owner)).status_code == 401


def test_organizations_never_see_each_others_webhooks(client):
    alice, bob = register(client), register(client)
    hook = create_hook(client, alice, "https://hooks.example.com/a")
    one = f"{hooks_url(alice)}/{hook['id']}"
    assert_error(client.get(hooks_url(alice), headers=bob.headers), 404, "NOT_FOUND")
    created = client.post(
        hooks_url(alice), json={"url": "https://hooks.example.com", "events": EVENTS}, headers=bob.headers
    )
    assert_error(created, 404, "NOT_FOUND")
    assert_error(client.patch(one, json={"enabled": False}, headers=bob.headers), 404, "NOT_FOUND")
    assert_error(client.delete(one, headers=bob.headers), 404, "NOT_FOUND")
    assert_error(client.get(f"{one}/deliveries", headers=bob.headers), 404, "NOT_FOUND")
    # Alice's webhook through Bob's own organization is not there either.
    theirs = f"{hooks_url(bob)}/{hook['id']}"
    assert_error(client.patch(theirs, json={"enabled": False}, headers=bob.headers), 404, "NOT_FOUND")
    assert_error(client.get(f"{theirs}/deliveries", headers=bob.headers), 404, "NOT_FOUND")
    assert client.get(hooks_url(alice), headers=alice.headers).get_json()["webhooks"][0]["enabled"] is True


# --------------------------------------------------------------------------- delivering


def _check_signed(request: dict, secret: str) -> dict:
    headers = request["headers"]
    timestamp = headers["X-Giro-Timestamp"]
    expected = hmac.new(
        secret.encode(), f"{timestamp}.".encode() + request["body"], hashlib.sha256
    ).hexdigest()
    assert headers["X-Giro-Signature"] == f"sha256={expected}"
    assert headers["Content-Type"] == "application/json"
    assert abs(int(timestamp) - utcnow().timestamp()) < 120
    body = json.loads(request["body"])
    assert set(body) == {"id", "event", "created_at", "data"}
    assert headers["X-Giro-Delivery"] == body["id"]
    assert headers["X-Giro-Event"] == body["event"]
    return body


def test_each_change_is_delivered_signed_to_the_webhooks_subscribed(client, receiver):
    owner, (member,), project = team(client, "member")
    hook = create_hook(client, owner, receiver.url, secret="receiver-secret-0123456789")
    comments_only = Receiver()
    try:
        create_hook(client, owner, comments_only.url, ["comment.created"])
        issue = make_issue(client, owner, project, title="Checkout quebra no Safari")
        assert len(receiver.requests) == 1 and comments_only.requests == []
        created = _check_signed(receiver.requests[0], "receiver-secret-0123456789")
        assert receiver.requests[0]["path"] == "/hook"
        assert created["event"] == "issue.created"
        data = created["data"]
        assert data["issue"]["key"] == issue["key"] and data["issue"]["title"] == "Checkout quebra no Safari"
        assert data["actor"]["id"] == owner.user_id and data["organization_id"] == owner.org_id

        changed = client.patch(
            issue_url(owner, project, issue["key"]), json={"priority": "high"}, headers=member.headers
        )
        assert changed.status_code == 200
        updated = _check_signed(receiver.requests[1], "receiver-secret-0123456789")
        assert updated["event"] == "issue.updated"
        assert updated["data"]["changes"] == {"priority": {"old": "none", "new": "high"}}
        assert updated["data"]["actor"]["id"] == member.user_id

        comment(client, owner, project, issue["key"], "Reproduzi no iPhone", who=member)
        said = _check_signed(receiver.requests[2], "receiver-secret-0123456789")
        assert said["event"] == "comment.created"
        assert said["data"]["comment"]["body"] == "Reproduzi no iPhone"
        assert said["data"]["issue"]["key"] == issue["key"]
        assert len(comments_only.requests) == 1
        assert json.loads(comments_only.requests[0]["body"])["event"] == "comment.created"

        assert (
            client.delete(issue_url(owner, project, issue["key"]), headers=owner.headers).status_code == 204
        )
        removed = _check_signed(receiver.requests[3], "receiver-secret-0123456789")
        assert removed["event"] == "issue.deleted" and removed["data"]["issue"]["id"] == issue["id"]
        assert len({request["headers"]["X-Giro-Delivery"] for request in receiver.requests}) == 4
    finally:
        comments_only.close()

    listed = deliveries(client, owner, hook)
    assert [d["event"] for d in listed] == [
        "issue.deleted",
        "comment.created",
        "issue.updated",
        "issue.created",
    ]
    assert all(
        d["state"] == "delivered" and d["response_status"] == 200 and d["attempts"] == 1 for d in listed
    )
    assert all(d["next_attempt_at"] is None and d["error"] is None for d in listed)


def test_a_bulk_edit_delivers_one_update_per_changed_issue(client, receiver):
    from tests.tracker.test_bulk_edit import bulk

    owner, (_member,), project = team(client, "member")
    keys = [make_issue(client, owner, project, title=f"Issue {n}")["key"] for n in range(1, 4)]
    create_hook(client, owner, receiver.url, ["issue.updated"])
    client.patch(issue_url(owner, project, keys[2]), json={"priority": "high"}, headers=owner.headers)
    receiver.requests.clear()
    answer = bulk(client, owner, project, keys, {"priority": "high"})
    assert answer.get_json() == {"updated": 2}
    updates = [json.loads(request["body"]) for request in receiver.requests]
    assert sorted(u["data"]["issue"]["key"] for u in updates) == sorted(keys[:2])
    assert all(u["data"]["changes"] == {"priority": {"old": "none", "new": "high"}} for u in updates)


def test_a_custom_field_change_is_delivered_as_an_update(client, receiver):
    from tests.tracker.custom_fields_support import make_field, on_plan

    owner = register(client)
    on_plan(client, owner)
    project = make_project(client, owner)
    make_field(client, owner, project, name="Canal", type="select", options=["loja", "site"])
    issue = make_issue(client, owner, project, title="Vitrine")
    create_hook(client, owner, receiver.url, ["issue.updated"])
    answer = client.patch(
        issue_url(owner, project, issue["key"]),
        json={"custom_fields": {"canal": "site"}},
        headers=owner.headers,
    )
    assert answer.status_code == 200, answer.get_json()
    (update,) = [json.loads(request["body"]) for request in receiver.requests]
    assert update["data"]["changes"] == {"custom_fields.canal": {"old": None, "new": "site"}}


def test_a_change_that_fails_delivers_nothing(client, receiver):
    owner, _people, project = team(client)
    create_hook(client, owner, receiver.url)
    response = client.post(
        f"{API}/workspaces/{owner.slug}/projects/{project['id']}/issues", json={}, headers=owner.headers
    )
    assert response.status_code == 400
    assert receiver.requests == []


def test_nothing_is_sent_inside_the_request_only_by_the_job_or_the_pass(
    client, runner, receiver, monkeypatch
):
    from services import job_queue, jobs

    owner, _people, project = team(client)
    hook = create_hook(client, owner, receiver.url)
    held: list[tuple[str, str]] = []
    monkeypatch.setattr(job_queue, "submit", lambda job_id, kind: held.append((str(job_id), kind)))

    make_issue(client, owner, project)
    make_issue(client, owner, project)
    assert receiver.requests == []  # the requests returned without reaching the receiver
    # One webhooks job per change, after commit (the search's own "busca" jobs aside).
    held = [(job, kind) for job, kind in held if kind != "busca"]
    assert [kind for _job, kind in held] == ["webhooks", "webhooks"]
    pending = deliveries(client, owner, hook)
    assert [(d["state"], d["attempts"]) for d in pending] == [("pending", 0), ("pending", 0)]

    jobs.run_job(held[0][0])  # the first job sends everything due
    assert len(receiver.requests) == 2
    jobs.run_job(held[1][0])  # the second finds nothing left: no double send
    assert deliver(runner) == "0 delivered, 0 to retry, 0 failed, 0 webhooks disabled"
    assert len(receiver.requests) == 2
    assert {d["state"] for d in deliveries(client, owner, hook)} == {"delivered"}


def test_a_failing_answer_is_retried_with_backoff(client, runner, receiver, monkeypatch):
    owner, _people, project = team(client)
    hook = create_hook(client, owner, receiver.url)
    receiver.statuses = [500, 503]
    start = utcnow()
    make_issue(client, owner, project)
    assert len(receiver.requests) == 1
    [first] = deliveries(client, owner, hook)
    assert (first["state"], first["attempts"], first["response_status"]) == ("pending", 1, 500)
    assert first["error"] == "HTTP 500"
    waits = datetime.fromisoformat(first["next_attempt_at"]) - start
    assert timedelta(seconds=55) < waits < timedelta(minutes=2)

    # Not due yet: a pass now sends nothing.
    assert deliver(runner) == "0 delivered, 0 to retry, 0 failed, 0 webhooks disabled"
    at(monkeypatch, start + timedelta(minutes=1, seconds=30))
    assert deliver(runner) == "0 delivered, 1 to retry, 0 failed, 0 webhooks disabled"
    [second] = deliveries(client, owner, hook)
    assert (second["attempts"], second["response_status"]) == (2, 503)
    # Twice as long after the second failure.
    waits = datetime.fromisoformat(second["next_attempt_at"]) - (start + timedelta(minutes=1, seconds=30))
    assert waits == timedelta(minutes=2)
    at(monkeypatch, start + timedelta(minutes=4))
    assert deliver(runner) == "1 delivered, 0 to retry, 0 failed, 0 webhooks disabled"
    assert len(receiver.requests) == 3
    # The same delivery, the same body each time; signed again with each attempt's timestamp.
    assert len({r["headers"]["X-Giro-Delivery"] for r in receiver.requests}) == 1
    assert len({r["body"] for r in receiver.requests}) == 1
    [done] = deliveries(client, owner, hook)
    assert (done["state"], done["attempts"], done["response_status"], done["error"]) == (
        "delivered",
        3,
        200,
        None,
    )
    listed = client.get(hooks_url(owner), headers=owner.headers).get_json()["webhooks"]
    assert listed[0]["failing_since"] is None  # a success resets the failure clock


def test_a_redirect_is_not_followed(client, receiver):
    owner, _people, project = team(client)
    hook = create_hook(client, owner, receiver.url)
    receiver.statuses = [302]
    make_issue(client, owner, project)
    assert [r["path"] for r in receiver.requests] == ["/hook"]
    [delivery] = deliveries(client, owner, hook)
    assert delivery["state"] == "pending" and delivery["response_status"] == 302
    assert "not followed" in delivery["error"]


def test_a_webhook_failing_for_a_day_is_disabled_and_its_owners_told(client, runner, receiver, monkeypatch):
    owner, (admin,), project = team(client, "admin")
    hook = create_hook(client, owner, receiver.url)
    receiver.default_status = 500
    start = utcnow()
    make_issue(client, owner, project)
    make_issue(client, owner, project)
    assert len(receiver.requests) == 2
    at(monkeypatch, start + timedelta(hours=12))
    assert deliver(runner) == "0 delivered, 2 to retry, 0 failed, 0 webhooks disabled"
    with captured_mail() as sent:
        at(monkeypatch, start + timedelta(hours=24, minutes=1))
        assert deliver(runner) == "0 delivered, 0 to retry, 2 failed, 1 webhooks disabled"
    assert [message["To"] for message in sent] == [owner.email]  # owners, not admins
    assert receiver.url in sent[0].get_content() and "desativado" in sent[0]["Subject"]
    assert f"/tracker/o/{owner.org_id}/webhooks" in sent[0].get_content()

    [listed] = client.get(hooks_url(owner), headers=admin.headers).get_json()["webhooks"]
    assert listed["enabled"] is False and listed["disabled_at"] and "HTTP 500" in listed["disabled_reason"]
    assert {d["state"] for d in deliveries(client, owner, hook)} == {"failed"}
    # Disabled: new changes queue nothing for it.
    seen = len(receiver.requests)
    make_issue(client, owner, project)
    assert len(receiver.requests) == seen and len(deliveries(client, owner, hook)) == 2

    # Enabled again, it starts afresh.
    receiver.default_status = 200
    enabled = client.patch(f"{hooks_url(owner)}/{hook['id']}", json={"enabled": True}, headers=owner.headers)
    assert enabled.get_json()["enabled"] is True and enabled.get_json()["disabled_at"] is None
    make_issue(client, owner, project)
    assert deliveries(client, owner, hook)[0]["state"] == "delivered"


def test_a_host_resolving_to_a_private_address_at_delivery_is_not_called(client, monkeypatch):
    owner, _people, project = team(client)
    fake_dns(monkeypatch, {"hooks.example.com": "93.184.216.34"})
    hook = create_hook(client, owner, "https://hooks.example.com/giro")
    connections = []
    real_connect = socket.create_connection

    def record_connection(address, *args, **kwargs):
        connections.append(address)
        return real_connect(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", record_connection)
    # The name now answers with the cloud's metadata address (DNS rebinding).
    fake_dns(monkeypatch, {"hooks.example.com": "169.254.169.254"})
    make_issue(client, owner, project)
    assert connections == []
    [delivery] = deliveries(client, owner, hook)
    assert delivery["state"] == "pending" and delivery["response_status"] is None
    assert delivery["error"].startswith("Refused") and "private" in delivery["error"]


def test_a_member_of_two_organizations_changes_only_reach_that_organizations_webhooks(client, receiver):
    alice, bob = register(client), register(client)
    add_member(client, bob, alice)
    create_hook(client, bob, receiver.url)
    mine = make_project(client, alice, key="MINE")
    make_issue(client, alice, mine)
    assert receiver.requests == []
    theirs = make_project(client, bob, key="THEM")
    make_issue(client, bob, theirs, headers=alice.headers)
    assert len(receiver.requests) == 1


@pytest.mark.committing
def test_passes_running_at_once_send_each_delivery_once(app, monkeypatch):
    from services import job_queue
    from services.tracker import webhook_delivery

    client = app.test_client()
    owner, _people, project = team(client)
    server = Receiver()
    try:
        create_hook(client, owner, server.url)
        monkeypatch.setattr(job_queue, "submit", lambda *_args: None)  # only the passes below send
        for n in range(12):
            make_issue(client, owner, project, title=f"t{n}")
        monkeypatch.setattr(webhook_delivery, "BATCH", 3)  # several claims per pass, interleaved

        def run():
            with app.app_context():
                return webhook_delivery.deliver_due()

        reports = together([run, run, run])
        sent = [request["headers"]["X-Giro-Delivery"] for request in server.requests]
        assert len(sent) == 12 and len(set(sent)) == 12, reports
        assert sum(report.delivered for report in reports) == 12
    finally:
        server.close()


def test_a_claim_takes_no_more_than_its_batch(app, monkeypatch):
    from extensions import db
    from models.tracker_webhooks import WebhookDelivery
    from services import job_queue
    from services.tracker import webhook_delivery

    client = app.test_client()
    owner, _people, project = team(client)
    create_hook(client, owner, "http://127.0.0.1:9/hook")
    monkeypatch.setattr(job_queue, "submit", lambda *_args: None)
    for n in range(7):
        make_issue(client, owner, project, title=f"t{n}")
    with app.app_context():
        first = webhook_delivery.claim(webhook_delivery.utcnow(), 3)
        second = webhook_delivery.claim(webhook_delivery.utcnow(), 3)
        sending = db.session.scalar(
            select(func.count()).select_from(WebhookDelivery).where(WebhookDelivery.state == "sending")
        )
    assert len(first) == 3 and len(second) == 3 and not set(first) & set(second)
    assert sending == 6


def test_the_scheduler_queues_a_delivery_pass_every_minute_and_the_emails_every_five(
    app, client, receiver, monkeypatch
):
    import uuid

    from blueprints.cli_jobs import SCHEDULE
    from extensions import db
    from models.jobs import Job
    from services import job_queue
    from services.tracker import notification_mail, webhook_delivery

    assert {target: cron for target, cron in SCHEDULE} == {
        "services.stock.partitions:cadence_tick": "0 * * * *",
        "services.tracker.webhook_delivery:webhooks_tick": "* * * * *",
        "services.tracker.notification_mail:notifications_tick": "*/5 * * * *",
        "services.stock.notification_delivery:notifications_tick": "*/5 * * * *",
        "services.stock.digest:digest_tick": "5 * * * *",
        "services.tracker.attachments:sweep_tick": "35 * * * *",
    }
    assert all(callable(job_queue.resolve(target)) for target, _cron in SCHEDULE)

    owner, _people, project = team(client)
    create_hook(client, owner, receiver.url)
    dispatch = job_queue.submit
    monkeypatch.setattr(job_queue, "submit", lambda *_args: None)  # the change's own job is lost
    make_issue(client, owner, project)
    assert receiver.requests == []
    monkeypatch.setattr(job_queue, "submit", dispatch)

    with app.app_context():
        job = db.session.get(Job, uuid.UUID(webhook_delivery.webhooks_tick()))
        assert (job.kind, job.state, job.result["entregues"]) == ("webhooks", "done", 1)
        mail_job = db.session.get(Job, uuid.UUID(notification_mail.notifications_tick()))
        assert (mail_job.kind, mail_job.state) == ("notificacoes", "done")
    assert len(receiver.requests) == 1
