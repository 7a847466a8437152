"""An organization's single sign-on settings (OpenID Connect)."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields

from models.tracker_sso import SSO_ROLES
from schemas.common import TrackerSchema
from schemas.fields import Boolean, List, Text, choice
from services.tracker.sso import MAX_DOMAINS

_ISSUER_TEXT = (
    "The provider's issuer, exactly as its ID tokens name it; its discovery document is read from "
    "`{issuer}/.well-known/openid-configuration`. `https`, or `http` to a loopback address (development). "
    "Private, link-local and reserved addresses are refused (400 naming `issuer`)."
)


class SsoSettingsPut(TrackerSchema):
    issuer = Text(max_length=500, min_length=1, required=True, metadata={"description": _ISSUER_TEXT})
    client_id = Text(max_length=255, min_length=1, required=True)
    client_secret = Text(
        max_length=1000,
        min_length=1,
        strip=False,
        load_only=True,
        metadata={
            "description": "Write-only, stored encrypted. Required the first time; absent, the stored one stays."
        },
    )
    domains = List(
        Text(max_length=253, min_length=1),
        max_items=MAX_DOMAINS,
        load_default=list,
        metadata={
            "description": "E-mail domains the provider vouches for. Each is proven once, by a DNS TXT record "
            "(`domain_status`) or by an operator; a domain another organization has proven is refused (409)."
        },
    )
    enabled = Boolean(load_default=False, metadata={"description": "Sign-in through the provider is offered"})
    enforced = Boolean(
        load_default=False,
        metadata={
            "description": "Members (owners excepted) whose address is in a proven domain sign in only through "
            "the provider: password sign-ins answer 403 `SSO_REQUIRED` and their sessions end now. "
            "Needs `enabled`."
        },
    )
    default_role = choice(
        SSO_ROLES,
        load_default="member",
        metadata={"description": "The role of someone the provider signs up"},
    )


class DomainStatus(ma.Schema):
    domain = fields.String(required=True)
    verified = fields.Boolean(required=True)
    verified_at = fields.DateTime(allow_none=True)
    verified_by = fields.String(allow_none=True, metadata={"enum": ["dns", "operator"]})
    txt_name = fields.String(required=True, metadata={"description": "Where to publish the TXT record"})
    txt_value = fields.String(required=True, metadata={"description": "The TXT record's value"})
    check = fields.String(allow_none=True, metadata={"description": "What the check just made found (pt-BR)"})


class SsoSettings(ma.Schema):
    organization_id = fields.UUID(required=True)
    issuer = fields.String(required=True)
    client_id = fields.String(required=True)
    has_client_secret = fields.Boolean(required=True)
    domains = fields.List(fields.String(), required=True)
    domain_status = fields.List(fields.Nested(DomainStatus), required=True)
    enabled = fields.Boolean(required=True)
    enforced = fields.Boolean(required=True)
    default_role = fields.String(required=True, metadata={"enum": list(SSO_ROLES)})
    login_url = fields.String(required=True, metadata={"description": "Where people start signing in"})
    updated_at = fields.DateTime(required=True)


class ConnectionCheck(ma.Schema):
    name = fields.String(required=True, metadata={"enum": ["discovery", "pkce", "jwks"]})
    ok = fields.Boolean(required=True)
    message = fields.String(required=True)


class ConnectionTest(ma.Schema):
    ok = fields.Boolean(required=True)
    checks = fields.List(fields.Nested(ConnectionCheck), required=True)
