"""Sign-up: an account, its own organization (as owner) and a default workspace, exactly as
``POST /tracker/api/v1/auth/register`` makes them (``services.tracker.accounts.register``).

The answer is the same whether or not the address already has an account: a page
saying to follow the link e-mailed to it. The new account is signed in at once (as
the API hands out tokens); its address counts only once that link is followed.
"""

from __future__ import annotations

from flask import Blueprint, request
from flask_jwt_extended import set_access_cookies
from marshmallow import ValidationError

from blueprints.common import mail_throttle
from blueprints.pages.common import refused, render_page
from schemas.tracker.accounts import RegisterRequest
from services.errors import DomainError
from services.tracker import accounts

blp = Blueprint("signup", __name__)


@blp.route("/signup", methods=["GET", "POST"])
@mail_throttle
def signup():
    if request.method == "GET":
        return render_page("account/signup.html", form={}, errors={})
    form = {key: request.form.get(key, "") for key in ("name", "email", "password")}
    try:
        data = RegisterRequest().load(form)
        _user, access, _refresh = accounts.register(data["name"], data["email"], data["password"])
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc, inline_not_found=True)
        form.pop("password")
        return render_page("account/signup.html", status=refusal.status, form=form, errors=refusal.errors)
    response = render_page("account/signup_sent.html", email=data["email"])
    set_access_cookies(response, access)
    return response
