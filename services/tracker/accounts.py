"""Tracker accounts: registration (user + organization + default workspace) and ``me``.

Credentials, tokens and rotation are the shared ones of ``services.auth``: a
person registered here signs in to the stock service with the same password.
"""

from __future__ import annotations

import re
import secrets
import unicodedata

from sqlalchemy import exists, select

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import Membership, Organization, Workspace
from services import auth as auth_service
from services import identity
from services.errors import ConflictError
from services.tracker import plans

_NON_SLUG = re.compile(r"[^a-z0-9]+")


def slugify(text: str, *, max_length: int = 60) -> str:
    """ASCII, lowercase, hyphen-separated; never empty."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = _NON_SLUG.sub("-", ascii_text.lower()).strip("-")[:max_length].strip("-")
    return slug or "workspace"


def unique_slug(model, base: str) -> str:
    """``base``, or ``base-2``, ``base-3``... (then a random suffix) not yet used by ``model``."""
    base = slugify(base)
    candidates = [base] + [f"{base}-{n}" for n in range(2, 12)]
    for candidate in candidates:
        if not db.session.scalar(select(exists().where(model.slug == candidate))):
            return candidate
    return f"{base}-{secrets.token_hex(4)}"


def create_organization(name: str, owner: User, plan_id: str = plans.DEFAULT_PLAN) -> Organization:
    organization = Organization(name=name, slug=unique_slug(Organization, name), suspended=False)
    plans.assign_plan(organization, plan_id)
    db.session.add(organization)
    db.session.flush()
    db.session.add(Membership(organization_id=organization.id, user_id=owner.id, role="owner"))
    db.session.flush()
    return organization


def create_workspace(organization: Organization, name: str, slug: str | None = None) -> Workspace:
    if slug is not None:
        if db.session.scalar(select(exists().where(Workspace.slug == slug))):
            raise ConflictError("A workspace with this slug already exists", field="slug")
    else:
        slug = unique_slug(Workspace, name)
    workspace = Workspace(organization_id=organization.id, name=name, slug=slug)
    db.session.add(workspace)
    db.session.flush()
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


def my_organizations(user: User) -> list[dict]:
    rows = db.session.execute(
        select(Organization, Membership.role)
        .join(Membership, Membership.organization_id == Organization.id)
        .where(Membership.user_id == user.id)
        .order_by(Organization.created_at, Organization.name)
    ).all()
    return [
        {
            "id": org.id,
            "name": org.name,
            "slug": org.slug,
            "role": role,
            "plan": org.plan_id,
            "suspended": org.suspended,
        }
        for org, role in rows
    ]


def me(user: User) -> dict:
    return {
        "id": user.id,
        "name": user.name,
        "email": user.email,
        "avatar_url": user.avatar_url,
        "created_at": user.created_at,
        "superadmin": auth_service.is_superadmin(user),
        "email_verified": user.email_verified_at is not None,
        "pending_email": user.pending_email,
        "organizations": my_organizations(user),
    }
