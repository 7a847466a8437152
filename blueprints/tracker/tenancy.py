"""Organizations, members, invitations, workspaces, projects, statuses and labels.

Anything in an organization the caller does not belong to answers 404. Viewers
read; owners and admins manage projects, statuses, labels, members and
invitations. A suspended organization answers 403 ``ORGANIZATION_SUSPENDED``.
"""

from __future__ import annotations

from functools import partial

from flask_jwt_extended import current_user

from blueprints.common import auth_required
from blueprints.parsing import Blueprint
from blueprints.tracker.docs import error_responses
from schemas.tracker.accounts import MyOrganizationList
from schemas.tracker.collab import CreatedOrganization, OrganizationCreate
from schemas.tracker.tenancy import (
    Invitation,
    InvitationCreate,
    InvitationList,
    Label,
    LabelCreate,
    LabelList,
    Member,
    MemberList,
    MemberUpdate,
    Project,
    ProjectCreate,
    ProjectList,
    ProjectUpdate,
    Status,
    StatusCreate,
    StatusList,
    StatusUpdate,
    Workspace,
    WorkspaceCreate,
    WorkspaceList,
    WorkspaceUpdate,
)
from services.tracker import accounts, organizations, workspaces

orgs_blp = Blueprint(
    "tracker_organizations", __name__, url_prefix="/organizations", description="Organizations and members"
)
invitations_blp = Blueprint(
    "tracker_invitations", __name__, url_prefix="/invitations", description="Invitations addressed to me"
)
blp = Blueprint(
    "tracker_workspaces",
    __name__,
    url_prefix="/workspaces",
    description="Workspaces, projects, statuses, labels",
)

PROJECT = "/<slug>/projects/<uuid:project_id>"


_errors = partial(error_responses, blp)


@orgs_blp.route("", methods=["GET"])
@auth_required()
@orgs_blp.response(200, MyOrganizationList)
def list_organizations():
    """The organizations I belong to, with my role, as `{"organizations": [...]}` like every list."""
    return {"organizations": accounts.my_organizations(current_user)}


@orgs_blp.route("/<uuid:organization_id>/members", methods=["GET"])
@auth_required()
@orgs_blp.response(200, MemberList)
@_errors(403, 404)
def list_members(organization_id):
    """Members and their roles (any member may read)."""
    return {"members": organizations.list_members(current_user, organization_id)}


@orgs_blp.route("/<uuid:organization_id>/members/<uuid:user_id>", methods=["PATCH"])
@auth_required()
@orgs_blp.arguments(MemberUpdate, error_status_code=400)
@orgs_blp.response(200, Member)
@_errors(403, 404, 409)
def update_member(body, organization_id, user_id):
    """Change a member's role (owners and admins; only an owner gives or takes `owner`;
    the last owner cannot step down: 409)."""
    return organizations.update_member(current_user, organization_id, user_id, body["role"])


@orgs_blp.route("/<uuid:organization_id>/members/<uuid:user_id>", methods=["DELETE"])
@auth_required()
@orgs_blp.response(204)
@_errors(403, 404, 409)
def remove_member(organization_id, user_id):
    """Remove a member (owners and admins), or leave (anyone, with their own id).
    The last owner cannot leave: 409. Their issues stay; assignments stay until changed."""
    organizations.remove_member(current_user, organization_id, user_id)


@orgs_blp.route("/<uuid:organization_id>/invitations", methods=["GET"])
@auth_required()
@orgs_blp.response(200, InvitationList)
@_errors(403, 404)
def list_invitations(organization_id):
    """Pending invitations (owners and admins)."""
    return {"invitations": organizations.list_invitations(current_user, organization_id)}


@orgs_blp.route("/<uuid:organization_id>/invitations", methods=["POST"])
@auth_required()
@orgs_blp.arguments(InvitationCreate, error_status_code=400)
@orgs_blp.response(201, Invitation)
@_errors(402, 403, 404, 409)
def invite(body, organization_id):
    """Invite an e-mail address with a role (default `member`). The person accepts it with
    `POST /invitations/{id}/accept` once signed in with that address (registering first if needed)
    and once the address is proven (the link e-mailed at registration).
    402 when the members limit is already reached; 409 when already a member or invited: an
    address has at most one pending invitation per organization, even when two are sent at once."""
    return organizations.invite(current_user, organization_id, body["email"], body["role"])


@orgs_blp.route("/<uuid:organization_id>/invitations/<uuid:invitation_id>", methods=["DELETE"])
@auth_required()
@orgs_blp.response(204)
@_errors(403, 404)
def revoke_invitation(organization_id, invitation_id):
    """Withdraw a pending invitation (owners and admins)."""
    organizations.revoke_invitation(current_user, organization_id, invitation_id)


@orgs_blp.route("", methods=["POST"])
@auth_required()
@orgs_blp.arguments(OrganizationCreate, error_status_code=400)
@orgs_blp.response(201, CreatedOrganization)
@_errors(400)
def create_organization(body):
    """Start an organization, as registration does: I own it, it is on the default plan
    (`free`) with that plan's limits, and it has a default workspace named after it (its slug
    derived from the name and made unique, like the organization's). Any signed-in account may."""
    return organizations.create_organization(current_user, body["name"])


@invitations_blp.route("", methods=["GET"])
@auth_required()
@invitations_blp.response(200, InvitationList)
def my_invitations():
    """Pending invitations addressed to my e-mail; none until the address is proven."""
    return {"invitations": organizations.my_invitations(current_user)}


@invitations_blp.route("/<uuid:invitation_id>/accept", methods=["POST"])
@auth_required()
@invitations_blp.response(201, Member)
@_errors(402, 403, 404, 409)
def accept_invitation(invitation_id):
    """Accept an invitation addressed to me and join the organization with its role.
    403 until my address is proven (the link e-mailed at registration); 402 when the
    organization's plan has no room for another member. An invitation already accepted
    answers 404, also to a second accept sent at the same moment."""
    return organizations.accept_invitation(current_user, invitation_id)


@blp.route("", methods=["GET"])
@auth_required()
@blp.response(200, WorkspaceList)
def list_workspaces():
    """Workspaces of every organization I belong to."""
    return {"workspaces": workspaces.list_workspaces(current_user)}


@blp.route("", methods=["POST"])
@auth_required()
@blp.arguments(WorkspaceCreate, error_status_code=400)
@blp.response(201, Workspace)
@_errors(403, 404, 409)
def create_workspace(body):
    """Create a workspace in one of my organizations (owners and admins). The slug is unique
    platform-wide: derived from the name when absent (with a suffix when taken), 409 when a
    given one is taken, also by a request made at the same moment."""
    return workspaces.create_workspace(current_user, body["organization_id"], body["name"], body.get("slug"))


@blp.route("/<slug>", methods=["GET"])
@auth_required()
@blp.response(200, Workspace)
@_errors(403, 404)
def get_workspace(slug):
    """One workspace."""
    return workspaces.get_workspace(current_user, slug)


@blp.route("/<slug>", methods=["PATCH"])
@auth_required()
@blp.arguments(WorkspaceUpdate, error_status_code=400)
@blp.response(200, Workspace)
@_errors(403, 404, 409)
def update_workspace(body, slug):
    """Rename a workspace or change its slug (owners and admins)."""
    return workspaces.update_workspace(current_user, slug, body)


@blp.route("/<slug>/projects", methods=["GET"])
@auth_required()
@blp.response(200, ProjectList)
@_errors(403, 404)
def list_projects(slug):
    """Projects of the workspace, oldest first."""
    return {"projects": workspaces.list_projects(current_user, slug)}


@blp.route("/<slug>/projects", methods=["POST"])
@auth_required()
@blp.arguments(ProjectCreate, error_status_code=400)
@blp.response(201, Project)
@_errors(402, 403, 404, 409)
def create_project(body, slug):
    """Create a project (owners and admins) with the statuses Backlog, Todo, In Progress, Done
    and Cancelled. `key` is 2-10 of A-Z and 0-9, starting with a letter, unique in the
    workspace (409), and prefixes its issue keys (`WEB-1`); it cannot change later."""
    return workspaces.create_project(current_user, slug, body)


@blp.route(PROJECT, methods=["GET"])
@auth_required()
@blp.response(200, Project)
@_errors(403, 404)
def get_project(slug, project_id):
    """One project."""
    return workspaces.get_project(current_user, slug, project_id)


@blp.route(PROJECT, methods=["PATCH"])
@auth_required()
@blp.arguments(ProjectUpdate, error_status_code=400)
@blp.response(200, Project)
@_errors(403, 404)
def update_project(body, slug, project_id):
    """Rename or describe a project (owners and admins)."""
    return workspaces.update_project(current_user, slug, project_id, body)


@blp.route(PROJECT, methods=["DELETE"])
@auth_required()
@blp.response(204)
@_errors(403, 404)
def delete_project(slug, project_id):
    """Delete a project with its issues, statuses and labels (owners and admins)."""
    workspaces.delete_project(current_user, slug, project_id)


@blp.route(PROJECT + "/statuses", methods=["GET"])
@auth_required()
@blp.response(200, StatusList)
@_errors(403, 404)
def list_statuses(slug, project_id):
    """Statuses in board order (`position`)."""
    return {"statuses": workspaces.list_statuses(current_user, slug, project_id)}


@blp.route(PROJECT + "/statuses", methods=["POST"])
@auth_required()
@blp.arguments(StatusCreate, error_status_code=400)
@blp.response(201, Status)
@_errors(403, 404)
def create_status(body, slug, project_id):
    """Add a status (owners and admins); without `position` it goes last."""
    return workspaces.create_status(current_user, slug, project_id, body)


@blp.route(PROJECT + "/statuses/<uuid:status_id>", methods=["PATCH"])
@auth_required()
@blp.arguments(StatusUpdate, error_status_code=400)
@blp.response(200, Status)
@_errors(403, 404)
def update_status(body, slug, project_id, status_id):
    """Rename, recolour, recategorise or move a status (owners and admins)."""
    return workspaces.update_status(current_user, slug, project_id, status_id, body)


@blp.route(PROJECT + "/statuses/<uuid:status_id>", methods=["DELETE"])
@auth_required()
@blp.response(204)
@_errors(403, 404, 409)
def delete_status(slug, project_id, status_id):
    """Delete a status no issue uses (409 otherwise; owners and admins)."""
    workspaces.delete_status(current_user, slug, project_id, status_id)


@blp.route(PROJECT + "/labels", methods=["GET"])
@auth_required()
@blp.response(200, LabelList)
@_errors(403, 404)
def list_labels(slug, project_id):
    """Labels, by name."""
    return {"labels": workspaces.list_labels(current_user, slug, project_id)}


@blp.route(PROJECT + "/labels", methods=["POST"])
@auth_required()
@blp.arguments(LabelCreate, error_status_code=400)
@blp.response(201, Label)
@_errors(403, 404, 409)
def create_label(body, slug, project_id):
    """Add a label (owners and admins); names are unique in the project (409)."""
    return workspaces.create_label(current_user, slug, project_id, body)


@blp.route(PROJECT + "/labels/<uuid:label_id>", methods=["DELETE"])
@auth_required()
@blp.response(204)
@_errors(403, 404)
def delete_label(slug, project_id, label_id):
    """Delete a label; issues lose it (owners and admins)."""
    workspaces.delete_label(current_user, slug, project_id, label_id)
