"""Organizations seen by their members: membership, roles and invitations.

Rules: owners and admins manage members and invitations; only an owner gives
or takes the ``owner`` role; an organization always keeps at least one owner.
An invitation names an e-mail address and a role; the account with that
address accepts it and becomes a member (within the plan's member limit).
"""

from __future__ import annotations

import uuid

from sqlalchemy import func, select
from sqlalchemy.orm import contains_eager

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import Invitation, Membership, Organization
from services import unique
from services.auth import normalize_email
from services.errors import ConflictError, ForbiddenError, NotFoundError
from services.tracker import accounts, audit, notifications, plans, sso
from services.tracker.access import MANAGE, READ, organization_access


def create_organization(user: User, name: str) -> accounts.MyOrganization:
    """A signed-in person starts an organization, as registration does: they own it, it is on
    the default plan, and it has a workspace named after it."""
    organization = accounts.create_organization(name, user)
    workspace = accounts.create_workspace(organization, name)
    return accounts.MyOrganization.of(organization, "owner", workspace)


def get_organization(user: User, organization_id: uuid.UUID) -> tuple[Organization, str]:
    access = organization_access(user, organization_id, READ)
    return access.organization, access.role


def list_members(user: User, organization_id: uuid.UUID) -> list[Membership]:
    organization_access(user, organization_id, READ)
    return list(
        db.session.scalars(
            select(Membership)
            .join(User, User.id == Membership.user_id)
            .options(contains_eager(Membership.user))
            .where(Membership.organization_id == organization_id)
            .order_by(Membership.created_at, User.name)
        )
    )


def _person(user_id: uuid.UUID) -> str | None:
    """How the log names a member: their name and address when it was written."""
    person = db.session.get(User, user_id)
    return None if person is None else f"{person.name} <{person.email}>"


def _owner_count(organization_id: uuid.UUID) -> int:
    return (
        db.session.scalar(
            select(func.count())
            .select_from(Membership)
            .where(Membership.organization_id == organization_id, Membership.role == "owner")
        )
        or 0
    )


def _target_membership(organization_id: uuid.UUID, user_id: uuid.UUID) -> Membership:
    membership = db.session.get(Membership, (organization_id, user_id))
    if membership is None:
        raise NotFoundError("Member not found", reason="member_not_found")
    return membership


def update_member(user: User, organization_id: uuid.UUID, member_id: uuid.UUID, role: str) -> Membership:
    access = organization_access(user, organization_id, MANAGE)
    membership = _target_membership(organization_id, member_id)
    if "owner" in (role, membership.role) and access.role != "owner":
        raise ForbiddenError("Only an owner can give or take the owner role", reason="owner_role_by_owner")
    if membership.role == "owner" and role != "owner" and _owner_count(organization_id) <= 1:
        raise ConflictError("An organization needs at least one owner", reason="last_owner")
    if membership.role != role:
        audit.record(
            organization_id,
            user,
            "member.role_changed",
            "member",
            member_id,
            _person(member_id),
            {"old": {"role": membership.role}, "new": {"role": role}},
        )
    membership.role = role
    db.session.flush()
    return membership


def remove_member(user: User, organization_id: uuid.UUID, member_id: uuid.UUID) -> None:
    """Owners and admins remove members; anyone may leave (except the last owner)."""
    need = READ if member_id == user.id else MANAGE
    access = organization_access(user, organization_id, need)
    membership = _target_membership(organization_id, member_id)
    if membership.role == "owner" and member_id != user.id and access.role != "owner":
        raise ForbiddenError("Only an owner can remove an owner", reason="owner_removed_by_owner")
    if membership.role == "owner" and _owner_count(organization_id) <= 1:
        raise ConflictError("An organization needs at least one owner", reason="last_owner")
    audit.record(
        organization_id,
        user,
        "member.left" if member_id == user.id else "member.removed",
        "member",
        member_id,
        _person(member_id),
        {"old": {"role": membership.role}},
    )
    db.session.delete(membership)
    # Their inbox and watches no longer show this organization's issues.
    notifications.forget_member(organization_id, member_id)
    db.session.flush()


def invite(user: User, organization_id: uuid.UUID, email: str, role: str) -> Invitation:
    access = organization_access(user, organization_id, MANAGE)
    if role == "owner" and access.role != "owner":
        raise ForbiddenError("Only an owner can invite an owner", reason="owner_invited_by_owner")
    email = normalize_email(email)
    already = db.session.scalar(
        select(Membership)
        .join(User, User.id == Membership.user_id)
        .where(Membership.organization_id == organization_id, User.email == email)
    )
    if already is not None:
        raise ConflictError("This person is already a member", reason="already_member", field="email")
    pending = db.session.scalar(
        select(Invitation).where(
            Invitation.organization_id == organization_id,
            Invitation.email == email,
            Invitation.accepted_at.is_(None),
        )
    )
    if pending is not None:
        raise unique.conflict("uq_invitations_pending_organization_id_email")
    plans.ensure_within_limit(access.organization, "members")
    invitation = Invitation(organization_id=organization_id, email=email, role=role, invited_by_id=user.id)
    # A partial unique index keeps one pending invitation per organization and address.
    with unique.or_conflict():
        db.session.add(invitation)
    audit.record(
        organization_id, user, "member.invited", "invitation", invitation.id, email, {"new": {"role": role}}
    )
    return invitation


def list_invitations(user: User, organization_id: uuid.UUID) -> list[Invitation]:
    organization_access(user, organization_id, MANAGE)
    return list(
        db.session.scalars(
            select(Invitation)
            .where(Invitation.organization_id == organization_id, Invitation.accepted_at.is_(None))
            .order_by(Invitation.created_at)
        )
    )


def revoke_invitation(user: User, organization_id: uuid.UUID, invitation_id: uuid.UUID) -> None:
    organization_access(user, organization_id, MANAGE)
    invitation = db.session.get(Invitation, invitation_id)
    if invitation is None or invitation.organization_id != organization_id or invitation.accepted_at:
        raise NotFoundError("Invitation not found", reason="invitation_not_found")
    audit.record(
        organization_id,
        user,
        "invitation.revoked",
        "invitation",
        invitation.id,
        invitation.email,
        {"old": {"role": invitation.role}},
    )
    db.session.delete(invitation)
    db.session.flush()


def my_invitations(user: User) -> list[Invitation]:
    """Invitations to the signed-in person's address, once they proved it is theirs."""
    if user.email_verified_at is None:
        return []
    return list(
        db.session.scalars(
            select(Invitation)
            .where(Invitation.email == user.email, Invitation.accepted_at.is_(None))
            .order_by(Invitation.created_at)
        )
    )


def accept_invitation(user: User, invitation_id: uuid.UUID) -> Membership:
    """Join the organization; an invitation addressed to someone else is 404."""
    # Locked: the same invitation accepted twice at once is accepted once; the other
    # request then finds it accepted (404), as it would a moment later.
    invitation = db.session.scalar(
        select(Invitation)
        .where(Invitation.id == invitation_id)
        .with_for_update(of=Invitation)
        .execution_options(populate_existing=True)
    )
    if invitation is None or invitation.email != user.email or invitation.accepted_at is not None:
        raise NotFoundError("Invitation not found", reason="invitation_not_found")
    # Anyone may register any address; only its proven owner may take what is sent to it.
    if user.email_verified_at is None:
        raise ForbiddenError(
            "Confirm your e-mail address (follow the link we sent) to accept invitations",
            reason="unverified_address",
        )
    organization = invitation.organization
    if organization.suspended:
        raise ForbiddenError(
            "This organization is suspended", code="ORGANIZATION_SUSPENDED", reason="organization_suspended"
        )
    if db.session.get(Membership, (organization.id, user.id)) is not None:
        raise unique.conflict("pk_memberships")
    plans.ensure_within_limit(organization, "members")
    membership = Membership(organization_id=organization.id, user_id=user.id, role=invitation.role)
    with unique.or_conflict():
        invitation.accepted_at = utcnow()
        db.session.add(membership)
    audit.record(
        organization.id,
        user,
        "member.joined",
        "member",
        user.id,
        user.name,
        {"new": {"role": invitation.role}},
    )
    sso.after_joining(organization, user, invitation.role)
    return membership
