"""Administration bodies: statistics, users, organizations, workspaces, plans."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields, validate

from schemas.common import TrackerSchema
from schemas.tracker.common import SLUG, PageQuery, Text, name_field

BIG = validate.Range(min=0, max=2**53)


class UserQuery(PageQuery):
    q = Text(validate=validate.Length(max=200), metadata={"description": "Name or e-mail contains"})


class OrganizationQuery(PageQuery):
    q = Text(validate=validate.Length(max=200), metadata={"description": "Name or slug contains"})
    plan = Text(validate=validate.Length(max=40))


class WorkspaceQuery(PageQuery):
    q = Text(validate=validate.Length(max=200), metadata={"description": "Name or slug contains"})
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
    superadmin = fields.Boolean()
    banned = fields.Boolean()


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
    plan = Text(validate=validate.Length(min=1, max=40))
    suspended = fields.Boolean()
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
    slug = fields.String(validate=[validate.Length(min=2, max=80), SLUG])


class LimitsInput(TrackerSchema):
    members = fields.Integer(required=True, validate=BIG)
    projects = fields.Integer(required=True, validate=BIG)
    issues = fields.Integer(required=True, validate=BIG)
    storage_bytes = fields.Integer(required=True, validate=BIG)


class LimitsPatch(TrackerSchema):
    members = fields.Integer(validate=BIG)
    projects = fields.Integer(validate=BIG)
    issues = fields.Integer(validate=BIG)
    storage_bytes = fields.Integer(validate=BIG)


class FeaturesInput(TrackerSchema):
    semantic_search = fields.Boolean()
    custom_fields = fields.Boolean()
    sso = fields.Boolean()
    audit_log = fields.Boolean()


class Plan(ma.Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    price_brl = fields.Integer(required=True)
    limits = fields.Nested(Limits, required=True)
    features = fields.Nested(Features, required=True)


class PlanList(ma.Schema):
    plans = fields.List(fields.Nested(Plan), required=True)


class PlanCreate(TrackerSchema):
    id = fields.String(
        required=True,
        validate=validate.Regexp(
            r"^[a-z][a-z0-9_-]{1,39}\Z", error="2-40 of a-z, 0-9, _ and -, starting with a letter"
        ),
    )
    name = name_field(100, required=True)
    price_brl = fields.Integer(required=True, validate=validate.Range(min=0, max=10_000_000))
    limits = fields.Nested(LimitsInput, required=True)
    features = fields.Nested(
        FeaturesInput, load_default=dict, metadata={"description": "Absent flags are false"}
    )


class PlanUpdate(TrackerSchema):
    name = name_field(100)
    price_brl = fields.Integer(validate=validate.Range(min=0, max=10_000_000))
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
