"""An organization's single sign-on settings (owners and admins, plan feature ``sso``)."""

from __future__ import annotations

from functools import partial

from flask import url_for
from flask_jwt_extended import current_user

from blueprints.common import auth_required
from blueprints.parsing import Blueprint
from blueprints.tracker.docs import error_responses
from schemas.tracker.sso import ConnectionTest, DomainStatus, SsoSettings, SsoSettingsPut
from services.tracker import sso
from services.tracker.sso_provider import test_connection

blp = Blueprint(
    "tracker_sso",
    __name__,
    url_prefix="/organizations/<uuid:organization_id>/sso",
    description=(
        "Single sign-on through the organization's OpenID Connect provider (authorization code with "
        "PKCE; `state`, `nonce` and the ID token's signature, `iss`, `aud`, `exp`, `iat` and "
        "`email_verified` checked). People start at the page `/tracker/sso/{organization_slug}/login`, "
        "or type an address of a proven domain on the login page. A first sign-in creates the account "
        "(no password) or links the account that proved the address, and makes it a member with "
        "`default_role`. Owners and admins only (403 for other members); another organization's is 404; "
        "402 `PLAN_LIMIT_REACHED` naming `sso` when the plan lacks it."
    ),
)

_errors = partial(error_responses, blp)


def _shown(settings: sso.SsoSettings) -> dict:
    data = vars(settings).copy()
    data["login_url"] = url_for("sso_pages.start", slug=settings.organization_slug, _external=True)
    return data


@blp.route("", methods=["GET"])
@auth_required()
@blp.response(200, SsoSettings)
@_errors(402, 403, 404)
def get_sso(organization_id):
    """The settings (the client secret is never shown: `has_client_secret`). 404 when none are set."""
    return _shown(sso.get_settings(current_user, organization_id))


@blp.route("", methods=["PUT"])
@auth_required()
@blp.arguments(SsoSettingsPut, error_status_code=400)
@blp.response(200, SsoSettings)
@_errors(400, 402, 403, 404, 409)
def put_sso(body, organization_id):
    """Create or replace the settings; without `client_secret` the stored one stays. New domains
    start unproven (`domain_status` says which TXT record proves them). Turning `enforced` on ends
    the sessions of the members it covers. Recorded in the audit log."""
    return _shown(sso.put_settings(current_user, organization_id, body))


@blp.route("", methods=["DELETE"])
@auth_required()
@blp.response(204)
@_errors(403, 404)
def delete_sso(organization_id):
    """Remove the provider and its domains: everyone signs in with a password again (accounts the
    provider created set one with "forgot password"). Allowed whatever the plan, so a downgraded
    organization can clean up."""
    sso.delete_settings(current_user, organization_id)


@blp.route("/test", methods=["POST"])
@auth_required()
@blp.response(200, ConnectionTest)
@_errors(402, 403, 404)
def test_sso(organization_id):
    """Fetch the discovery document and the key set now and say, check by check in pt-BR, what is
    wrong: unreachable, issuer mismatch, no PKCE S256, unreadable keys."""
    settings = sso.get_settings(current_user, organization_id)
    checks = test_connection(settings.issuer)
    return {"ok": all(check["ok"] for check in checks), "checks": checks}


@blp.route("/domains/<string:domain>/verify", methods=["POST"])
@auth_required()
@blp.response(200, DomainStatus)
@_errors(402, 403, 404, 409)
def verify_domain(organization_id, domain):
    """Look for the domain's TXT record (`txt_name` = `txt_value`) now. Found, the domain is proven
    for this organization (`verified`); not found, `check` says what the DNS answered. 409 when
    another organization proved it first."""
    return sso.verify_domain(current_user, organization_id, domain)
