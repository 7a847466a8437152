"""The organization's people page: members, roles, invitations and accepting one, through the pages."""

from __future__ import annotations

from tests.test_pages_tracker import HX, sign_in
from tests.tracker.support import API, add_member, register


def members_path(tenant) -> str:
    return f"/tracker/o/{tenant.org_id}/members"


def api_roles(client, owner) -> dict[str, str]:
    body = client.get(f"{API}/organizations/{owner.org_id}/members", headers=owner.headers).get_json()
    return {m["user"]["email"]: m["role"] for m in body["members"]}


def test_an_owner_invites_and_the_invitee_accepts_on_the_tracker_page(client):
    owner = register(client, name="Olga Dona")
    csrf = sign_in(client, owner)
    page = client.get(members_path(owner)).get_data(as_text=True)
    assert "Olga Dona" in page and "Convidar" in page
    # The only owner is offered no way out.
    assert f"/members/{owner.user_id}/remove" not in page

    invited = client.post(
        f"{members_path(owner)[: -len('/members')]}/invitations",
        data={"email": "Bruna@Loja.test", "role": "admin"},
        headers={**csrf, **HX},
    )
    assert invited.status_code == 200
    body = invited.get_data(as_text=True)
    assert "Convite criado para bruna@loja.test" in body and "<html" not in body
    again = client.post(
        f"/tracker/o/{owner.org_id}/invitations", data={"email": "bruna@loja.test"}, headers={**csrf, **HX}
    )
    assert again.status_code == 409
    assert "Esse endereço já tem um convite pendente." in again.get_data(as_text=True)
    bad = client.post(
        f"/tracker/o/{owner.org_id}/invitations", data={"email": "não é e-mail"}, headers={**csrf, **HX}
    )
    assert bad.status_code == 422 and "Informe um e-mail válido." in bad.get_data(as_text=True)

    bruna = register(client, name="Bruna Loja", email="bruna@loja.test")
    csrf = sign_in(client, bruna)
    index = client.get("/tracker/").get_data(as_text=True)
    assert "Convites para você" in index
    invitation_id = index.split("/tracker/invitations/")[1].split("/accept")[0]
    accepted = client.post(f"/tracker/invitations/{invitation_id}/accept", headers={**csrf, **HX})
    assert accepted.status_code == 200 and accepted.headers["HX-Redirect"] == "/tracker/"
    assert api_roles(client, owner)["bruna@loja.test"] == "admin"
    assert "Convites para você" not in client.get("/tracker/").get_data(as_text=True)
    # Accepting twice is refused, not a second membership.
    again = client.post(f"/tracker/invitations/{invitation_id}/accept", headers={**csrf, **HX})
    assert again.status_code == 404


def test_roles_follow_the_api_rules(client):
    owner = register(client, name="Olga Dona")
    admin = register(client, name="Ana Admin")
    member = register(client, name="Mauro Membro")
    add_member(client, owner, admin, role="admin")
    add_member(client, owner, member, role="member")

    csrf = sign_in(client, owner)
    role_url = f"/tracker/o/{owner.org_id}/members/{member.user_id}/role"
    changed = client.post(role_url, data={"role": "viewer"}, headers={**csrf, **HX})
    assert changed.status_code == 200 and "<html" not in changed.get_data(as_text=True)
    assert api_roles(client, owner)[member.email] == "viewer"
    invalid = client.post(role_url, data={"role": "king"}, headers={**csrf, **HX})
    assert invalid.status_code == 422 and "Escolha uma das opções." in invalid.get_data(as_text=True)
    last_owner = client.post(
        f"/tracker/o/{owner.org_id}/members/{owner.user_id}/role",
        data={"role": "admin"},
        headers={**csrf, **HX},
    )
    assert last_owner.status_code == 409
    assert "A organização precisa de pelo menos um proprietário." in last_owner.get_data(as_text=True)

    # An admin manages, but never the owner role.
    csrf = sign_in(client, admin)
    page = client.get(members_path(owner)).get_data(as_text=True)
    assert 'value="owner"' not in page
    refused = client.post(
        f"/tracker/o/{owner.org_id}/members/{owner.user_id}/role",
        data={"role": "member"},
        headers={**csrf, **HX},
    )
    assert refused.status_code == 403
    assert "Só um proprietário pode dar ou tirar o papel de proprietário." in refused.get_data(as_text=True)
    assert api_roles(client, owner)[owner.email] == "owner"

    # A viewer sees the people, with no controls, and cannot invite.
    csrf = sign_in(client, member)
    page = client.get(members_path(owner)).get_data(as_text=True)
    assert "Ana Admin" in page and "<select" not in page and "Convidar" not in page
    refused = client.post(
        f"/tracker/o/{owner.org_id}/invitations", data={"email": "x@loja.test"}, headers={**csrf, **HX}
    )
    assert refused.status_code == 403
    invitations = client.get(f"{API}/organizations/{owner.org_id}/invitations", headers=owner.headers)
    assert invitations.get_json()["invitations"] == []


def test_removing_leaving_revoking_and_strangers(client):
    owner = register(client, name="Olga Dona")
    member = register(client, name="Mauro Membro")
    leaver = register(client, name="Lia Sai")
    stranger = register(client, name="Otto Fora")
    add_member(client, owner, member)
    add_member(client, owner, leaver)

    csrf = sign_in(client, owner)
    removed = client.post(
        f"/tracker/o/{owner.org_id}/members/{member.user_id}/remove", headers={**csrf, **HX}
    )
    assert removed.status_code == 200 and "Mauro Membro" not in removed.get_data(as_text=True)
    client.post(
        f"/tracker/o/{owner.org_id}/invitations", data={"email": "tia@loja.test"}, headers={**csrf, **HX}
    )
    pending = client.get(f"{API}/organizations/{owner.org_id}/invitations", headers=owner.headers).get_json()
    revoked = client.post(
        f"/tracker/o/{owner.org_id}/invitations/{pending['invitations'][0]['id']}/revoke",
        headers={**csrf, **HX},
    )
    assert revoked.status_code == 200 and "Nenhum convite pendente." in revoked.get_data(as_text=True)
    # Without the CSRF token nothing changes.
    assert (
        client.post(f"/tracker/o/{owner.org_id}/members/{leaver.user_id}/remove", headers=HX).status_code
        == 400
    )

    csrf = sign_in(client, leaver)
    assert f"/members/{leaver.user_id}/remove" in client.get(members_path(owner)).get_data(as_text=True)
    left = client.post(f"/tracker/o/{owner.org_id}/members/{leaver.user_id}/remove", headers={**csrf, **HX})
    assert left.status_code == 200 and left.headers["HX-Redirect"] == "/tracker/"
    assert set(api_roles(client, owner)) == {owner.email}

    sign_in(client, stranger)
    assert client.get(members_path(owner)).status_code == 404
    csrf = sign_in(client, stranger)
    for path in (
        f"/tracker/o/{owner.org_id}/invitations",
        f"/tracker/o/{owner.org_id}/members/{owner.user_id}/remove",
        f"/tracker/o/{owner.org_id}/members/{owner.user_id}/role",
    ):
        response = client.post(path, data={"email": "a@b.test", "role": "member"}, headers={**csrf, **HX})
        assert response.status_code == 404, path
