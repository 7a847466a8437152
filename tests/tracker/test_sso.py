"""Single sign-on through the API, the pages and the CLI, against a real OpenID provider
(panva's oidc-provider on loopback), a provider that breaks one rule at a time, and a DNS
server for the domains' proofs."""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import func, select

from extensions import db
from models.auth import User
from tests.tracker.sso_support import HostileProvider, TxtServer, configure, sign_in, signed_in_email
from tests.tracker.support import API, PASSWORD, add_member, assert_error, register, superadmin

ACME_ID, ACME_SECRET = "giro-acme", "acme-test-secret"


@pytest.fixture
def txt(app):
    server = TxtServer()
    app.config["SSO_DNS_NAMESERVERS"] = server.address
    yield server
    app.config["SSO_DNS_NAMESERVERS"] = ""
    server.close()


@pytest.fixture
def hostile():
    provider = HostileProvider()
    yield provider
    provider.close()


def _enterprise(client, tenant, root=None):
    root = root or superadmin(client)
    response = client.patch(
        f"{API}/admin/organizations/{tenant.org_id}", json={"plan": "enterprise"}, headers=root.headers
    )
    assert response.status_code == 200, response.get_json()
    return root


def _acme(client, txt, issuer, client_id=ACME_ID, secret=ACME_SECRET, **extra):
    """An Enterprise organization whose provider vouches for acme.test, proven by its TXT record."""
    owner = register(client, email="owner@acme.test")
    root = _enterprise(client, owner)
    saved = configure(client, owner, issuer, client_id, secret, **extra)
    assert saved.status_code == 200, saved.get_json()
    status = saved.get_json()["domain_status"][0]
    txt.records[status["txt_name"]] = [status["txt_value"]]
    proven = client.post(
        f"{API}/organizations/{owner.org_id}/sso/domains/acme.test/verify", headers=owner.headers
    )
    assert proven.status_code == 200 and proven.get_json()["verified"], proven.get_json()
    return owner, root


def _audit(client, owner, action: str) -> list[dict]:
    """The organization's audit log entries of one action, read through the API."""
    response = client.get(
        f"{API}/organizations/{owner.org_id}/audit-log",
        query_string={"action": action},
        headers=owner.headers,
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()["events"]


def _members(client, owner) -> dict[str, str]:
    body = client.get(f"{API}/organizations/{owner.org_id}/members", headers=owner.headers).get_json()
    return {m["user"]["email"] if "user" in m else m["email"]: m["role"] for m in body["members"]}


# --------------------------------------------------------------------------- settings


def test_settings_need_the_plan_feature_and_an_owner_or_admin(client, oidc_provider):
    owner, (member,), _project = _team(client)
    url = f"{API}/organizations/{owner.org_id}/sso"
    body = {
        "issuer": oidc_provider.issuer,
        "client_id": ACME_ID,
        "client_secret": ACME_SECRET,
        "domains": ["acme.test"],
    }
    refused = assert_error(client.put(url, json=body, headers=owner.headers), 402, "PLAN_LIMIT_REACHED")
    assert refused["details"]["feature"] == "sso" and "enterprise" in refused["details"]["available_in"]
    _csrf(client, owner)
    page = client.get(f"/tracker/o/{owner.org_id}/sso")
    _enterprise(client, owner)
    assert_error(client.put(url, json=body, headers=member.headers), 403, "FORBIDDEN")
    stranger = register(client)
    assert_error(client.get(url, headers=stranger.headers), 404, "NOT_FOUND")
    assert_error(client.get(url, headers=owner.headers), 404, "NOT_FOUND")  # none yet

    saved = client.put(url, json=body, headers=owner.headers)
    assert saved.status_code == 200, saved.get_json()
    shown = client.get(url, headers=owner.headers).get_json()
    assert shown["has_client_secret"] is True and "client_secret" not in shown
    assert shown["domains"] == ["acme.test"] and shown["domain_status"][0]["verified"] is False
    assert shown["domain_status"][0]["txt_name"] == "_giro-sso.acme.test"
    assert shown["login_url"].endswith(f"/tracker/sso/{owner.slug}/login")
    # Without a secret the stored one stays; the secret is stored encrypted.
    kept = client.put(
        url, json={k: v for k, v in body.items() if k != "client_secret"}, headers=owner.headers
    )
    assert kept.status_code == 200 and kept.get_json()["has_client_secret"]
    stored = db.session.execute(db.text("SELECT client_secret_encrypted FROM sso_connections")).scalar()
    assert ACME_SECRET not in stored
    assert page.status_code == 200 and "Enterprise" in page.get_data(as_text=True)


def _team(client):
    owner = register(client, email="owner@acme.test")
    member = register(client, email="member@acme.test")
    add_member(client, owner, member, "member")
    return owner, (member,), None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"issuer": "http://login.example.com"}, "issuer"),
        ({"issuer": "https://10.0.0.5"}, "issuer"),
        ({"domains": ["not a domain"]}, "domains"),
        ({"enforced": True, "enabled": False}, "enforced"),
        ({"default_role": "owner"}, "default_role"),
    ],
)
def test_bad_settings_are_refused_naming_the_field(client, oidc_provider, change, field):
    owner = register(client)
    _enterprise(client, owner)
    body = {"issuer": oidc_provider.issuer, "client_id": ACME_ID, "client_secret": ACME_SECRET, **change}
    response = client.put(f"{API}/organizations/{owner.org_id}/sso", json=body, headers=owner.headers)
    refused = assert_error(response, 400, "VALIDATION_ERROR")
    assert field in str(refused), refused
    first = {"issuer": oidc_provider.issuer, "client_id": ACME_ID, "domains": ["acme.test"]}
    missing = client.put(f"{API}/organizations/{owner.org_id}/sso", json=first, headers=owner.headers)
    assert "client_secret" in str(assert_error(missing, 400, "VALIDATION_ERROR"))


def test_a_domain_is_proven_by_its_txt_record_and_belongs_to_one_organization(client, oidc_provider, txt):
    owner = register(client)
    root = _enterprise(client, owner)
    status = configure(client, owner, oidc_provider.issuer, ACME_ID, ACME_SECRET).get_json()["domain_status"][
        0
    ]
    verify = f"{API}/organizations/{owner.org_id}/sso/domains/acme.test/verify"
    missing = client.post(verify, headers=owner.headers).get_json()
    assert missing["verified"] is False and "Nenhum registro TXT" in missing["check"]
    txt.records[status["txt_name"]] = ["giro-sso=someone-elses-token"]
    wrong = client.post(verify, headers=owner.headers).get_json()
    assert wrong["verified"] is False and status["txt_value"] in wrong["check"]
    txt.records[status["txt_name"]] = ["v=spf1 -all", status["txt_value"]]
    proven = client.post(verify, headers=owner.headers).get_json()
    assert proven["verified"] is True and proven["verified_by"] == "dns"

    rival = register(client)
    _enterprise(client, rival, root)
    taken = configure(client, rival, oidc_provider.issuer, "giro-beta", "beta-test-secret")
    body = assert_error(taken, 409, "CONFLICT")
    assert "acme.test" in body["message"]
    assert len(_audit(client, owner, "sso.domain_verified")) == 1


def test_test_the_connection_says_what_is_wrong(client, oidc_provider, hostile):
    owner = register(client)
    _enterprise(client, owner)
    configure(client, owner, oidc_provider.issuer, ACME_ID, ACME_SECRET)
    url = f"{API}/organizations/{owner.org_id}/sso/test"
    good = client.post(url, headers=owner.headers).get_json()
    assert good["ok"] is True and [c["name"] for c in good["checks"]] == ["discovery", "pkce", "jwks"]
    configure(client, owner, "http://127.0.0.1:9", ACME_ID, None)
    down = client.post(url, headers=owner.headers).get_json()
    assert down["ok"] is False and "não respondeu" in down["checks"][0]["message"]
    configure(client, owner, hostile.issuer + "/", ACME_ID, None)  # the document names it without "/"
    mismatch = client.post(url, headers=owner.headers).get_json()
    assert mismatch["ok"] is False and "difere do configurado" in mismatch["checks"][0]["message"]
    page = client.post(f"/tracker/o/{owner.org_id}/sso/test", headers=_csrf(client, owner))
    assert "difere do configurado" in page.get_data(as_text=True)


def _csrf(client, tenant) -> dict:
    """Sign ``tenant`` in on the pages (cookie) and return the CSRF header for page POSTs."""
    client.post("/login", data={"email": tenant.email, "senha": PASSWORD})
    cookie = client.get_cookie("csrf_access_token")
    return {"X-CSRF-TOKEN": cookie.value} if cookie else {}


# --------------------------------------------------------------------------- signing in


def test_a_first_sign_in_creates_the_account_and_makes_it_a_member(client, oidc_provider, txt):
    owner, _root = _acme(client, txt, oidc_provider.issuer, default_role="viewer")
    ended = sign_in(client, owner.slug, "ana@acme.test", next_url="/tracker/")
    assert ended.status_code == 302 and ended.headers["Location"] == "/tracker/"
    assert signed_in_email(client) == "ana@acme.test"
    assert _members(client, owner)["ana@acme.test"] == "viewer"
    ana = db.session.scalar(select(User).where(User.email == "ana@acme.test"))
    assert ana.name == "Ana Acme" and ana.email_verified_at is not None
    # No password was set: none signs in.
    assert_error(
        client.post(f"{API}/auth/login", json={"email": "ana@acme.test", "password": PASSWORD}),
        401,
        "INVALID_CREDENTIALS",
    )
    # The next sign-in finds the same account through its identity.
    client.post("/logout", headers={"X-CSRF-TOKEN": client.get_cookie("csrf_access_token").value})
    assert sign_in(client, owner.slug, "ana@acme.test").status_code == 302
    assert db.session.scalar(select(func.count()).select_from(User).where(User.email == "ana@acme.test")) == 1
    assert len(_audit(client, owner, "sso.account_created")) == 1
    assert len(_audit(client, owner, "sso.signed_in")) == 2


def test_an_account_with_the_proven_address_is_linked_not_duplicated(client, oidc_provider, txt):
    owner, _root = _acme(client, txt, oidc_provider.issuer)
    bruno = register(client, email="bruno@acme.test")
    squatter = register(client, email="olga@acme.test", verify=False)
    assert sign_in(client, owner.slug, "bruno@acme.test").status_code == 302
    assert signed_in_email(client) == "bruno@acme.test"
    assert (
        db.session.scalar(select(func.count()).select_from(User).where(User.email == "bruno@acme.test")) == 1
    )
    assert [e["target"]["id"] for e in _audit(client, owner, "sso.linked")] == [bruno.user_id]
    # Someone who only claimed an address (never proved it) does not get the provider's person.
    assert sign_in(client, owner.slug, "olga@acme.test").status_code == 302
    olga = db.session.scalars(
        select(User).where(User.email == "olga@acme.test", User.email_verified_at.is_not(None))
    ).one()
    assert str(olga.id) != squatter.user_id


@pytest.mark.parametrize(
    ("email", "message"),
    [
        ("carla@acme.test", "não confirma que o e-mail carla@acme.test é seu"),
        ("dora@outra.test", "não pertence aos domínios desta organização"),
    ],
)
def test_an_unproven_or_foreign_address_is_refused_and_nothing_is_created(
    client, oidc_provider, txt, email, message
):
    owner, _root = _acme(client, txt, oidc_provider.issuer)
    refused = sign_in(client, owner.slug, email)
    assert refused.status_code == 400 and message in refused.get_data(as_text=True)
    assert db.session.scalar(select(func.count()).select_from(User).where(User.email == email)) == 0
    assert signed_in_email(client) is None
    assert [e["details"]["reason"] for e in _audit(client, owner, "sso.refused")] in (
        ["email_unverified"],
        ["email_outside_domains"],
    )


def test_a_replayed_state_or_code_and_another_browser_are_refused(client, app, oidc_provider, txt):
    owner, _root = _acme(client, txt, oidc_provider.issuer)
    started = client.get(f"/tracker/sso/{owner.slug}/login", query_string={"login_hint": "ana@acme.test"})
    from tests.tracker.sso_support import through_provider

    query = through_provider(started.headers["Location"])
    # The same answer in another browser (no cookie of this sign-in): refused.
    other = app.test_client()
    assert "expirou ou já foi usado" in other.get(f"/tracker/sso/callback?{query}").get_data(as_text=True)
    assert client.get(f"/tracker/sso/callback?{query}").status_code == 302
    replay = client.get(f"/tracker/sso/callback?{query}")
    assert replay.status_code == 400 and "expirou ou já foi usado" in replay.get_data(as_text=True)
    # The used code under a new sign-in's state: the provider refuses it.
    code = dict(pair.split("=", 1) for pair in query.split("&"))["code"]
    fresh = client.get(f"/tracker/sso/{owner.slug}/login", query_string={"login_hint": "ana@acme.test"})
    state = dict(p.split("=", 1) for p in fresh.headers["Location"].split("?", 1)[1].split("&"))["state"]
    reused = client.get("/tracker/sso/callback", query_string={"code": code, "state": state})
    assert reused.status_code == 400 and "recusou o código" in reused.get_data(as_text=True)


def test_a_provider_that_is_down_is_said_on_the_page(client, oidc_provider, txt):
    owner, _root = _acme(client, txt, oidc_provider.issuer)
    configure(client, owner, "http://127.0.0.1:9", ACME_ID, None)
    page = client.get(f"/tracker/sso/{owner.slug}/login")
    assert page.status_code == 502 and "não respondeu" in page.get_data(as_text=True)
    unknown = client.get("/tracker/sso/no-such-org/login")
    assert unknown.status_code == 400 and "não está ativo" in unknown.get_data(as_text=True)


@pytest.mark.parametrize(
    ("flaw", "message"),
    [
        ("foreign_key", "assinatura do token"),
        ("expired", "expirou"),
        ("future", "data no futuro"),
        ("nonce", "nonce diferente"),
        ("audience", "outro cliente"),
        ("issuer", "outro emissor"),
        ("unverified", "não confirma"),
    ],
)
def test_each_broken_id_token_is_refused(client, hostile, txt, flaw, message):
    owner, _root = _acme(client, txt, hostile.issuer, client_id="hostile-client", secret="s3cret-s3cret")
    hostile.flaw = flaw
    hostile.email_verified = flaw != "unverified"
    refused = sign_in(client, owner.slug, "ana@acme.test")
    assert refused.status_code == 400, refused.get_data(as_text=True)[:300]
    assert message in refused.get_data(as_text=True)
    assert db.session.scalar(select(func.count()).select_from(User).where(User.email == "ana@acme.test")) == 0
    hostile.flaw, hostile.email_verified = None, True
    assert sign_in(client, owner.slug, "ana@acme.test").status_code == 302


def test_a_rotated_signing_key_is_fetched_again(client, hostile, txt):
    owner, _root = _acme(client, txt, hostile.issuer, client_id="hostile-client", secret="s3cret-s3cret")
    assert sign_in(client, owner.slug, "ana@acme.test").status_code == 302
    fetched = hostile.jwks_fetches
    hostile.rotate()
    assert sign_in(client, owner.slug, "ana@acme.test").status_code == 302
    assert hostile.jwks_fetches == fetched + 1


# --------------------------------------------------------------------------- the login page


def test_the_login_page_asks_the_address_first_and_sends_vouched_ones_to_the_provider(
    client, oidc_provider, txt
):
    assert 'name="senha"' in client.get("/login").get_data(as_text=True)
    owner, _root = _acme(client, txt, oidc_provider.issuer)
    first = client.get("/login").get_data(as_text=True)
    assert 'name="senha"' not in first and "Continuar" in first
    vouched = client.post("/login", data={"email": "Ana@Acme.test", "next": "/tracker/"})
    # A page that goes on by itself (a redirect of the form's own would break its form-action CSP).
    assert vouched.status_code == 200
    refresh = re.search(r'http-equiv="refresh" content="0;url=([^"]+)"', vouched.get_data(as_text=True))
    target = urlsplit(html.unescape(refresh.group(1)))
    assert target.path == f"/tracker/sso/{owner.slug}/login"
    assert parse_qs(target.query) == {"login_hint": ["ana@acme.test"], "next": ["/tracker/"]}
    other = client.post("/login", data={"email": "someone@elsewhere.test"})
    assert other.status_code == 200 and 'name="senha"' in other.get_data(as_text=True)


# --------------------------------------------------------------------------- enforcement


def test_enforcement_refuses_passwords_and_ends_sessions_except_the_owners(client, app, oidc_provider, txt):
    owner, root = _acme(client, txt, oidc_provider.issuer)
    member = register(client, email="bruno@acme.test")
    add_member(client, owner, member, "admin")
    outsider = register(client, email="zeca@elsewhere.test")
    add_member(client, owner, outsider, "member")
    assert client.get(f"{API}/auth/me", headers=member.headers).status_code == 200
    url = f"{API}/organizations/{owner.org_id}/sso"
    on = client.put(
        url,
        json={
            "issuer": oidc_provider.issuer,
            "client_id": ACME_ID,
            "domains": ["acme.test"],
            "enabled": True,
            "enforced": True,
        },
        headers=owner.headers,
    )
    assert on.status_code == 200, on.get_json()

    # The member's session ended; passwords are refused on both APIs and the login page.
    assert client.get(f"{API}/auth/me", headers=member.headers).status_code == 401
    login = {"email": "bruno@acme.test", "password": PASSWORD}
    refused = assert_error(client.post(f"{API}/auth/login", json=login), 403, "SSO_REQUIRED")
    assert f"/tracker/sso/{owner.slug}/login" in refused["message"]
    stock = client.post("/api/v1/auth/login", json={"email": "bruno@acme.test", "senha": PASSWORD})
    assert stock.status_code == 403
    page = client.post("/login", data={"email": "bruno@acme.test", "senha": PASSWORD})
    assert page.status_code == 403 and "exige login único" in page.get_data(as_text=True)
    assert f"/tracker/sso/{owner.slug}/login" in page.get_data(as_text=True)
    # A wrong password says only that (no hint that the account exists or is covered).
    wrong = client.post(f"{API}/auth/login", json={**login, "password": "wrong-password-1"})
    assert_error(wrong, 401, "INVALID_CREDENTIALS")
    # The owner keeps the password (break-glass, audited); an address outside the domains too.
    assert (
        client.post(f"{API}/auth/login", json={"email": owner.email, "password": PASSWORD}).status_code == 200
    )
    assert len(_audit(client, owner, "sso.break_glass")) == 1
    assert (
        client.post(f"{API}/auth/login", json={"email": outsider.email, "password": PASSWORD}).status_code
        == 200
    )
    # Through the provider the member signs in.
    assert sign_in(client, owner.slug, "bruno@acme.test").status_code == 302

    # Disabling, or a plan without the feature, gives the password back: nobody is locked out.
    client.patch(f"{API}/admin/organizations/{owner.org_id}", json={"plan": "free"}, headers=root.headers)
    assert client.post(f"{API}/auth/login", json=login).status_code == 200


def test_an_operator_disables_a_gone_provider_and_vouches_for_a_domain(client, runner, oidc_provider):
    owner = register(client)
    _enterprise(client, owner)
    configure(client, owner, oidc_provider.issuer, ACME_ID, ACME_SECRET, enforced=True)
    proven = runner.invoke(args=["tracker", "sso-verify-domain", owner.slug, "acme.test"])
    assert proven.exit_code == 0, proven.output
    status = client.get(f"{API}/organizations/{owner.org_id}/sso", headers=owner.headers).get_json()
    assert status["domain_status"][0]["verified_by"] == "operator"
    disabled = runner.invoke(args=["tracker", "sso-disable", owner.slug])
    assert disabled.exit_code == 0 and "disabled" in disabled.output
    shown = client.get(f"{API}/organizations/{owner.org_id}/sso", headers=owner.headers).get_json()
    assert shown["enabled"] is False and shown["enforced"] is False
    missing = runner.invoke(args=["tracker", "sso-disable", "no-such-org"])
    assert missing.exit_code != 0 and "no-such-org" in missing.output


def test_the_settings_page_saves_and_shows_the_txt_record(client, oidc_provider):
    owner = register(client)
    _enterprise(client, owner)
    headers = _csrf(client, owner)
    form = {
        "issuer": oidc_provider.issuer,
        "client_id": ACME_ID,
        "client_secret": ACME_SECRET,
        "domains": "acme.test\nfilial.acme.test",
        "enabled": "on",
    }
    saved = client.post(f"/tracker/o/{owner.org_id}/sso", data=form, headers=headers)
    text = saved.get_data(as_text=True)
    assert saved.status_code == 200 and "Configuração salva" in text
    assert "_giro-sso.filial.acme.test" in text and "giro-sso=" in text
    bad = client.post(
        f"/tracker/o/{owner.org_id}/sso", data={**form, "issuer": "http://login.example.com"}, headers=headers
    )
    assert bad.status_code == 422 and 'aria-invalid="true"' in bad.get_data(as_text=True)


def test_removing_the_settings_gives_passwords_back_whatever_the_plan(client, oidc_provider, txt):
    owner, root = _acme(client, txt, oidc_provider.issuer, enforced=True)
    member = register(client, email="bruno@acme.test")
    add_member(client, owner, member, "member")
    login = {"email": "bruno@acme.test", "password": PASSWORD}
    assert_error(client.post(f"{API}/auth/login", json=login), 403, "SSO_REQUIRED")
    client.patch(f"{API}/admin/organizations/{owner.org_id}", json={"plan": "free"}, headers=root.headers)
    url = f"{API}/organizations/{owner.org_id}/sso"
    assert_error(client.delete(url, headers=member.headers), 401, "UNAUTHORIZED")  # its session ended
    assert client.delete(url, headers=owner.headers).status_code == 204
    assert_error(client.delete(url, headers=owner.headers), 404, "NOT_FOUND")
    assert client.post(f"{API}/auth/login", json=login).status_code == 200
    # The domain is free again for another organization to prove.
    rival = register(client)
    _enterprise(client, rival, root)
    assert configure(client, rival, oidc_provider.issuer, "giro-beta", "beta-test-secret").status_code == 200


def test_the_settings_page_proves_a_domain_by_its_txt_record(client, oidc_provider, txt):
    owner = register(client)
    _enterprise(client, owner)
    status = configure(client, owner, oidc_provider.issuer, ACME_ID, ACME_SECRET).get_json()["domain_status"][
        0
    ]
    headers = _csrf(client, owner)
    verify = f"/tracker/o/{owner.org_id}/sso/domains/acme.test/verify"
    missing = client.post(verify, headers=headers).get_data(as_text=True)
    assert "Nenhum registro TXT em _giro-sso.acme.test" in missing and "aguardando comprovação" in missing
    txt.records[status["txt_name"]] = [status["txt_value"]]
    proven = client.post(verify, headers=headers).get_data(as_text=True)
    assert "Domínio comprovado" in proven and "aguardando comprovação" not in proven
