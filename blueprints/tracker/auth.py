"""Accounts: register, login, refresh (rotating) and ``me``."""

from __future__ import annotations

from flask_jwt_extended import current_user

from blueprints.common import auth_required, login_throttle
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
)
from services import auth as auth_service
from services.tracker import accounts

blp = Blueprint("tracker_auth", __name__, url_prefix="/auth", description="Accounts and tokens")


@blp.route("/register", methods=["POST"])
@blp.arguments(RegisterRequest, error_status_code=400)
@blp.response(201, RegisterResponse)
@blp.alt_response(400, schema=TrackerError, description="Invalid fields (password: at least 8 characters)")
@blp.alt_response(409, schema=TrackerError, description="An account with this e-mail exists")
def register(body):
    """Create an account with its own organization (as `owner`, on the `free` plan) and a default workspace.

    The account is the same one the remanejamento service signs in with.
    """
    user, access, refresh = accounts.register(body["name"], body["email"], body["password"])
    return {"user": user, "access_token": access, "refresh_token": refresh}


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
