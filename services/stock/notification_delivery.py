"""Sending the remanejamento outbox: one message per person, channel and run.

A run (the ``avisos_estoque`` job, queued by ``flask scheduler`` every five minutes, or
``flask batches send-notifications``) first queues the transfers that just became late,
then claims every due row in one statement and commits the claim (PostgreSQL: an
advisory lock makes runs claim one after the other, so no person's rows are shared out
between two runs; SQLite has one writer). It then sends, per person and channel, one
e-mail (pt-BR, with a one-click unsubscribe link, RFC 8058) or one Web Push message per
subscribed browser, and records each outcome at once. What a person turned off, or may no
longer read (another role or store), is skipped, never sent. A failure (SMTP down, a push
service answering 5xx or 429) is retried with a doubling delay and marked ``failed``
after ``MAX_ATTEMPTS``; a push service answering 404 or 410 drops that subscription. A
claim older than ``LEASE`` (a run that died) is due again.
"""

from __future__ import annotations

import logging
import smtplib
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from flask import current_app
from sqlalchemy import delete, select

from extensions import db
from models.auth import User
from models.base import utcnow
from models.stock_batches import Recomendacao
from models.stock_notifications import PushSubscription, StockNotification
from services import jobs, outbox, push
from services.mail import send_mail
from services.stock import notifications, transit
from services.stock.notification_text import email_message, push_message
from services.transactions import writes

log = logging.getLogger(__name__)

KIND = "avisos_estoque"
LEASE = timedelta(minutes=15)
MAX_ATTEMPTS = 5
RETRY_AFTER = timedelta(minutes=2)  # doubled after each failed attempt
CLAIM_LOCK_KEY = int.from_bytes(b"giro-stk", "big")


@dataclass(frozen=True)
class Row:
    """A claimed outbox row, read once (nothing is reloaded after each commit)."""

    id: uuid.UUID
    user_id: uuid.UUID
    channel: str
    kind: str
    payload: dict
    attempts: int
    created_at: datetime


# What must still hold of a transfer for its notice to be sent (an undone approval, a received
# transfer, a restored refusal are not told).
STILL_TRUE = {
    "separar": lambda status, vetado, recebida: status in ("aprovada", "executada") and not vetado,
    "chegando": lambda status, vetado, recebida: status in ("aprovada", "executada") and not vetado,
    "receber": lambda status, vetado, recebida: status == "executada" and not vetado and not recebida,
    "atrasada": lambda status, vetado, recebida: (
        status in ("aprovada", "executada") and not vetado and not recebida
    ),
    "estoque_errado": lambda status, vetado, recebida: status == "recusada",
}


def _transfer_states(rows: list[Row]) -> dict[str, tuple[str, bool, bool]]:
    ids = {uuid.UUID(row.payload["id"]) for row in rows if row.kind in STILL_TRUE}
    states: dict[str, tuple[str, bool, bool]] = {}
    id_list = list(ids)
    for start in range(0, len(id_list), 500):
        for rid, status, vetado, recebida_em in db.session.execute(
            select(Recomendacao.id, Recomendacao.status, Recomendacao.vetado, Recomendacao.recebida_em).where(
                Recomendacao.id.in_(id_list[start : start + 500])
            )
        ):
            states[str(rid)] = (status, vetado, recebida_em is not None)
    return states


@dataclass
class RunReport:
    late: int = 0
    messages: int = 0
    sent: int = 0
    skipped: int = 0
    retried: int = 0
    failed: int = 0
    dropped_subscriptions: int = 0
    errors: list[str] = field(default_factory=list)


OUTBOX = outbox.Outbox(
    StockNotification,
    StockNotification.id,
    lock_key=CLAIM_LOCK_KEY,
    lease=LEASE,
    retry_after=RETRY_AFTER,
    max_attempts=MAX_ATTEMPTS,
)


def _allowed(user: User, row: Row, states: dict[str, tuple[str, bool, bool]]) -> bool:
    """Whether the person may still read what the row tells, still wants the channel, and
    what it tells still holds."""
    if user.banned or user.papel is None:
        return False
    check = STILL_TRUE.get(row.kind)
    if check is not None and not check(*states.get(row.payload["id"], ("gone", True, True))):
        return False
    if row.kind == "resumo_semanal":
        wanted = user.digest_semanal
    else:
        wanted = (
            user.notif_email if row.channel == "email" else user.notif_push and notifications.push_available()
        )
    if not wanted:
        return False
    if row.kind in ("lote_gerado", "estoque_errado", "problema"):
        return user.papel in notifications.PLANNERS
    if row.kind == "resumo_semanal":
        return user.papel in notifications.PLANNERS or (
            user.papel == "gerente_loja" and str(user.loja_id) == row.payload.get("loja_id")
        )
    store = row.payload.get("loja_id")
    if user.papel == "gerente_loja":
        return str(user.loja_id) == store
    return row.kind == "atrasada" and user.papel in notifications.PLANNERS


def _retry_or_fail(rows: list[Row], now: datetime, error: str, report: RunReport) -> None:
    retried, failed = OUTBOX.retry_or_fail(((row.id, row.attempts) for row in rows), now, error)
    report.retried += retried
    report.failed += failed
    report.errors.append(error)


def _send_email(user: User, rows: list[Row]) -> None:
    preference = "resumo" if rows[0].kind == "resumo_semanal" else "email"
    token = notifications.unsubscribe_token(user.id, preference)
    cfg = current_app.config
    unsubscribe = f"{cfg['PUBLIC_URL']}/preferencias/cancelar?token={token}"
    subject, text, html = email_message(user, rows, unsubscribe)
    send_mail(
        user.email,
        subject,
        text,
        html=html,
        headers={
            "List-Unsubscribe": f"<{unsubscribe}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
        },
    )


def _send_push(user: User, rows: list[Row], report: RunReport) -> None:
    """One message to each of the person's browsers; a gone subscription is dropped. Raises
    ``push.PushFailed`` when a push service failed for a reason worth retrying."""
    message = push_message(user, rows)
    failure: push.PushFailed | None = None
    for subscription in db.session.scalars(
        select(PushSubscription).where(PushSubscription.user_id == user.id)
    ):
        try:
            push.send(subscription, message)
        except push.SubscriptionGone:
            db.session.execute(delete(PushSubscription).where(PushSubscription.id == subscription.id))
            report.dropped_subscriptions += 1
        except push.PushFailed as exc:
            failure = exc
    if failure is not None:
        raise failure


def _deliver(
    user: User | None, channel: str, rows: list[Row], states: dict, now: datetime, report: RunReport
) -> None:
    to_send = [row for row in rows if user is not None and _allowed(user, row, states)]
    skipped = [row.id for row in rows if row not in to_send]
    OUTBOX.mark(skipped, now, state="skipped", claimed_at=None)
    report.skipped += len(skipped)
    db.session.commit()  # nothing held (on SQLite, no write lock) while a message goes out
    if not to_send:
        return
    try:
        if channel == "email":
            _send_email(user, to_send)
        else:
            _send_push(user, to_send, report)
    except (smtplib.SMTPException, OSError, push.PushFailed) as exc:
        log.warning("stock notification (%s) to %s failed: %s", channel, user.id, exc)
        _retry_or_fail(to_send, now, f"{type(exc).__name__}: {exc}", report)
    else:
        OUTBOX.mark(
            [row.id for row in to_send],
            now,
            state="sent",
            sent_at=now,
            attempts=StockNotification.attempts + 1,
        )
        report.messages += 1
        report.sent += len(to_send)
    db.session.commit()


def late_transits(limit_days: int, now: datetime | None = None) -> int:
    """Transfers in transit past their alert days (their route's, else ``limit_days``), each told
    once to the planner who approved it and the destination's manager. Returns how many are late."""
    late = transit.late_transfers(limit_days, now or utcnow())
    if not late:
        return 0
    transfers = {t["id"]: t for t in notifications.transfers([row.id for row in late])}
    approvers = {row.id: row.aprovada_por_id for row in late}
    alert_days = {str(row.id): row.dias_alerta for row in late}
    stores = notifications.managers_of(uuid.UUID(t["destino_id"]) for t in transfers.values())
    by_id = {
        person[0]: person
        for person in notifications.people(User.id.in_([a for a in approvers.values() if a]))
    }
    entries = []
    for rid, t in transfers.items():
        payload = {**t, "loja_id": t["destino_id"], "dias": alert_days[rid]}
        people = list(stores.get(uuid.UUID(t["destino_id"]), []))
        approver = by_id.get(approvers.get(uuid.UUID(rid)))
        if approver is not None and approver not in people:
            people.append(approver)
        entries += [(p, "atrasada", f"atrasada:{rid}", payload) for p in people]
    notifications.queue(entries)
    return len(late)


@writes
def send_pending(now: datetime | None = None) -> RunReport:
    """One run: queue late transfers, claim what is due, then one message per person and channel."""
    now = now or utcnow()
    report = RunReport()
    report.late = late_transits(int(current_app.config["TRANSIT_ALERT_DAYS"]), now)
    db.session.commit()
    now = max(now, utcnow())  # what was just queued is due in this run
    ids = OUTBOX.claim(now)
    if not ids:
        return report
    rows = [
        Row(*values)
        for values in db.session.execute(
            select(
                StockNotification.id,
                StockNotification.user_id,
                StockNotification.channel,
                StockNotification.kind,
                StockNotification.payload,
                StockNotification.attempts,
                StockNotification.created_at,
            ).where(StockNotification.id.in_(ids))
        )
    ]
    states = _transfer_states(rows)
    groups: dict[tuple[uuid.UUID, str, bool], list[Row]] = defaultdict(list)
    for row in sorted(rows, key=lambda r: r.created_at):
        # The weekly summary is its own message.
        groups[(row.user_id, row.channel, row.kind == "resumo_semanal")].append(row)
    users = {u.id: u for u in db.session.scalars(select(User).where(User.id.in_({key[0] for key in groups})))}
    for (user_id, channel, _summary), mine in groups.items():
        _deliver(users.get(user_id), channel, mine, states, now, report)
    return report


@jobs.job_kind(KIND, service="stock")
def run_notifications(context: jobs.JobContext) -> dict[str, Any]:
    context.progress(0.1, "enviando avisos")
    report = send_pending()
    return {
        "atrasadas": report.late,
        "mensagens": report.messages,
        "enviadas": report.sent,
        "ignoradas": report.skipped,
        "a_repetir": report.retried,
        "falharam": report.failed,
    }


def request_delivery(*, actor: User | None = None):
    """Queue a run (one at a time; a run claims its own rows anyway)."""
    return jobs.enqueue(KIND, {}, actor=actor, lock_key=KIND)


def notifications_tick() -> str:
    """What the scheduler runs every five minutes."""
    job, _ = request_delivery()
    db.session.commit()
    return str(job.id)
