"""Sign in and out, password recovery, profile and preferences — the same accounts as the APIs."""

from __future__ import annotations

from flask import Blueprint, current_app, redirect, request, url_for
from flask_jwt_extended import current_user, get_jwt, set_access_cookies, unset_jwt_cookies
from marshmallow import ValidationError

from blueprints.common import login_throttle, mail_throttle
from blueprints.pages.common import page_login_required, refused, render_page, safe_next
from schemas.auth import (
    IDIOMAS,
    ForgotPasswordRequest,
    LoginRequest,
    PushSubscriptionRequest,
    ResetPasswordRequest,
    UpdateProfileRequest,
)
from services import auth as auth_service
from services import identity
from services import users as user_service
from services.errors import DomainError
from services.stock import notifications as stock_notifications
from services.tracker import sso_signin

blp = Blueprint("account", __name__)


def _field_errors(exc: ValidationError) -> dict[str, str]:
    return {
        field: " ".join(msgs) if isinstance(msgs, list) else str(msgs) for field, msgs in exc.messages.items()
    }


def _sso_offered() -> bool:
    """Any organization signs in through its provider: the login page asks the address first."""
    return "tracker" in current_app.config["SERVICES"] and sso_signin.any_enabled()


def _login_page(status: int = 200, **context):
    context.setdefault("form", {})
    context.setdefault("errors", {})
    context.setdefault("email_first", False)
    return render_page("account/login.html", status=status, **context)


@blp.route("/login", methods=["GET", "POST"])
@login_throttle
def login():
    next_url = safe_next(request.values.get("next"))
    if request.method == "GET":
        # ``?senha=1``: straight to the password (an owner's break-glass, whatever the domain).
        email_first = _sso_offered() and not request.args.get("senha")
        return _login_page(next_url=next_url, email_first=email_first)
    form = request.form.to_dict()
    form["remember"] = "remember" in request.form
    if "senha" not in request.form:
        # The address step: an address of a domain an organization's provider vouches for goes
        # there; any other continues with its password. Decided by the domain alone, so it
        # tells nothing about whether an account exists.
        email = auth_service.normalize_email(form.get("email", ""))
        organization = sso_signin.organization_for_email(email) if "@" in email else None
        if organization is not None:
            sso_url = url_for("sso_pages.start", slug=organization.slug, login_hint=email, next=next_url)
            return render_page("account/sso_redirect.html", sso_url=sso_url, organization=organization)
        return _login_page(next_url=next_url, form={"email": email})
    try:
        data = LoginRequest().load(form)
        _user, access, _refresh = auth_service.login(data["email"], data["senha"], remember=data["remember"])
    except ValidationError as exc:
        return _login_page(422, next_url=next_url, form=form, errors=_field_errors(exc))
    except DomainError as exc:
        refusal = refused(exc)
        sso_slug = exc.params.get("slug") if exc.reason == "sso_required" else None
        return _login_page(
            refusal.status, next_url=next_url, form=form, errors=refusal.errors, sso_slug=sso_slug
        )
    response = redirect(next_url)
    set_access_cookies(response, access)
    return response


@blp.route("/logout", methods=["POST"])
@page_login_required()
def logout():
    # The cookie's token stops working everywhere now, even if a copy of it survives.
    auth_service.logout(None, get_jwt())
    response = redirect(url_for("account.login"))
    unset_jwt_cookies(response)
    return response


@blp.route("/forgot-password", methods=["GET", "POST"])
@mail_throttle
def forgot_password():
    if request.method == "GET":
        return render_page("account/forgot.html", form={}, errors={}, sent=False)
    form = request.form.to_dict()
    try:
        data = ForgotPasswordRequest().load(form)
    except ValidationError as exc:
        return render_page(
            "account/forgot.html", status=422, form=form, errors=_field_errors(exc), sent=False
        )
    auth_service.request_password_reset(data["email"])
    return render_page("account/forgot.html", form={}, errors={}, sent=True)


@blp.route("/reset-password", methods=["GET", "POST"])
def reset_password():
    token = request.values.get("token", "")
    if request.method == "GET":
        return render_page("account/reset.html", token=token, errors={}, done=False)
    try:
        data = ResetPasswordRequest().load({"token": token, "senha": request.form.get("senha", "")})
        auth_service.reset_password(data["token"], data["senha"])
    except ValidationError as exc:
        return render_page(
            "account/reset.html", status=422, token=token, errors=_field_errors(exc), done=False
        )
    except DomainError as exc:
        refusal = refused(exc, inline_not_found=True)
        return render_page(
            "account/reset.html", status=refusal.status, token=token, errors=refusal.errors, done=False
        )
    return render_page("account/reset.html", token="", errors={}, done=True)


@blp.route("/perfil", methods=["GET", "POST"])
@page_login_required()
def profile():
    saved = False
    errors: dict[str, str] = {}
    status = 200
    if request.method == "POST":
        try:
            data = UpdateProfileRequest().load(
                {
                    "nome": request.form.get("nome"),
                    "email": request.form.get("email"),
                    "senhaAtual": request.form.get("senhaAtual") or None,
                }
            )
            user_service.update_profile(current_user, **data)
            saved = True
        except ValidationError as exc:
            errors, status = _field_errors(exc), 422
        except DomainError as exc:
            refusal = refused(exc, inline_not_found=True)
            errors, status = refusal.errors, refusal.status
    return render_page(
        "account/profile.html", "profile_form", status=status, user=current_user, errors=errors, saved=saved
    )


@blp.route("/perfil/confirmar-email", methods=["POST"])
@page_login_required()
@mail_throttle
def resend_verification():
    identity.resend_verification(current_user)
    return render_page(
        "account/profile.html", "profile_form", user=current_user, errors={}, saved=False, link_sent=True
    )


@blp.route("/verify-email", methods=["GET", "POST"])
def verify_email():
    """The link e-mailed to an address. Opening it shows a button: mail scanners that
    follow links must not confirm anything."""
    token = request.values.get("token", "")
    if request.method == "GET":
        return render_page("account/verify.html", token=token, error=None, done=False)
    try:
        identity.verify_email(token[:200])
    except DomainError as exc:
        refusal = refused(exc, inline_not_found=True)
        return render_page(
            "account/verify.html", status=refusal.status, token="", error=refusal.message, done=False
        )
    return render_page("account/verify.html", token="", error=None, done=True)


@blp.route("/perfil/preferencias", methods=["POST"])
@page_login_required()
def preferences():
    user_service.update_preferences(
        current_user,
        notif_email="notifEmail" in request.form,
        notif_push="notifPush" in request.form,
        digest_semanal="digestSemanal" in request.form,
        idioma=request.form.get("idioma") if request.form.get("idioma") in IDIOMAS else None,
    )
    return render_page(
        "account/profile.html",
        "preferences_form",
        user=current_user,
        errors={},
        saved=False,
        prefs_saved=True,
    )


@blp.route("/perfil/push", methods=["POST"])
@page_login_required()
def push_subscription():
    """This browser's Web Push subscription, sent by ``static/js/push.js`` (JSON, as the API)."""
    try:
        body = PushSubscriptionRequest().load(request.get_json(silent=True) or {})
        subscription = stock_notifications.subscribe_browser(
            current_user, body["endpoint"], body["keys"]["p256dh"], body["keys"]["auth"]
        )
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc, inline_not_found=True)
        return {"detail": refusal.message}, refusal.status
    return {"id": str(subscription.id)}, 201


@blp.route("/preferencias/cancelar", methods=["GET", "POST"])
def unsubscribe():
    """The e-mails' unsubscribe link: GET asks, POST turns the preference off without signing
    in (also the mail clients' one-click POST, RFC 8058). The signed token names the account
    and the preference (``email`` or ``resumo``)."""
    found = stock_notifications.read_unsubscribe_token(request.values.get("token", ""))
    if found is None:
        return render_page("account/unsubscribe.html", status=404, invalid=True, done=False)
    user, preference = found
    if request.method == "POST":
        stock_notifications.unsubscribe(user, preference)
        return render_page(
            "account/unsubscribe.html", invalid=False, done=True, preference=preference, token=""
        )
    token = request.values.get("token", "")
    return render_page(
        "account/unsubscribe.html",
        invalid=False,
        done=False,
        preference=preference,
        token=token,
        email=user.email,
    )
