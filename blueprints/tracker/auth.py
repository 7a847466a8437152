"""Accounts: register, login, refresh (rotating) and ``me``."""

from __future__ import annotations

from flask_jwt_extended import current_user

from blueprints.common import auth_required, login_throttle, mail_throttle, presented_access_claims
from blueprints.parsing import Blueprint
from extensions import db
from schemas.common import TrackerError
from schemas.tracker.accounts import (
    LoginRequest,
    LoginResponse,
    Me,
    RefreshRequest,
    RegisterRequest,
    RegisterResponse,
    TokenPair,
    VerifyEmailRequest,
)
from services import auth as auth_service
from services import identity
from services.tracker import accounts

blp = Blueprint("tracker_auth", __name__, url_prefix="/auth", description="Accounts and tokens")


@blp.route("/register", methods=["POST"])
@mail_throttle
@blp.arguments(RegisterRequest, error_status_code=400)
@blp.response(201, RegisterResponse)
@blp.alt_response(400, schema=TrackerError, description="Invalid fields (password: at least 8 characters)")
@blp.alt_response(
    429, schema=TrackerError, description="RATE_LIMITED: too many e-mails to this address or from this client"
)
def register(body):
    """Create an account with its own organization (as `owner`, on the `free` plan) and a default workspace.

    The answer is the same whether or not the address already has an account, so
    registration never tells who has one. The address is unproven until the link
    e-mailed to it is followed (`POST /auth/verify-email`); only then can the account
    accept invitations or be the configured superadmin. If the address already
    belongs to someone, they are told by e-mail instead, and the new account can
    never prove it.

    The account is the same one the remanejamento service signs in with, but it
    has no access there until a stock admin grants a role.

    The organization's and the workspace's slugs come from the name, with a suffix (`-2`,
    `-3`, ...) when it is taken, also by a registration made at the same moment: a name
    never makes it fail.
    """
    user, access, refresh = accounts.register(body["name"], body["email"], body["password"])
    return {"user": user, "access_token": access, "refresh_token": refresh}


@blp.route("/logout", methods=["POST"])
@blp.arguments(RefreshRequest, error_status_code=400)
@blp.response(204)
def logout(body):
    """End a session: the refresh token, every token rotated from the same login, and the
    access tokens issued with them stop working at once; so does an access token sent
    in `Authorization`. Unknown or expired tokens are ignored."""
    auth_service.logout(body["refresh_token"], presented_access_claims())


@blp.route("/verify-email", methods=["POST"])
@blp.arguments(VerifyEmailRequest, error_status_code=400)
@blp.response(204)
@blp.alt_response(400, schema=TrackerError, description="INVALID_TOKEN: unknown, used or expired link")
@blp.alt_response(409, schema=TrackerError, description="CONFLICT: the address belongs to another account")
def verify_email(body):
    """Prove an address with the single-use token e-mailed to it (48 hours): a new
    account's address, or a changed one, which takes effect now."""
    identity.verify_email(body["token"])


@blp.route("/resend-verification", methods=["POST"])
@auth_required()
@mail_throttle
@blp.response(204)
@blp.alt_response(401, schema=TrackerError, description="UNAUTHORIZED")
@blp.alt_response(
    429, schema=TrackerError, description="RATE_LIMITED: too many e-mails to this address or from this client"
)
def resend_verification():
    """Send another confirmation link for the signed-in account's unproven address."""
    identity.resend_verification(current_user)


@blp.route("/login", methods=["POST"])
@login_throttle
@blp.arguments(LoginRequest, error_status_code=400)
@blp.response(200, LoginResponse)
@blp.alt_response(400, schema=TrackerError, description="VALIDATION_ERROR")
@blp.alt_response(401, schema=TrackerError, description="INVALID_CREDENTIALS (never says which part)")
@blp.alt_response(403, schema=TrackerError, description="USER_BANNED")
@blp.alt_response(
    429, schema=TrackerError, description="RATE_LIMITED: too many failed attempts (Retry-After)"
)
def login(body):
    """Sign in with e-mail and password: an access token (24 h) and a refresh token (7 days)."""
    user, access, refresh = auth_service.login(body["email"], body["password"])
    return {"user": user, "access_token": access, "refresh_token": refresh}


@blp.route("/refresh", methods=["POST"])
@blp.arguments(RefreshRequest, error_status_code=400)
@blp.response(200, TokenPair)
@blp.alt_response(401, schema=TrackerError, description="INVALID_TOKEN or TOKEN_EXPIRED")
def refresh(body):
    """Exchange a refresh token for a new pair. The presented token dies; presenting it again
    answers `INVALID_TOKEN` and revokes every token descended from the same login."""
    try:
        _user, access, new_refresh = auth_service.rotate_refresh(body["refresh_token"])
    except auth_service.TokenReuseError:
        # The family revocation must outlive this failed request.
        db.session.commit()
        raise
    return {"access_token": access, "refresh_token": new_refresh}


@blp.route("/me", methods=["GET"])
@auth_required()
@blp.response(200, Me)
@blp.alt_response(401, schema=TrackerError, description="UNAUTHORIZED or TOKEN_EXPIRED")
def me():
    """The signed-in user with their organizations and role in each."""
    return accounts.me(current_user)
