"""Account e-mails (registration, confirmation link, password reset) are bounded per recipient
and per client, one budget across both APIs and the pages, whether or not the address has an
account."""

from __future__ import annotations

from tests.factories import captured_mail
from tests.tracker.support import API, assert_error


def _to(outbox, address: str) -> list:
    return [message for message in outbox if message["To"] == address]


def test_one_address_receives_at_most_its_budget_of_account_mails(app, client):
    budget = int(app.config["MAIL_RATE_LIMIT"].split()[0])
    address = "owner@mail.test"
    body = {"name": "Dona", "email": address, "password": "s3nha-forte"}
    with captured_mail() as outbox:
        answers = [client.post(f"{API}/auth/register", json=body) for _ in range(budget)]
        assert [a.status_code for a in answers] == [201] * budget  # the same answer, account or not
        refused = client.post(f"{API}/auth/register", json=body)
        # The budget is the recipient's, whichever form or API asks.
        stock = client.post("/api/v1/auth/password/forgot", json={"email": address})
        page = client.post("/forgot-password", data={"email": address})
    assert len(_to(outbox, address)) == budget
    assert_error(refused, 429, "RATE_LIMITED")
    assert int(refused.headers["Retry-After"]) > 0
    assert stock.status_code == 429 and set(stock.get_json()) == {"detail"}
    assert page.status_code == 429
    # Another address is not held back by it.
    assert client.post("/api/v1/auth/password/forgot", json={"email": "other@mail.test"}).status_code == 200


def test_one_client_sends_at_most_its_budget_across_addresses(app, client):
    budget = int(app.config["MAIL_CLIENT_RATE_LIMIT"].split()[0])
    for n in range(budget):
        sent = client.post("/api/v1/auth/password/forgot", json={"email": f"p{n}@mail.test"})
        assert sent.status_code == 200
    refused = client.post("/api/v1/auth/password/forgot", json={"email": "late@mail.test"})
    assert refused.status_code == 429 and "detail" in refused.get_json()
    # Another client still can.
    elsewhere = client.post(
        "/api/v1/auth/password/forgot",
        json={"email": "late@mail.test"},
        environ_base={"REMOTE_ADDR": "203.0.113.9"},
    )
    assert elsewhere.status_code == 200


def test_a_signed_in_account_asks_for_its_link_within_the_same_budget(app, client):
    budget = int(app.config["MAIL_RATE_LIMIT"].split()[0])
    body = {"name": "Nova", "email": "fresh@mail.test", "password": "s3nha-forte"}
    registered = client.post(f"{API}/auth/register", json=body)  # its first confirmation link
    headers = {"Authorization": f"Bearer {registered.get_json()['access_token']}"}
    with captured_mail() as outbox:
        answers = [
            client.post(f"{API}/auth/resend-verification", headers=headers).status_code for _ in range(budget)
        ]
    assert answers == [204] * (budget - 1) + [429]
    assert len(_to(outbox, "fresh@mail.test")) == budget - 1


def test_a_refused_form_spends_nothing(app, client):
    budget = int(app.config["MAIL_RATE_LIMIT"].split()[0])
    bad = {"name": "Dona", "email": "typo@mail.test", "password": "short"}
    for _ in range(budget + 2):
        assert client.post(f"{API}/auth/register", json=bad).status_code == 400
    good = {**bad, "password": "s3nha-forte"}
    assert client.post(f"{API}/auth/register", json=good).status_code == 201
