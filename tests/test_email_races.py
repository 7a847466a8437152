"""One address, many accounts at once: every registration succeeds, one proof wins."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from extensions import db
from models.auth import User
from tests.factories import captured_mail, link_token
from tests.racing import RACERS, one_winner, race
from tests.tracker.support import API, PASSWORD


@pytest.mark.committing
def test_registrations_of_one_address_all_succeed_and_one_proof_wins(app):
    with captured_mail() as outbox:
        registered = race(
            app,
            [
                lambda c, n=n: c.post(
                    f"{API}/auth/register",
                    json={"name": f"Racer {n}", "email": "same@race.test", "password": PASSWORD},
                )
                for n in range(RACERS)
            ],
        )
    assert [status for status, _ in registered] == [201] * RACERS, registered
    tokens = [link_token(m) for m in outbox if m["To"] == "same@race.test"]
    assert len(tokens) == RACERS

    proofs = race(app, [lambda c, t=t: c.post(f"{API}/auth/verify-email", json={"token": t}) for t in tokens])
    one_winner(proofs, won=204)
    with app.app_context():
        owners = db.session.scalar(
            select(func.count())
            .select_from(User)
            .where(User.email == "same@race.test", User.email_verified_at.is_not(None))
        )
    assert owners == 1
