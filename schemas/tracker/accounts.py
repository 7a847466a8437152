"""Account bodies: register, login, refresh and ``me``."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields, validate

from models.tracker import ROLES
from schemas.common import TrackerSchema
from schemas.tracker.common import name_field


class RegisterRequest(TrackerSchema):
    name = name_field(required=True)
    email = fields.Email(required=True, validate=validate.Length(max=320))
    password = fields.String(
        required=True,
        validate=validate.Length(min=8, max=256),
        metadata={"description": "At least 8 characters"},
    )


class LoginRequest(TrackerSchema):
    email = fields.Email(required=True)
    password = fields.String(required=True, validate=validate.Length(min=1, max=256))


class RefreshRequest(TrackerSchema):
    refresh_token = fields.String(required=True, validate=validate.Length(min=1, max=4096))


class UserRef(ma.Schema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    email = fields.String(required=True)


class RegisteredUser(UserRef):
    created_at = fields.DateTime(required=True)


class RegisterResponse(ma.Schema):
    user = fields.Nested(RegisteredUser, required=True)
    access_token = fields.String(required=True)
    refresh_token = fields.String(required=True)
    token_type = fields.String(dump_default="bearer")


class LoginResponse(ma.Schema):
    user = fields.Nested(UserRef, required=True)
    access_token = fields.String(required=True)
    refresh_token = fields.String(required=True)
    token_type = fields.String(dump_default="bearer")


class TokenPair(ma.Schema):
    access_token = fields.String(required=True)
    refresh_token = fields.String(required=True, metadata={"description": "The new refresh token"})
    token_type = fields.String(dump_default="bearer")


class MyOrganization(ma.Schema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    slug = fields.String(required=True)
    role = fields.String(required=True, metadata={"enum": list(ROLES)})
    plan = fields.String()
    suspended = fields.Boolean()


class MyOrganizationList(ma.Schema):
    organizations = fields.List(fields.Nested(MyOrganization), required=True)


class Me(RegisteredUser):
    avatar_url = fields.String(allow_none=True)
    superadmin = fields.Boolean()
    organizations = fields.List(fields.Nested(MyOrganization), required=True)
