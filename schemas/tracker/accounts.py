"""Account bodies: register, login, refresh and ``me``."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields

from models.tracker import ROLES
from schemas.common import TrackerSchema
from schemas.fields import Email, Text, password_field
from schemas.tracker.common import name_field


class RegisterRequest(TrackerSchema):
    name = name_field(required=True)
    email = Email(required=True)
    password = password_field(required=True, min_length=8, metadata={"description": "At least 8 characters"})


class LoginRequest(TrackerSchema):
    email = Email(required=True)
    password = password_field(required=True, min_length=1)


class RefreshRequest(TrackerSchema):
    refresh_token = Text(required=True, min_length=1, max_length=4096)


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
    email_verified = fields.Boolean(
        metadata={"description": "The address was proven by following the link sent to it"}
    )
    pending_email = fields.Email(
        allow_none=True, metadata={"description": "A new address waiting for its confirmation link"}
    )
    organizations = fields.List(fields.Nested(MyOrganization), required=True)


class VerifyEmailRequest(TrackerSchema):
    token = Text(required=True, min_length=1, max_length=200)
