"""Web Push (RFC 8030), payloads encrypted (RFC 8291) and signed with the instance's VAPID keys
(RFC 8292) by pywebpush. Keys come from the environment: ``VAPID_PRIVATE_KEY``,
``VAPID_PUBLIC_KEY`` (what browsers subscribe with) and ``VAPID_SUBJECT`` (a ``mailto:`` or
``https:`` contact). Without them no push is sent and the preferences say it is unavailable."""

from __future__ import annotations

import json

import requests
from flask import current_app
from pywebpush import WebPushException, webpush

TIMEOUT = 10
TTL = 24 * 3600  # a message waits a day for a browser that is offline


class PushFailed(Exception):
    """The push service failed; worth retrying later."""


class SubscriptionGone(Exception):
    """The push service says the subscription no longer exists (404 or 410): drop it."""


def send(subscription, message: dict) -> None:
    cfg = current_app.config
    info = {
        "endpoint": subscription.endpoint,
        "keys": {"p256dh": subscription.p256dh, "auth": subscription.auth},
    }
    try:
        webpush(
            subscription_info=info,
            data=json.dumps(message, ensure_ascii=False),
            # The raw private key, base64url (pywebpush reads it with py_vapid's Vapid02: RFC 8292).
            vapid_private_key=cfg["VAPID_PRIVATE_KEY"],
            # A new dict each time: pywebpush writes the push service's ``aud`` into it.
            vapid_claims={"sub": cfg["VAPID_SUBJECT"]},
            ttl=TTL,
            timeout=TIMEOUT,
        )
    except WebPushException as exc:
        status = exc.response.status_code if exc.response is not None else None
        if status in (404, 410):
            raise SubscriptionGone(str(status)) from None
        raise PushFailed(f"push service answered {status}: {exc.message}") from None
    except requests.RequestException as exc:
        raise PushFailed(f"push service unreachable: {exc.__class__.__name__}") from None
