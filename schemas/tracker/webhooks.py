"""Webhooks of an organization and their deliveries."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields

from models.tracker_webhooks import DELIVERY_STATES, WEBHOOK_EVENTS
from schemas.common import TrackerSchema
from schemas.fields import Boolean, List, Text, choice

URL_MAX = 2000

_URL_TEXT = (
    "Where deliveries are POSTed: `https`, or `http` to a loopback address. A host that is, or "
    "resolves to, a private, link-local, multicast or reserved address is refused (400 naming "
    "`url`); it is resolved again at each delivery."
)
_EVENTS_TEXT = "The events to deliver, at least one."


def _events(**kwargs) -> List:
    return List(choice(WEBHOOK_EVENTS), min_items=1, max_items=len(WEBHOOK_EVENTS), **kwargs)


class WebhookCreate(TrackerSchema):
    url = Text(max_length=URL_MAX, min_length=1, required=True, metadata={"description": _URL_TEXT})
    events = _events(required=True, metadata={"description": _EVENTS_TEXT})
    secret = Text(
        min_length=16,
        max_length=200,
        strip=False,
        metadata={
            "description": "The HMAC key of the signatures; 64 random hex characters are generated when absent"
        },
    )


class WebhookUpdate(TrackerSchema):
    url = Text(max_length=URL_MAX, min_length=1, metadata={"description": _URL_TEXT})
    events = _events(metadata={"description": _EVENTS_TEXT})
    enabled = Boolean(
        metadata={
            "description": "`false` stops deliveries (pending ones fail); `true` resumes and "
            "restarts the failure clock"
        }
    )


class Webhook(ma.Schema):
    id = fields.UUID(required=True)
    url = fields.String(required=True)
    events = fields.List(fields.String(metadata={"enum": list(WEBHOOK_EVENTS)}), required=True)
    enabled = fields.Boolean(required=True)
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)
    failing_since = fields.DateTime(
        allow_none=True, metadata={"description": "The first failed attempt since the last success"}
    )
    disabled_at = fields.DateTime(
        allow_none=True, metadata={"description": "When it was disabled after a day of failures"}
    )
    disabled_reason = fields.String(allow_none=True)


class CreatedWebhook(Webhook):
    secret = fields.String(
        required=True, metadata={"description": "Shown only in this answer: keep it to check signatures"}
    )


class WebhookList(ma.Schema):
    webhooks = fields.List(fields.Nested(Webhook), required=True)


def _next_attempt(delivery) -> str | None:
    if delivery.state != "pending":
        return None
    return fields.DateTime().serialize("next_attempt_at", delivery)


class Delivery(ma.Schema):
    id = fields.UUID(required=True, metadata={"description": "Also the body's `id` and `X-Giro-Delivery`"})
    event = fields.String(required=True, metadata={"enum": list(WEBHOOK_EVENTS)})
    state = fields.String(
        required=True,
        metadata={
            "enum": list(DELIVERY_STATES),
            "description": "`pending` (waiting for its next attempt), `sending`, `delivered` (a 2xx "
            "answer) or `failed` (given up after 24 h, or its webhook was disabled)",
        },
    )
    attempts = fields.Integer(required=True)
    response_status = fields.Integer(
        allow_none=True, metadata={"description": "The HTTP status of the last attempt; null without one"}
    )
    next_attempt_at = fields.Function(
        _next_attempt,
        allow_none=True,
        metadata={"type": "string", "format": "date-time", "description": "Only while pending"},
    )
    last_attempt_at = fields.DateTime(allow_none=True)
    delivered_at = fields.DateTime(allow_none=True)
    error = fields.String(
        attribute="last_error", allow_none=True, metadata={"description": "Why the last attempt failed"}
    )
    created_at = fields.DateTime(required=True)


class DeliveryList(ma.Schema):
    deliveries = fields.List(fields.Nested(Delivery), required=True)
