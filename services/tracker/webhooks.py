"""Webhooks: an organization's owners and admins subscribe URLs to its issue events.

Nothing is sent inside the request that made a change. The change calls
``emit`` in its own transaction: one outbox row (``webhook_deliveries``) per
enabled webhook subscribed to the event, holding the exact JSON body. Once the
transaction commits, a ``webhooks`` job runs ``deliver_due``; ``flask tracker
deliver`` (cron, or ``flask scheduler`` every minute) runs the same pass, so a
delivery whose job was lost still goes.

A pass claims due rows in one statement (``FOR UPDATE SKIP LOCKED`` on
PostgreSQL, so passes running at once take disjoint rows; SQLite's single
writer makes the conditional UPDATE atomic) and commits the claim before
sending, so no lock is held while a receiver answers. A claim older than
``LEASE`` (a pass that died) is due again.

Each delivery is a JSON POST ``{id, event, created_at, data}`` with the
headers ``X-Giro-Event``, ``X-Giro-Delivery``, ``X-Giro-Timestamp`` and
``X-Giro-Signature: sha256=<hex HMAC-SHA256 of "{timestamp}.{body}">`` under the
webhook's secret. A 2xx answer delivers it; anything else (a redirect is not
followed, a timeout, a refused address) is retried after 1, 2, 4... minutes,
at most ``MAX_BACKOFF`` apart, until ``GIVE_UP_AFTER`` has passed since the
event. A webhook that has failed every attempt for ``DISABLE_AFTER`` is
disabled, its pending deliveries fail, and its organization's owners get an
e-mail.

Server-side request forgery: only ``https`` URLs, or ``http`` to a loopback
address; hosts resolving to private, link-local, multicast or reserved
addresses are refused when the webhook is saved and again at each delivery,
and the connection goes to the address that was checked (a DNS answer that
changes between the check and the connection cannot redirect it).
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import ipaddress
import json
import logging
import secrets
import socket
import ssl
import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from flask import current_app
from sqlalchemy import and_, delete, func, insert, or_, select, update

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import Issue, Membership, Organization
from models.tracker_collab import Comment
from models.tracker_webhooks import WEBHOOK_EVENTS, Webhook, WebhookDelivery
from services.errors import ConflictError, FieldError, NotFoundError, ValidationFailed
from services.tracker.access import MANAGE, organization_access

log = logging.getLogger(__name__)

KIND = "webhooks"
MAX_PER_ORGANIZATION = 20
DELIVERIES_SHOWN = 50
SECRET_MIN = 16
BATCH = 50  # deliveries claimed at once
MAX_BATCHES = 20  # per pass: a pass ends within minutes even with a large backlog
LEASE = timedelta(minutes=10)
FIRST_RETRY = timedelta(minutes=1)
MAX_BACKOFF = timedelta(hours=1)
GIVE_UP_AFTER = timedelta(hours=24)
DISABLE_AFTER = timedelta(hours=24)
TIMEOUT_SECONDS = 5.0
RESPONSE_READ_LIMIT = 4096
USER_AGENT = "Giro-Webhooks/1"


# --------------------------------------------------------------------------- addresses


class RefusedAddress(Exception):
    """The URL names a place a webhook may not reach."""


def _allowed_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:
        address = mapped
    if address.is_loopback:
        return bool(current_app.config["WEBHOOKS_ALLOW_LOOPBACK"])
    return address.is_global and not address.is_multicast


def _is_loopback_name(host: str) -> bool:
    host = host.lower().rstrip(".")
    return host == "localhost" or host.endswith(".localhost")


def _literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (empty when it does not resolve)."""
    literal = _literal(host)
    if literal is not None:
        return [str(literal)]
    try:
        answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return list(dict.fromkeys(str(answer[4][0]).split("%")[0] for answer in answers))


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str


def parse_url(url: str) -> Target:
    """The URL's parts, or ``RefusedAddress`` saying why it cannot be a webhook's."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise RefusedAddress("Not a valid URL") from exc
    scheme = parts.scheme.lower()
    host = parts.hostname or ""
    if scheme not in ("https", "http") or not host:
        raise RefusedAddress("Must be an https URL (or http to a loopback address)")
    if parts.username is not None or parts.password is not None:
        raise RefusedAddress("Must not carry a user name or password")
    if parts.fragment:
        raise RefusedAddress("Must not have a fragment (#...)")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(scheme, host, port or (443 if scheme == "https" else 80), path)


def check_addresses(target: Target, addresses: list[str]) -> None:
    for text in addresses:
        address = ipaddress.ip_address(text)
        if not _allowed_address(address):
            raise RefusedAddress(f"{target.host} is a private, link-local, multicast or reserved address")
    if target.scheme == "http" and not all(ipaddress.ip_address(a).is_loopback for a in addresses):
        raise RefusedAddress("Plain http is allowed only to a loopback address; use https")


def validate_url(url: str) -> None:
    """Refuse, as a 400 naming ``url``, what a webhook may not point at (checked again at delivery)."""
    try:
        target = parse_url(url)
        literal = _literal(target.host)
        if literal is None and _is_loopback_name(target.host):
            addresses = ["127.0.0.1"]
        else:
            # A name that does not resolve yet is accepted: its deliveries fail until it does.
            addresses = _resolve(target.host, target.port)
        if target.scheme == "http" and not addresses:
            raise RefusedAddress("Plain http is allowed only to a loopback address; use https")
        check_addresses(target, addresses)
    except RefusedAddress as exc:
        raise ValidationFailed(
            [FieldError(("body", "url"), str(exc), reason="webhook_url_refused")], "Validation failed"
        ) from None


# --------------------------------------------------------------------------- managing webhooks


def _events(events: list[str]) -> list[str]:
    unknown = [event for event in events if event not in WEBHOOK_EVENTS]
    if unknown or not events:
        message = f"Unknown event {unknown[0]!r}" if unknown else "Name at least one event"
        raise ValidationFailed(
            [FieldError(("body", "events"), message, reason="webhook_events_invalid")], "Validation failed"
        )
    return [event for event in WEBHOOK_EVENTS if event in set(events)]


def _find(organization_id: uuid.UUID, webhook_id: uuid.UUID, lock: bool = False) -> Webhook:
    query = select(Webhook).where(Webhook.id == webhook_id, Webhook.organization_id == organization_id)
    webhook = db.session.scalar(query.with_for_update() if lock else query)
    if webhook is None:
        raise NotFoundError("Webhook not found", reason="webhook_not_found")
    return webhook


def list_webhooks(user: User, organization_id: uuid.UUID) -> list[Webhook]:
    organization_access(user, organization_id, MANAGE)
    return list(
        db.session.scalars(
            select(Webhook)
            .where(Webhook.organization_id == organization_id)
            .order_by(Webhook.created_at, Webhook.id)
        )
    )


def get_webhook(user: User, organization_id: uuid.UUID, webhook_id: uuid.UUID) -> Webhook:
    organization_access(user, organization_id, MANAGE)
    return _find(organization_id, webhook_id)


def create_webhook(
    user: User, organization_id: uuid.UUID, url: str, events: list[str], secret: str | None = None
) -> Webhook:
    """A new webhook, enabled; its secret is generated unless given (shown only in this answer)."""
    access = organization_access(user, organization_id, MANAGE)
    validate_url(url)
    events = _events(events)
    # Serialises creations in one organization, so two at once cannot pass the limit.
    db.session.execute(select(Organization.id).where(Organization.id == organization_id).with_for_update())
    count = db.session.scalar(
        select(func.count()).select_from(Webhook).where(Webhook.organization_id == organization_id)
    )
    if (count or 0) >= MAX_PER_ORGANIZATION:
        raise ConflictError(
            f"An organization has at most {MAX_PER_ORGANIZATION} webhooks",
            reason="webhook_limit",
            params={"limit": MAX_PER_ORGANIZATION},
        )
    now = utcnow()
    webhook = Webhook(
        organization_id=access.organization.id,
        url=url,
        events=events,
        secret=secret or secrets.token_hex(32),
        enabled=True,
        created_by_id=user.id,
        created_at=now,
        updated_at=now,
    )
    db.session.add(webhook)
    db.session.flush()
    return webhook


def update_webhook(user: User, organization_id: uuid.UUID, webhook_id: uuid.UUID, changes: dict) -> Webhook:
    """Change the URL, the events or whether it is enabled. Enabling it again starts afresh:
    the failure clock is reset; disabling it fails its pending deliveries."""
    organization_access(user, organization_id, MANAGE)
    webhook = _find(organization_id, webhook_id, lock=True)
    if "url" in changes:
        validate_url(changes["url"])
        webhook.url = changes["url"]
    if "events" in changes:
        webhook.events = _events(changes["events"])
    if "enabled" in changes and changes["enabled"] != webhook.enabled:
        webhook.enabled = changes["enabled"]
        webhook.failing_since = None
        webhook.disabled_at = None
        webhook.disabled_reason = None
        if not webhook.enabled:
            _fail_pending(webhook.id, "Webhook disabled")
    webhook.updated_at = utcnow()
    db.session.flush()
    return webhook


def delete_webhook(user: User, organization_id: uuid.UUID, webhook_id: uuid.UUID) -> None:
    """Delete it and its deliveries (``ON DELETE CASCADE``)."""
    organization_access(user, organization_id, MANAGE)
    webhook = _find(organization_id, webhook_id, lock=True)
    db.session.execute(
        delete(WebhookDelivery)
        .where(WebhookDelivery.webhook_id == webhook.id)
        .execution_options(synchronize_session=False)
    )
    db.session.delete(webhook)
    db.session.flush()


def list_deliveries(
    user: User, organization_id: uuid.UUID, webhook_id: uuid.UUID, limit: int = DELIVERIES_SHOWN
) -> list[WebhookDelivery]:
    """The webhook's last ``limit`` deliveries, newest first."""
    organization_access(user, organization_id, MANAGE)
    webhook = _find(organization_id, webhook_id)
    return list(
        db.session.scalars(
            select(WebhookDelivery)
            .where(WebhookDelivery.webhook_id == webhook.id)
            .order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc())
            .limit(min(limit, DELIVERIES_SHOWN))
        )
    )


def _fail_pending(webhook_id: uuid.UUID, reason: str) -> None:
    db.session.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.webhook_id == webhook_id, WebhookDelivery.state == "pending")
        .values(state="failed", last_error=reason[:500], claimed_at=None)
        .execution_options(synchronize_session=False)
    )


# --------------------------------------------------------------------------- events


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _person(user: User | None) -> dict | None:
    return None if user is None else {"id": str(user.id), "name": user.name}


def issue_data(issue: Issue) -> dict[str, Any]:
    """An issue as a webhook receiver sees it."""
    return {
        "id": str(issue.id),
        "key": issue.key,
        "number": issue.number,
        "title": issue.title,
        "description": issue.description,
        "type": issue.type,
        "priority": issue.priority_name,
        "status": {"id": str(issue.status.id), "name": issue.status.name, "category": issue.status.category},
        "assignee": _person(issue.assignee),
        "parent_id": str(issue.parent_id) if issue.parent_id else None,
        "labels": [{"id": str(label.id), "name": label.name} for label in issue.labels],
        "start_date": issue.start_date,
        "due_date": issue.due_date,
        "estimate": issue.estimate,
        "project": {"id": str(issue.project.id), "key": issue.project.key, "name": issue.project.name},
        "created_at": issue.created_at,
        "updated_at": issue.updated_at,
    }


def comment_data(comment: Comment, issue: Issue) -> dict[str, Any]:
    return {
        "comment": {
            "id": str(comment.id),
            "body": comment.body,
            "author": _person(comment.author),
            "created_at": comment.created_at,
        },
        "issue": {"id": str(issue.id), "key": issue.key, "title": issue.title},
    }


_DISPATCH = "giro_webhooks_dispatch"


def emit(
    organization_id: uuid.UUID,
    event: str,
    data: dict[str, Any],
    actor: User | None,
    at: datetime | None = None,
) -> int:
    """Queue ``event`` for every enabled webhook of the organization subscribed to it, in the
    current transaction (flush only); a delivery job runs once it commits. How many rows."""
    hooks = [
        webhook_id
        for webhook_id, events in db.session.execute(
            select(Webhook.id, Webhook.events).where(
                Webhook.organization_id == organization_id, Webhook.enabled.is_(True)
            )
        )
        if event in (events or ())
    ]
    if not hooks:
        return 0
    at = at or utcnow()
    payload = {**data, "actor": _person(actor), "organization_id": str(organization_id)}
    rows = []
    for webhook_id in hooks:
        delivery_id = uuid.uuid4()
        body = json.dumps(
            {"id": str(delivery_id), "event": event, "created_at": at, "data": payload},
            default=_plain,
            ensure_ascii=False,
            separators=(",", ":"),
        )
        rows.append(
            {
                "id": delivery_id,
                "webhook_id": webhook_id,
                "event": event,
                "body": body,
                "state": "pending",
                "attempts": 0,
                "next_attempt_at": at,
                "created_at": at,
            }
        )
    db.session.execute(insert(WebhookDelivery), rows)
    _queue_delivery_job()
    return len(hooks)


def _queue_delivery_job() -> None:
    """One delivery job per transaction that wrote deliveries, dispatched after it commits."""
    from services import job_queue, jobs

    marker = db.session.info.get(_DISPATCH)
    if marker is not None and marker is db.session().get_transaction():
        return
    if job_queue.uses_redis() and not current_app.config["JOBS_REDIS_FALLBACK"] and not job_queue.redis_ok():
        # The change must not fail for it: the scheduled pass sends the rows once Redis is back.
        log.warning("job queue down: webhook deliveries wait for the next scheduled pass")
        return
    jobs.enqueue(KIND, {}, actor=None)
    db.session.info[_DISPATCH] = db.session().get_transaction()


# --------------------------------------------------------------------------- delivering


@dataclass
class PassReport:
    delivered: int = 0
    retried: int = 0
    failed: int = 0
    disabled: int = 0


def _due(now: datetime):
    row = WebhookDelivery
    return and_(
        # Spelled as the partial index's condition, so the index serves the scan.
        row.state.in_(("pending", "sending")),
        or_(
            and_(row.state == "pending", row.next_attempt_at <= now),
            and_(row.state == "sending", row.claimed_at < now - LEASE),
        ),
    )


def claim(now: datetime, limit: int = BATCH) -> list[uuid.UUID]:
    """Take up to ``limit`` due deliveries for this pass and commit the claim."""
    due = (
        select(WebhookDelivery.id)
        .where(_due(now))
        .order_by(WebhookDelivery.next_attempt_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    claimed = list(
        db.session.scalars(
            update(WebhookDelivery)
            # The state is checked again: on SQLite the sub-select takes no lock.
            .where(WebhookDelivery.id.in_(due), _due(now))
            .values(state="sending", claimed_at=now)
            .returning(WebhookDelivery.id)
            .execution_options(synchronize_session=False)
        )
    )
    db.session.commit()
    return claimed


def sign(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to the address that was checked, whatever the name resolves to by then."""

    def __init__(self, address: str, host: str, port: int, timeout: float):
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, address: str, host: str, port: int, timeout: float):
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


@dataclass(frozen=True)
class Outcome:
    status: int | None
    error: str | None

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300


def post(url: str, secret: str, delivery_id: uuid.UUID, event: str, body: str, now: datetime) -> Outcome:
    """One attempt: resolve and check the host, POST the signed body, never follow a redirect."""
    try:
        target = parse_url(url)
        if _literal(target.host) is None and _is_loopback_name(target.host):
            addresses = ["127.0.0.1"]
        else:
            addresses = _resolve(target.host, target.port)
        if not addresses:
            return Outcome(None, f"{target.host} does not resolve")
        check_addresses(target, addresses)
    except RefusedAddress as exc:
        return Outcome(None, f"Refused: {exc}")
    payload = body.encode()
    timestamp = str(int(now.timestamp()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Giro-Event": event,
        "X-Giro-Delivery": str(delivery_id),
        "X-Giro-Timestamp": timestamp,
        "X-Giro-Signature": sign(secret, timestamp, payload),
    }
    connection_class = _PinnedHTTPSConnection if target.scheme == "https" else _PinnedHTTPConnection
    connection = connection_class(addresses[0], target.host, target.port, TIMEOUT_SECONDS)
    try:
        connection.request("POST", target.path, body=payload, headers=headers)
        response = connection.getresponse()
        response.read(RESPONSE_READ_LIMIT)
        status = response.status
    except (OSError, http.client.HTTPException) as exc:
        return Outcome(None, f"{type(exc).__name__}: {exc}"[:500])
    finally:
        connection.close()
    if 300 <= status < 400:
        return Outcome(status, f"Redirect ({status}) not followed")
    if not 200 <= status < 300:
        return Outcome(status, f"HTTP {status}")
    return Outcome(status, None)


def _next_attempt(attempts: int, now: datetime) -> datetime:
    delay = min(FIRST_RETRY * 2 ** max(attempts - 1, 0), MAX_BACKOFF)
    return now + delay


def _notify_owners(webhook: Webhook) -> None:
    """Tell the organization's owners by e-mail (through the mail job) that it was disabled."""
    from services.mail import queue_mail

    organization = db.session.get(Organization, webhook.organization_id)
    owners = db.session.scalars(
        select(User)
        .join(Membership, Membership.user_id == User.id)
        .where(
            Membership.organization_id == webhook.organization_id,
            Membership.role == "owner",
            User.banned.is_(False),
            User.email_verified_at.is_not(None),
        )
    ).all()
    cfg = current_app.config
    # The tracker's pages live under its prefix, or ``/tracker`` when its API is at the root.
    link = f"{cfg['PUBLIC_URL']}{cfg['TRACKER_PREFIX'] or '/tracker'}/o/{webhook.organization_id}/webhooks"
    for owner in owners:
        queue_mail(
            owner.email,
            f"Giro: webhook desativado em {organization.name}",
            f"Olá, {owner.name}.\n\n"
            f"O webhook {webhook.url} da organização {organization.name} falhou em todas as "
            "tentativas de entrega nas últimas 24 horas e foi desativado.\n"
            f"Último erro: {webhook.disabled_reason}\n\n"
            f"Corrija o endereço e ative-o de novo em:\n{link}\n",
        )


def _record(delivery: WebhookDelivery, webhook: Webhook, outcome: Outcome, now: datetime, report) -> None:
    delivery.attempts += 1
    delivery.last_attempt_at = now
    delivery.claimed_at = None
    delivery.response_status = outcome.status
    if outcome.ok:
        delivery.state = "delivered"
        delivery.delivered_at = now
        delivery.last_error = None
        webhook.failing_since = None
        report.delivered += 1
        return
    delivery.last_error = (outcome.error or "")[:500]
    if now - delivery.created_at >= GIVE_UP_AFTER:
        delivery.state = "failed"
        report.failed += 1
    else:
        delivery.state = "pending"
        delivery.next_attempt_at = _next_attempt(delivery.attempts, now)
        report.retried += 1
    webhook.failing_since = webhook.failing_since or now
    if webhook.enabled and now - webhook.failing_since >= DISABLE_AFTER:
        webhook.enabled = False
        webhook.disabled_at = now
        webhook.disabled_reason = f"Falhou por 24 horas; último erro: {delivery.last_error}"[:300]
        webhook.updated_at = now
        if delivery.state == "pending":
            delivery.state = "failed"
            report.retried -= 1
            report.failed += 1
        _fail_pending(webhook.id, "Webhook disabled after a day of failures")
        _notify_owners(webhook)
        report.disabled += 1


def _deliver_one(delivery_id: uuid.UUID, now: datetime, report: PassReport) -> None:
    delivery = db.session.get(WebhookDelivery, delivery_id)
    if delivery is None or delivery.state != "sending" or delivery.claimed_at != now:
        db.session.rollback()  # taken over after the lease, or deleted with its webhook
        return
    webhook = db.session.get(Webhook, delivery.webhook_id)
    if not webhook.enabled:
        delivery.state = "failed"
        delivery.claimed_at = None
        delivery.last_error = "Webhook disabled"
        report.failed += 1
        db.session.commit()
        return
    url, secret, event, body = webhook.url, webhook.secret, delivery.event, delivery.body
    db.session.commit()  # nothing is held while the receiver answers
    outcome = post(url, secret, delivery_id, event, body, now)
    # Locked: two passes finishing deliveries of one webhook update its failure clock in turn.
    webhook = db.session.get(Webhook, delivery.webhook_id, with_for_update=True)
    delivery = db.session.get(WebhookDelivery, delivery_id, with_for_update=True)
    if webhook is None or delivery is None or delivery.state != "sending" or delivery.claimed_at != now:
        db.session.rollback()
        return
    _record(delivery, webhook, outcome, now, report)
    db.session.commit()


def deliver_due(now: datetime | None = None) -> PassReport:
    """One pass: claim what is due, a batch at a time, and send each; outcomes committed one by one."""
    report = PassReport()
    for _ in range(MAX_BATCHES):
        moment = now or utcnow()
        ids = claim(moment)
        for delivery_id in ids:
            _deliver_one(delivery_id, moment, report)
        if len(ids) < BATCH:
            break
    return report
