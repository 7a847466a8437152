"""``services.unique``: which violations become a 409, on the engine under test.

The race tests reach these paths only on PostgreSQL (SQLite queues writers), so
the translation is pinned down here on both engines, with the duplicate written
directly, as a racing transaction would have committed it.
"""

from __future__ import annotations

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from extensions import db
from models.base import utcnow
from models.stock import Loja
from models.tracker import Invitation, Plan
from services import unique
from services.tracker import accounts
from tests.factories import make_loja, make_user


def _plan(plan_id: str) -> Plan:
    limits = {"members": 1, "projects": 1, "issues": 1, "storage_bytes": 1}
    return Plan(id=plan_id, name=plan_id, price_brl=0, limits=limits, features={})


def test_a_known_duplicate_is_a_conflict_and_the_transaction_goes_on(ctx):
    with pytest.raises(unique.DuplicateError) as raised, unique.or_conflict():
        db.session.add(_plan("free"))
    assert raised.value.constraint == "pk_plans"
    assert (raised.value.status, raised.value.code) == (409, "CONFLICT")
    assert raised.value.message == "A plan with this id already exists"

    # Only the SAVEPOINT rolled back: the transaction still reads and writes.
    with unique.or_conflict():
        db.session.add(_plan("outro"))
    assert db.session.scalar(select(func.count()).select_from(Plan).where(Plan.id == "outro")) == 1


def test_the_partial_index_refuses_a_second_pending_invitation_only(ctx):
    organization = accounts.create_organization("Loja Teste", make_user())

    def invitation(**fields) -> Invitation:
        return Invitation(organization_id=organization.id, email="alguem@giro.test", role="member", **fields)

    with unique.or_conflict():
        db.session.add(invitation())
        db.session.add(invitation(accepted_at=utcnow()))
    with pytest.raises(unique.DuplicateError) as raised, unique.or_conflict():
        db.session.add(invitation())
    assert raised.value.constraint == "uq_invitations_pending_organization_id_email"
    assert raised.value.extra == {"field": "email"}


def test_other_violations_are_not_answers(ctx):
    taken = make_user()
    # A unique key no service settles this way (the importer runs one file at a time).
    make_loja(codigo="L777")
    with pytest.raises(IntegrityError), unique.or_conflict():
        db.session.add(
            Loja(codigo="L777", nome="Outra", cidade="Recife", lat=0, lng=0, is_cd=False, bloqueada=False)
        )
    # Not a unique key at all: a foreign key.
    with pytest.raises(IntegrityError), unique.or_conflict():
        db.session.add(Invitation(organization_id=taken.id, email="x@giro.test", role="member"))
