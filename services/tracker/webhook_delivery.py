"""The delivery pass: sends the outbox rows that ``services.tracker.webhooks.emit`` queued.

A ``webhooks`` job (``queue_pass``, called by ``emit``) runs ``deliver_due``
once the change that queued rows commits; ``flask tracker deliver`` (cron) and
``flask scheduler`` (every minute, ``webhooks_tick``) run the same pass, so a
delivery whose job was lost still goes.

A pass claims due rows in one statement (``FOR UPDATE SKIP LOCKED`` on
PostgreSQL, so passes running at once take disjoint rows; SQLite's single
writer makes the conditional UPDATE atomic) and commits the claim before
sending, so no lock is held while a receiver answers. A claim older than
``LEASE`` (a pass that died) is due again.

Each delivery is a JSON POST ``{id, event, created_at, data}`` with the
headers ``X-Giro-Event``, ``X-Giro-Delivery``, ``X-Giro-Timestamp`` and
``X-Giro-Signature: sha256=<hex HMAC-SHA256 of "{timestamp}.{body}">`` under the
webhook's secret, sent to the address ``services.outbound``
checked. A 2xx answer delivers it; anything else (a redirect is not
followed, a timeout, a refused address) is retried after 1, 2, 4... minutes,
at most ``MAX_BACKOFF`` apart, until ``GIVE_UP_AFTER`` has passed since the
event. A webhook that has failed every attempt for ``DISABLE_AFTER`` is
disabled, its pending deliveries fail, and its organization's owners get an
e-mail.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import logging
import socket
import ssl
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from flask import current_app
from sqlalchemy import and_, or_, select, update

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import Membership, Organization
from models.tracker_webhooks import Webhook, WebhookDelivery
from services import job_queue, jobs
from services.mail import queue_mail
from services.outbound import RefusedAddress, addresses_of, check_addresses, parse_url
from services.transactions import writes

log = logging.getLogger(__name__)

KIND = "webhooks"

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


def claim(now: datetime, limit: int | None = None) -> list[uuid.UUID]:
    """Take up to ``limit`` (``BATCH``) due deliveries for this pass and commit the claim."""
    limit = BATCH if limit is None else limit
    # The rows are locked first, then claimed by id: in ``UPDATE ... WHERE id IN (SELECT ...
    # LIMIT n FOR UPDATE SKIP LOCKED)`` PostgreSQL may run the sub-select again for each row
    # it updates, each run skipping the rows already taken, so one pass would claim the
    # whole backlog whatever the limit.
    due = list(
        db.session.scalars(
            select(WebhookDelivery.id)
            .where(_due(now))
            .order_by(WebhookDelivery.next_attempt_at)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
    )
    if not due:
        db.session.commit()
        return []
    claimed = list(
        db.session.scalars(
            update(WebhookDelivery)
            # The state is checked again: on SQLite the select takes no lock.
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
        addresses = addresses_of(target)
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


def fail_pending(webhook_id: uuid.UUID, reason: str) -> None:
    """Fail the webhook's pending deliveries: it was disabled, by hand or by the delivery pass."""
    db.session.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.webhook_id == webhook_id, WebhookDelivery.state == "pending")
        .values(state="failed", last_error=reason[:500], claimed_at=None)
        .execution_options(synchronize_session=False)
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
        fail_pending(webhook.id, "Webhook disabled after a day of failures")
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


@writes
def deliver_due(now: datetime | None = None) -> PassReport:
    """One pass: claim what is due, a batch at a time, and send each; outcomes committed one by one."""
    report = PassReport()
    for _ in range(MAX_BATCHES):
        moment = now or utcnow()
        ids = claim(moment, BATCH)
        for delivery_id in ids:
            _deliver_one(delivery_id, moment, report)
        if not ids:
            break
    return report


# --------------------------------------------------------------------------- the job

# Session key: the transaction that already queued a delivery job.
_DISPATCH = "giro_webhooks_dispatch"


def queue_pass() -> None:
    """One delivery job per transaction that wrote deliveries, dispatched after it commits."""
    marker = db.session.info.get(_DISPATCH)
    if marker is not None and marker is db.session().get_transaction():
        return
    if job_queue.uses_redis() and not current_app.config["JOBS_REDIS_FALLBACK"] and not job_queue.redis_ok():
        # The change must not fail for it: the scheduled pass sends the rows once Redis is back.
        log.warning("job queue down: webhook deliveries wait for the next scheduled pass")
        return
    jobs.enqueue(KIND, {}, actor=None)
    db.session.info[_DISPATCH] = db.session().get_transaction()


@jobs.job_kind(KIND, service="tracker")
def run_webhooks(context: jobs.JobContext) -> dict[str, Any]:
    context.progress(0.1, "entregando webhooks")
    report = deliver_due()
    return {
        "entregues": report.delivered,
        "a_repetir": report.retried,
        "falharam": report.failed,
        "desativados": report.disabled,
    }


def webhooks_tick() -> str:
    """What the scheduler runs every minute: a recorded pass over the due webhook deliveries."""
    job, _ = jobs.enqueue(KIND, {}, actor=None, lock_key="webhooks:tick")
    db.session.commit()
    return str(job.id)
