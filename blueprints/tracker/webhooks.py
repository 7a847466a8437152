"""An organization's webhooks (owners and admins) and their last deliveries."""

from __future__ import annotations

from functools import partial

from flask_jwt_extended import current_user

from blueprints.common import auth_required
from blueprints.parsing import Blueprint
from blueprints.tracker.docs import error_responses
from schemas.tracker.webhooks import (
    CreatedWebhook,
    DeliveryList,
    Webhook,
    WebhookCreate,
    WebhookList,
    WebhookUpdate,
)
from services.tracker import webhooks

blp = Blueprint(
    "tracker_webhooks",
    __name__,
    url_prefix="/organizations/<uuid:organization_id>/webhooks",
    description=(
        "Webhooks: each change to an issue (`issue.created`, `issue.updated`, `issue.deleted`), "
        "each new comment (`comment.created`) and each file attached or removed (`attachment.created`, "
        "`attachment.deleted`: `data.attachment` as the attachments API shows it, and `data.issue`) "
        "is POSTed as JSON `{id, event, created_at, data}` to the "
        "organization's webhooks subscribed to it, after the change commits, by a background job. "
        "Headers: `X-Giro-Event`, `X-Giro-Delivery` (the body's `id`), `X-Giro-Timestamp` (Unix "
        'seconds) and `X-Giro-Signature: sha256=<hex HMAC-SHA256 of "{timestamp}.{body}" under the '
        "secret>`; reject a timestamp far from your clock to refuse replays. A 2xx answer delivers it; "
        "anything else (redirects are not followed; 5 s timeouts) is retried after 1, 2, 4... minutes, "
        "at most an hour apart, for 24 h. A webhook whose every attempt failed for 24 h is disabled and "
        "the organization's owners are e-mailed. Only owners and admins manage webhooks (403 for other "
        "members); another organization's are 404."
    ),
)

_errors = partial(error_responses, blp)


@blp.route("", methods=["GET"])
@auth_required()
@blp.response(200, WebhookList)
@_errors(403, 404)
def list_webhooks(organization_id):
    """The organization's webhooks, oldest first (secrets are never shown again)."""
    return {"webhooks": webhooks.list_webhooks(current_user, organization_id)}


@blp.route("", methods=["POST"])
@auth_required()
@blp.arguments(WebhookCreate, error_status_code=400)
@blp.response(201, CreatedWebhook)
@_errors(400, 403, 404, 409)
def create_webhook(body, organization_id):
    """Add a webhook, enabled. The answer carries its `secret`, the only time it is shown.
    400 `VALIDATION_ERROR` naming `url` for a refused address, `events` for an unknown event;
    409 past 20 webhooks in one organization."""
    return webhooks.create_webhook(
        current_user, organization_id, body["url"], body["events"], body.get("secret")
    )


@blp.route("/<uuid:webhook_id>", methods=["PATCH"])
@auth_required()
@blp.arguments(WebhookUpdate, error_status_code=400)
@blp.response(200, Webhook)
@_errors(400, 403, 404)
def update_webhook(body, organization_id, webhook_id):
    """Change the URL, the events, or `enabled` (enabling a webhook disabled after a day of
    failures starts it afresh)."""
    return webhooks.update_webhook(current_user, organization_id, webhook_id, body)


@blp.route("/<uuid:webhook_id>", methods=["DELETE"])
@auth_required()
@blp.response(204)
@_errors(403, 404)
def delete_webhook(organization_id, webhook_id):
    """Delete the webhook and its deliveries; pending ones are not sent."""
    webhooks.delete_webhook(current_user, organization_id, webhook_id)


@blp.route("/<uuid:webhook_id>/deliveries", methods=["GET"])
@auth_required()
@blp.response(200, DeliveryList)
@_errors(403, 404)
def list_deliveries(organization_id, webhook_id):
    """The webhook's last 50 deliveries, newest first: state, attempts, the last answer's HTTP
    status, the next attempt (while pending) and the last error."""
    return {"deliveries": webhooks.list_deliveries(current_user, organization_id, webhook_id)}
