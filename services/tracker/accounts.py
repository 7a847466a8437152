"""Tracker accounts: registration (user + organization + default workspace) and ``me``.

Credentials, tokens and rotation are the shared ones of ``services.auth``: a
person registered here signs in to the stock service with the same password.
"""

from __future__ import annotations

import re
import secrets
import unicodedata
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from sqlalchemy import exists, select

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import Membership, Organization, Workspace
from services import auth as auth_service
from services import identity, unique
from services.tracker import audit, plans

_NON_SLUG = re.compile(r"[^a-z0-9]+")
T = TypeVar("T")


def slugify(text: str, *, max_length: int = 60) -> str:
    """ASCII, lowercase, hyphen-separated; never empty."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = _NON_SLUG.sub("-", ascii_text.lower()).strip("-")[:max_length].strip("-")
    return slug or "workspace"


# Random suffixes tried once ``base``..``base-11`` are taken; 32 bits each, so
# running out means something other than a taken slug is wrong.
RANDOM_SLUG_TRIES = 8


def _slug_candidates(model, base: str) -> Iterator[str]:
    """``base``, ``base-2`` ... ``base-11`` not yet used by ``model``, then random suffixes.

    Lazy: each candidate is looked up just before it is tried, so a retry sees the
    slugs that racing transactions committed meanwhile.
    """
    base = slugify(base)
    for candidate in [base] + [f"{base}-{n}" for n in range(2, 12)]:
        if not db.session.scalar(select(exists().where(model.slug == candidate))):
            yield candidate
    for _ in range(RANDOM_SLUG_TRIES):
        yield f"{base}-{secrets.token_hex(4)}"


def _insert_with_free_slug(model, constraint: str, base: str, build: Callable[[str], T]) -> T:
    """Insert ``build(slug)`` with the first free slug derived from ``base``.

    Two requests can pick the same free slug at once; ``constraint`` refuses the
    second, whose SAVEPOINT then rolls back, and it tries the next candidate.
    """
    for slug in _slug_candidates(model, base):
        row = build(slug)
        try:
            with unique.or_conflict():
                db.session.add(row)
        except unique.DuplicateError as exc:
            if exc.constraint != constraint:
                raise
            continue
        return row
    raise unique.conflict(constraint)


def create_organization(name: str, owner: User, plan_id: str = plans.DEFAULT_PLAN) -> Organization:
    def build(slug: str) -> Organization:
        organization = Organization(name=name, slug=slug, suspended=False)
        plans.assign_plan(organization, plan_id)
        return organization

    organization = _insert_with_free_slug(Organization, "uq_organizations_slug", name, build)
    db.session.add(Membership(organization_id=organization.id, user_id=owner.id, role="owner"))
    db.session.flush()
    audit.record(
        organization.id,
        owner,
        "organization.created",
        "organization",
        organization.id,
        organization.name,
        {"new": {"plan": organization.plan_id}},
    )
    return organization


def create_workspace(organization: Organization, name: str, slug: str | None = None) -> Workspace:
    """A workspace with ``slug`` (409 when taken), or one derived from ``name`` and made unique."""
    if slug is None:
        return _insert_with_free_slug(
            Workspace,
            "uq_workspaces_slug",
            name,
            lambda free: Workspace(organization_id=organization.id, name=name, slug=free),
        )
    if db.session.scalar(select(exists().where(Workspace.slug == slug))):
        raise unique.conflict("uq_workspaces_slug")
    workspace = Workspace(organization_id=organization.id, name=name, slug=slug)
    with unique.or_conflict():
        db.session.add(workspace)
    return workspace


def register(name: str, email: str, password: str) -> tuple[User, str, str]:
    """Create the account, its organization (as owner) and a default workspace; sign in.

    The same for a known and an unknown address: the new account's address is
    unproven, and the e-mail goes to its owner (a confirmation link, or, for an
    address someone already proved, a warning to that person).
    """
    owner = auth_service.verified_owner(email)
    user = auth_service.create_user(email=email, password=password, name=name, verified=False)
    user.last_seen_at = utcnow()
    organization = create_organization(name.strip(), user)
    create_workspace(organization, name.strip())
    if owner is None:
        identity.send_verification(user)
    else:
        identity.registration_attempt_on_known_address(owner)
    return user, *auth_service.issue_tokens(user)


@dataclass(frozen=True)
class MyOrganization:
    """An organization as one of its members sees it in their list: with their role."""

    id: uuid.UUID
    name: str
    slug: str
    role: str
    plan: str
    suspended: bool
    workspace: Workspace | None = None  # the default workspace, when it was just created

    @classmethod
    def of(cls, organization: Organization, role: str, workspace: Workspace | None = None) -> MyOrganization:
        return cls(
            id=organization.id,
            name=organization.name,
            slug=organization.slug,
            role=role,
            plan=organization.plan_id,
            suspended=organization.suspended,
            workspace=workspace,
        )


def my_organizations(user: User) -> list[MyOrganization]:
    rows = db.session.execute(
        select(Organization, Membership.role)
        .join(Membership, Membership.organization_id == Organization.id)
        .where(Membership.user_id == user.id)
        .order_by(Organization.created_at, Organization.name)
    ).all()
    return [MyOrganization.of(org, role) for org, role in rows]


@dataclass(frozen=True)
class Account:
    """What both the account's own profile and the superadmin's list of users show of it."""

    id: uuid.UUID
    name: str
    email: str
    avatar_url: str | None
    created_at: datetime
    superadmin: bool

    @staticmethod
    def fields(user: User) -> dict:
        return {
            "id": user.id,
            "name": user.name,
            "email": user.email,
            "avatar_url": user.avatar_url,
            "created_at": user.created_at,
            "superadmin": auth_service.is_superadmin(user),
        }


@dataclass(frozen=True)
class Me(Account):
    """The signed-in account's own profile, with its organizations."""

    email_verified: bool = False
    pending_email: str | None = None
    organizations: list[MyOrganization] = field(default_factory=list)


def me(user: User) -> Me:
    return Me(
        **Account.fields(user),
        email_verified=user.email_verified_at is not None,
        pending_email=user.pending_email,
        organizations=my_organizations(user),
    )
