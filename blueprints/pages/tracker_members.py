"""An organization's people: members and their roles, invitations, and accepting one.

The same ``services.tracker.organizations`` functions as the REST API, so the
rules are the API's: owners and admins manage, only an owner gives or takes the
``owner`` role, an organization keeps one owner, the plan limits members. An
invitation names an address; the person with that address sees it on their
Tracker page once signed in, and accepts it there.
"""

from __future__ import annotations

import uuid

from flask import request
from flask_jwt_extended import current_user
from marshmallow import ValidationError

from blueprints.pages.common import after_change, page_login_required, refused, render_page
from blueprints.pages.tracker_common import TrackerPagesBlueprint
from models.tracker import MANAGER_ROLES, ROLES
from schemas.tracker.tenancy import InvitationCreate, MemberUpdate
from services.errors import DomainError
from services.tracker import organizations

blp = TrackerPagesBlueprint("people_pages", __name__)

TEMPLATE = "tracker/members.html"


def _context(organization_id: uuid.UUID, **extra) -> dict:
    organization, role = organizations.get_organization(current_user, organization_id)
    manages = role in MANAGER_ROLES and not organization.suspended
    members = organizations.list_members(current_user, organization_id)
    owners = [m.user_id for m in members if m.role == "owner"]
    return {
        "organization": organization,
        "my_role": role,
        "manages": manages,
        # Only an owner hands out the owner role.
        "assignable_roles": [r for r in ROLES if r != "owner" or role == "owner"],
        "members": members,
        # The last owner can neither leave nor be removed: no button for it.
        "sole_owner": owners[0] if len(owners) == 1 else None,
        "invitations": organizations.list_invitations(current_user, organization_id) if manages else [],
        "form": {},
        "errors": {},
        "members_error": None,
        **extra,
    }


def _members_part(organization_id: uuid.UUID, status: int = 200, error: str | None = None):
    return render_page(
        TEMPLATE, "members_table", status=status, **_context(organization_id, members_error=error)
    )


@blp.route("/o/<uuid:organization_id>/members")
@page_login_required()
def members(organization_id: uuid.UUID):
    return render_page(TEMPLATE, **_context(organization_id))


@blp.route("/o/<uuid:organization_id>/members/<uuid:user_id>/role", methods=["POST"])
@page_login_required()
def change_member_role(organization_id: uuid.UUID, user_id: uuid.UUID):
    try:
        role = MemberUpdate().load({"role": request.form.get("role", "")})["role"]
        organizations.update_member(current_user, organization_id, user_id, role)
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc, inline_not_found=True)
        return _members_part(organization_id, refusal.status, refusal.message)
    return _members_part(organization_id)


@blp.route("/o/<uuid:organization_id>/members/<uuid:user_id>/remove", methods=["POST"])
@page_login_required()
def remove_member(organization_id: uuid.UUID, user_id: uuid.UUID):
    try:
        organizations.remove_member(current_user, organization_id, user_id)
    except DomainError as exc:
        refusal = refused(exc, inline_not_found=True)
        return _members_part(organization_id, refusal.status, refusal.message)
    if user_id == current_user.id:
        # Leaving: this organization's pages are no longer yours.
        return after_change("tracker_pages.index")
    return _members_part(organization_id)


@blp.route("/o/<uuid:organization_id>/invitations", methods=["POST"])
@page_login_required()
def invite(organization_id: uuid.UUID):
    form = {"email": request.form.get("email", "").strip(), "role": request.form.get("role", "member")}
    try:
        loaded = InvitationCreate().load(form)
        invitation = organizations.invite(current_user, organization_id, loaded["email"], loaded["role"])
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc, inline_not_found=True, by_field=True)
        context = _context(organization_id, form=form, errors=refusal.errors)
        return render_page(TEMPLATE, "invitations", status=refusal.status, **context)
    return render_page(TEMPLATE, "invitations", **_context(organization_id, invited=invitation.email))


@blp.route("/o/<uuid:organization_id>/invitations/<uuid:invitation_id>/revoke", methods=["POST"])
@page_login_required()
def revoke_invitation(organization_id: uuid.UUID, invitation_id: uuid.UUID):
    organizations.revoke_invitation(current_user, organization_id, invitation_id)
    return render_page(TEMPLATE, "invitations", **_context(organization_id))


@blp.route("/invitations/<uuid:invitation_id>/accept", methods=["POST"])
@page_login_required()
def accept_invitation(invitation_id: uuid.UUID):
    organizations.accept_invitation(current_user, invitation_id)
    return after_change("tracker_pages.index")
