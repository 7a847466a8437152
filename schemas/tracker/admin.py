"""Administration bodies: statistics, users, organizations, workspaces, plans."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields, validate

from schemas.common import TrackerSchema
from schemas.fields import Boolean, Integer, Text
from schemas.tracker.common import PageQuery, name_field, slug_field

BIG = {"minimum": 0, "maximum": 2**53}


class UserQuery(PageQuery):
    q = Text(max_length=200, metadata={"description": "Name or e-mail contains"})


class OrganizationQuery(PageQuery):
    q = Text(max_length=200, metadata={"description": "Name or slug contains"})
    plan = Text(max_length=40)


class WorkspaceQuery(PageQuery):
    q = Text(max_length=200, metadata={"description": "Name or slug contains"})
    organization_id = fields.UUID()


class AdminUser(ma.Schema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    email = fields.String(required=True)
    avatar_url = fields.String(allow_none=True)
    created_at = fields.DateTime(required=True)
    superadmin = fields.Boolean(required=True)
    banned = fields.Boolean(required=True)
    organization_count = fields.Integer(required=True)


class AdminUserPage(ma.Schema):
    users = fields.List(fields.Nested(AdminUser), required=True)
    total = fields.Integer(required=True)
    page = fields.Integer(required=True)
    per_page = fields.Integer(required=True)


class AdminUserUpdate(TrackerSchema):
    superadmin = Boolean()
    banned = Boolean()


class Limits(ma.Schema):
    members = fields.Integer(required=True)
    projects = fields.Integer(required=True)
    issues = fields.Integer(required=True)
    storage_bytes = fields.Integer(required=True)


class Features(ma.Schema):
    semantic_search = fields.Boolean(required=True)
    custom_fields = fields.Boolean(required=True)
    sso = fields.Boolean(required=True)
    audit_log = fields.Boolean(required=True)


class AdminOrganization(ma.Schema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    slug = fields.String(required=True)
    plan = fields.String(required=True)
    suspended = fields.Boolean(required=True)
    member_count = fields.Integer(required=True)
    issue_count = fields.Integer(required=True)
    limits = fields.Nested(Limits, metadata={"description": "The plan's limits as assigned"})
    features = fields.Nested(Features, metadata={"description": "The plan's features as assigned"})
    created_at = fields.DateTime(required=True)


class AdminOrganizationPage(ma.Schema):
    organizations = fields.List(fields.Nested(AdminOrganization), required=True)
    total = fields.Integer(required=True)
    page = fields.Integer(required=True)
    per_page = fields.Integer(required=True)


class AdminOrganizationUpdate(TrackerSchema):
    plan = Text(min_length=1, max_length=40)
    suspended = Boolean()
    name = name_field()


class AdminWorkspace(ma.Schema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    slug = fields.String(required=True)
    organization_id = fields.UUID(required=True)
    project_count = fields.Integer(required=True)
    issue_count = fields.Integer(required=True)
    created_at = fields.DateTime(required=True)


class AdminWorkspacePage(ma.Schema):
    workspaces = fields.List(fields.Nested(AdminWorkspace), required=True)
    total = fields.Integer(required=True)
    page = fields.Integer(required=True)
    per_page = fields.Integer(required=True)


class AdminWorkspaceUpdate(TrackerSchema):
    name = name_field()
    slug = slug_field()


class LimitsInput(TrackerSchema):
    members = Integer(required=True, **BIG)
    projects = Integer(required=True, **BIG)
    issues = Integer(required=True, **BIG)
    storage_bytes = Integer(required=True, **BIG)


class LimitsPatch(TrackerSchema):
    members = Integer(**BIG)
    projects = Integer(**BIG)
    issues = Integer(**BIG)
    storage_bytes = Integer(**BIG)


class FeaturesInput(TrackerSchema):
    semantic_search = Boolean()
    custom_fields = Boolean()
    sso = Boolean()
    audit_log = Boolean()


class Plan(ma.Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    price_brl = fields.Integer(required=True)
    limits = fields.Nested(Limits, required=True)
    features = fields.Nested(Features, required=True)


class PlanList(ma.Schema):
    plans = fields.List(fields.Nested(Plan), required=True)


class PlanCreate(TrackerSchema):
    id = Text(
        required=True,
        max_length=40,
        validate=validate.Regexp(
            r"^[a-z][a-z0-9_-]{1,39}\Z", error="2-40 of a-z, 0-9, _ and -, starting with a letter"
        ),
    )
    name = name_field(100, required=True)
    price_brl = Integer(required=True, minimum=0, maximum=10_000_000)
    limits = fields.Nested(LimitsInput, required=True)
    features = fields.Nested(
        FeaturesInput, load_default=dict, metadata={"description": "Absent flags are false"}
    )


class PlanUpdate(TrackerSchema):
    name = name_field(100)
    price_brl = Integer(minimum=0, maximum=10_000_000)
    limits = fields.Nested(LimitsPatch)
    features = fields.Nested(FeaturesInput)


class OrganizationStats(ma.Schema):
    total = fields.Integer(required=True)
    by_plan = fields.Dict(
        keys=fields.String(),
        values=fields.Integer(),
        required=True,
        metadata={"description": "plan id -> count"},
    )


class UserStats(ma.Schema):
    total = fields.Integer(required=True)
    active_last_30d = fields.Integer(
        required=True, metadata={"description": "Seen (sign-in, refresh, authenticated request) in 30 days"}
    )


class Total(ma.Schema):
    total = fields.Integer(required=True)


class IssueStats(ma.Schema):
    total = fields.Integer(required=True)
    open = fields.Integer(required=True, metadata={"description": "Status neither done nor cancelled"})
    done = fields.Integer(required=True)


class Statistics(ma.Schema):
    organizations = fields.Nested(OrganizationStats, required=True)
    users = fields.Nested(UserStats, required=True)
    workspaces = fields.Nested(Total, required=True)
    projects = fields.Nested(Total, required=True)
    issues = fields.Nested(IssueStats, required=True)
    storage_used_bytes = fields.Integer(
        required=True, metadata={"description": "UTF-8 bytes of every issue title and description"}
    )
