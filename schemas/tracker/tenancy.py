"""Organizations (member view), members, invitations, workspaces, projects, statuses, labels."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields, validate

from models.tracker import ROLES, STATUS_CATEGORIES
from schemas.common import TrackerSchema
from schemas.fields import Email, Integer, Text, choice
from schemas.tracker.common import color_field, markdown_field, name_field, slug_field

PROJECT_KEY = validate.Regexp(
    r"^[A-Z][A-Z0-9]{1,9}\Z", error="2 to 10 characters of A-Z and 0-9, starting with a letter"
)


class MemberUser(ma.Schema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    email = fields.String(required=True)
    avatar_url = fields.String(allow_none=True)


class Member(ma.Schema):
    user = fields.Nested(MemberUser, required=True)
    role = fields.String(required=True, metadata={"enum": list(ROLES)})
    joined_at = fields.DateTime(attribute="created_at")


class MemberList(ma.Schema):
    members = fields.List(fields.Nested(Member), required=True)


class MemberUpdate(TrackerSchema):
    role = choice(ROLES, required=True)


class InvitationCreate(TrackerSchema):
    email = Email(required=True)
    role = choice(ROLES, load_default="member")


class InvitationOrganization(ma.Schema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    slug = fields.String(required=True)


class Invitation(ma.Schema):
    id = fields.UUID(required=True)
    email = fields.String(required=True)
    role = fields.String(required=True)
    organization = fields.Nested(InvitationOrganization, required=True)
    created_at = fields.DateTime(required=True)


class InvitationList(ma.Schema):
    invitations = fields.List(fields.Nested(Invitation), required=True)


class Workspace(ma.Schema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    slug = fields.String(required=True)
    organization_id = fields.UUID(required=True)
    created_at = fields.DateTime()


class WorkspaceList(ma.Schema):
    workspaces = fields.List(fields.Nested(Workspace), required=True)


class WorkspaceCreate(TrackerSchema):
    organization_id = fields.UUID(required=True)
    name = name_field(required=True)
    slug = slug_field(metadata={"description": "Derived from the name (and made unique) when absent"})


class WorkspaceUpdate(TrackerSchema):
    name = name_field()
    slug = slug_field()


class Project(ma.Schema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    key = fields.String(required=True)
    description = fields.String(allow_none=True)
    workspace_id = fields.UUID(required=True)
    created_at = fields.DateTime(required=True)


class ProjectList(ma.Schema):
    projects = fields.List(fields.Nested(Project), required=True)


class ProjectCreate(TrackerSchema):
    name = name_field(required=True)
    key = Text(required=True, max_length=10, validate=PROJECT_KEY)
    description = markdown_field(allow_none=True)


class ProjectUpdate(TrackerSchema):
    name = name_field()
    description = markdown_field(allow_none=True)


class Status(ma.Schema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    color = fields.String(required=True)
    category = fields.String(required=True, metadata={"enum": list(STATUS_CATEGORIES)})
    position = fields.Integer(required=True)


class StatusList(ma.Schema):
    statuses = fields.List(fields.Nested(Status), required=True)


class StatusCreate(TrackerSchema):
    name = name_field(100, required=True)
    color = color_field(required=True)
    category = choice(STATUS_CATEGORIES, required=True)
    position = Integer(minimum=0, maximum=10_000)


class StatusUpdate(TrackerSchema):
    name = name_field(100)
    color = color_field()
    category = choice(STATUS_CATEGORIES)
    position = Integer(minimum=0, maximum=10_000)


class Label(ma.Schema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    color = fields.String(required=True)


class LabelList(ma.Schema):
    labels = fields.List(fields.Nested(Label), required=True)


class LabelCreate(TrackerSchema):
    name = name_field(100, required=True)
    color = color_field(required=True)
