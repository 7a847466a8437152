"""Single sign-on pages: signing in through an organization's provider (start and callback),
and the organization's settings page (owners and admins, plan feature ``sso``), through the
same ``services.tracker.sso`` functions as the REST API."""

from __future__ import annotations

import uuid

from flask import redirect, request, url_for
from flask_babel import gettext as _
from flask_jwt_extended import current_user, set_access_cookies
from marshmallow import ValidationError

from blueprints.pages.common import end_transaction, page_login_required, refused, render_page, safe_next
from blueprints.pages.tracker_common import ROLE_TEXT, TrackerPagesBlueprint
from models.tracker_sso import SSO_ROLES
from schemas.tracker.sso import SsoSettingsPut
from services import auth as auth_service
from services.errors import DomainError, PlanLimitError
from services.tracker import organizations, plans, sso, sso_signin
from services.tracker.sso_provider import SsoRefused, describe, test_connection
from services.transactions import writer

blp = TrackerPagesBlueprint("sso_pages", __name__)

BROWSER_COOKIE = "giro_sso"
TEMPLATE = "tracker/sso.html"


def _callback_url() -> str:
    return url_for("sso_pages.callback", _external=True)


def _refusal_page(exc: SsoRefused, status: int = 400):
    return render_page(
        "account/login.html",
        status=status,
        next_url=url_for("home.index"),
        form={},
        errors={"_form": describe(exc)},
        email_first=False,
    )


@blp.route("/sso/<string:slug>/login")
def start(slug: str):
    """Send the browser to the provider, with a cookie that ties the callback to it."""
    next_url = safe_next(request.args.get("next"))
    hint = (request.args.get("login_hint") or "").strip()[:254] or None
    try:
        started = sso_signin.start(slug, redirect_uri=_callback_url(), next_url=next_url, login_hint=hint)
    except SsoRefused as exc:
        end_transaction(commit=False)
        return _refusal_page(exc, 502 if exc.reason.startswith("provider") else 400)
    end_transaction(commit=True)  # ends the read; the record is one short write
    with writer():
        sso_signin.remember(started)
    response = redirect(started.url)
    response.set_cookie(
        BROWSER_COOKIE,
        started.browser_token,
        max_age=int(sso_signin.STATE_LIFETIME.total_seconds()),
        path=url_for("sso_pages.callback"),
        secure=request.is_secure,
        httponly=True,
        samesite="Lax",  # sent on the provider's top-level redirect back
    )
    return response


@blp.route("/sso/callback")
def callback():
    """End the sign-in: the same cookie as the login page, or the login page saying what failed.
    Three short transactions: the state's claim (kept even when the sign-in fails, so a replay
    is refused), the provider's answer checked (reads only, while the network is waited on),
    then the account and the session."""
    with writer():
        try:
            claimed = sso_signin.claim_state(request.args.get("state"), request.cookies.get(BROWSER_COOKIE))
        except SsoRefused as exc:
            end_transaction(commit=False)
            return _refusal_page(exc)
        end_transaction(commit=True)
    try:
        claims = sso_signin.verified_claims(claimed, request.args.to_dict(), _callback_url())
        end_transaction(commit=True)
        with writer():
            user = sso_signin.sign_in(claimed, claims)
            access, _refresh = auth_service.issue_tokens(user, remember=True)
    except SsoRefused as exc:
        end_transaction(commit=False)
        with writer():
            sso_signin.record_refusal(claimed.organization_id, exc)
            end_transaction(commit=True)
        return _refusal_page(exc)
    response = redirect(claimed.next_url)
    set_access_cookies(response, access)
    response.delete_cookie(BROWSER_COOKIE, path=url_for("sso_pages.callback"))
    return response


# --------------------------------------------------------------------------- settings page


def _context(organization_id: uuid.UUID, **extra) -> dict:
    organization, role = organizations.get_organization(current_user, organization_id)
    context = {
        "organization": organization,
        "my_role": role,
        "ROLES": SSO_ROLES,
        "ROLE_TEXT": ROLE_TEXT,
        "settings": None,
        "form": None,
        "errors": {},
        "saved": False,
        "checks": None,
        "domain_check": None,
        "plan_error": None,
        "login_url": url_for("sso_pages.start", slug=organization.slug, _external=True),
    }
    try:
        context["settings"] = sso.find_settings(current_user, organization_id)
    except PlanLimitError:
        offering = plans.plans_with_feature(sso.FEATURE)
        context["plan_error"] = _(
            "O plano desta organização não inclui login único; ele faz parte dos planos %(plans)s.",
            plans=", ".join(p.name for p in offering) or "-",
        )
    context.update(extra)
    if context["form"] is None and context["settings"] is not None:
        settings = context["settings"]
        context["form"] = {**vars(settings), "domains": "\n".join(settings.domains)}
    return context


def _page(organization_id: uuid.UUID, status: int = 200, **extra):
    return render_page(TEMPLATE, status=status, **_context(organization_id, **extra))


@blp.route("/o/<uuid:organization_id>/sso")
@page_login_required()
def settings_page(organization_id: uuid.UUID):
    return _page(organization_id)


def _form_data() -> tuple[dict, dict]:
    form = {
        "issuer": request.form.get("issuer", "").strip(),
        "client_id": request.form.get("client_id", "").strip(),
        "client_secret": request.form.get("client_secret", ""),
        "domains": request.form.get("domains", ""),
        "enabled": "enabled" in request.form,
        "enforced": "enforced" in request.form,
        "default_role": request.form.get("default_role", "member"),
    }
    data = {**form, "domains": [d for d in form["domains"].replace(",", "\n").split() if d]}
    if not data["client_secret"]:
        data.pop("client_secret")
    return form, data


@blp.route("/o/<uuid:organization_id>/sso", methods=["POST"])
@page_login_required()
def save_settings(organization_id: uuid.UUID):
    form, data = _form_data()
    try:
        sso.put_settings(current_user, organization_id, SsoSettingsPut().load(data))
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc, inline_not_found=True, by_field=True)
        return _page(
            organization_id, refusal.status, form={**form, "client_secret": ""}, errors=refusal.errors
        )
    return _page(organization_id, saved=True)


@blp.route("/o/<uuid:organization_id>/sso/test", methods=["POST"])
@page_login_required()
def test_settings(organization_id: uuid.UUID):
    try:
        settings = sso.get_settings(current_user, organization_id)
    except DomainError as exc:
        refusal = refused(exc, inline_not_found=True)
        return _page(organization_id, refusal.status, errors=refusal.errors)
    return _page(organization_id, checks=test_connection(settings.issuer))


@blp.route("/o/<uuid:organization_id>/sso/domains/<string:domain>/verify", methods=["POST"])
@page_login_required()
def verify_domain(organization_id: uuid.UUID, domain: str):
    try:
        status = sso.verify_domain(current_user, organization_id, domain)
    except DomainError as exc:
        refusal = refused(exc, inline_not_found=True)
        return _page(organization_id, refusal.status, errors=refusal.errors)
    return _page(
        organization_id,
        domain_check={"domain": status.domain, "ok": status.verified, "message": status.check},
    )
