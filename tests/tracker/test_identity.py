"""An address grants things only once its owner proved it: invitations, and links that expire."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from extensions import db
from models.auth import EmailVerification
from models.base import utcnow
from tests.factories import PASSWORD as STOCK_PASSWORD
from tests.factories import captured_mail, link_token, make_user
from tests.tracker.support import API, assert_error, register


def _invite(client, owner, email):
    response = client.post(
        f"{API}/organizations/{owner.org_id}/invitations",
        json={"email": email, "role": "member"},
        headers=owner.headers,
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


def _org_issues_visible(client, tenant, owner) -> bool:
    return client.get(f"{API}/workspaces/{owner.slug}/projects", headers=tenant.headers).status_code == 200


def test_an_invitation_is_accepted_only_by_the_proven_owner_of_its_address(client):
    owner = register(client, email="owner@a.test")
    invitation = _invite(client, owner, "newhire@a.test")
    # Someone registers the invited address without owning the mailbox.
    with captured_mail() as outbox:
        squatter = register(client, email="newhire@a.test", verify=False)
    assert client.get(f"{API}/invitations", headers=squatter.headers).get_json() == {"invitations": []}
    refused = client.post(f"{API}/invitations/{invitation}/accept", headers=squatter.headers)
    assert_error(refused, 403, "FORBIDDEN")
    assert not _org_issues_visible(client, squatter, owner)

    # Whoever reads that mailbox proves it, and then the invitation works.
    assert client.post(f"{API}/auth/verify-email", json={"token": link_token(outbox[-1])}).status_code == 204
    assert len(client.get(f"{API}/invitations", headers=squatter.headers).get_json()["invitations"]) == 1
    assert client.post(f"{API}/invitations/{invitation}/accept", headers=squatter.headers).status_code == 201


def test_changing_email_does_not_hand_over_invitations(client, ctx):
    owner = register(client, email="owner@a.test")
    invitation = _invite(client, owner, "newhire@a.test")
    # A member of another organization, with stock access, asks for the invited address.
    other = make_user(email="member@b.test", papel="visualizador")
    stock = client.post("/api/v1/auth/login", json={"email": "member@b.test", "senha": STOCK_PASSWORD})
    headers = {"Authorization": f"Bearer {stock.get_json()['accessToken']}"}
    with captured_mail():
        changed = client.patch(
            "/api/v1/users/me",
            json={"email": "newhire@a.test", "senhaAtual": STOCK_PASSWORD},
            headers=headers,
        )
    assert changed.status_code == 200 and changed.get_json()["email"] == "member@b.test"
    accepted = client.post(f"{API}/invitations/{invitation}/accept", headers=headers)
    assert_error(accepted, 404, "NOT_FOUND")
    assert (
        client.get("/api/v1/auth/me", headers=headers).get_json()["email"] == other.email == "member@b.test"
    )


def test_verification_links_are_single_use_and_expire(client, ctx):
    with captured_mail() as outbox:
        tenant = register(client, email="late@tracker.test", verify=False)
    token = link_token(outbox[-1])
    db.session.execute(update(EmailVerification).values(expires_at=utcnow() - timedelta(minutes=1)))
    db.session.commit()
    assert_error(client.post(f"{API}/auth/verify-email", json={"token": token}), 400, "INVALID_TOKEN")
    assert_error(client.post(f"{API}/auth/verify-email", json={"token": "made-up"}), 400, "INVALID_TOKEN")

    # A fresh link, on request.
    with captured_mail() as outbox:
        assert client.post(f"{API}/auth/resend-verification", headers=tenant.headers).status_code == 204
    fresh = link_token(outbox[-1])
    assert client.post(f"{API}/auth/verify-email", json={"token": fresh}).status_code == 204
    assert_error(client.post(f"{API}/auth/verify-email", json={"token": fresh}), 400, "INVALID_TOKEN")
    assert client.get(f"{API}/auth/me", headers=tenant.headers).get_json()["email_verified"] is True


def test_two_accounts_racing_for_one_address_leave_one_owner(client):
    with captured_mail() as outbox:
        first = register(client, email="same@tracker.test", password="first-pass-1", verify=False)
        second = register(client, email="same@tracker.test", password="second-pass-2", verify=False)
    links = [link_token(m) for m in outbox]
    # Until proven, each signs in with its own password.
    for tenant, password in ((first, "first-pass-1"), (second, "second-pass-2")):
        login = client.post(f"{API}/auth/login", json={"email": "same@tracker.test", "password": password})
        assert login.get_json()["user"]["id"] == tenant.user_id
    assert client.post(f"{API}/auth/verify-email", json={"token": links[1]}).status_code == 204
    assert_error(client.post(f"{API}/auth/verify-email", json={"token": links[0]}), 409, "CONFLICT")
    # The proven owner alone signs in with the address now.
    lost = client.post(f"{API}/auth/login", json={"email": "same@tracker.test", "password": "first-pass-1"})
    assert_error(lost, 401, "INVALID_CREDENTIALS")


def test_registering_counts_as_activity(client):
    from tests.tracker.support import superadmin

    root = superadmin(client)
    before = client.get(f"{API}/admin/stats", headers=root.headers).get_json()["users"]["active_last_30d"]
    register(client)
    after = client.get(f"{API}/admin/stats", headers=root.headers).get_json()["users"]["active_last_30d"]
    assert after == before + 1
