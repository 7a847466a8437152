"""E-mail for notifications: the outbox, drained in batches of one message per person per run.

Nothing is sent inside the request that caused a notification: it writes an
outbox row (``notification_emails``) in its transaction, and a ``notificacoes``
job (``flask scheduler`` every five minutes) or ``flask tracker send-notifications``
(cron) sends them.

A run first claims every due row in one statement, runs one after the
other (a PostgreSQL advisory lock; SQLite has one writer at a time, taken
when the run's transactions begin), and commits the claim, so no lock is
held while mail goes out. It then sends one message per
person with all of that person's claimed notifications, and records the
outcome after each message. A claim older than ``LEASE`` (a run that died)
is due again. A failed send is retried with a doubling delay, and marked
``failed`` after ``MAX_ATTEMPTS``.

A notification is not e-mailed (``skipped``) when its person turned e-mail
off (``users.notif_email``), has not proven their address (someone else's
address must not receive a stranger's messages), is banned, or has already
read it in the app.
"""

from __future__ import annotations

import logging
import smtplib
import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from flask import current_app
from sqlalchemy import select
from sqlalchemy.orm import aliased

from extensions import db
from models.auth import User
from models.base import utcnow
from models.jobs import Job
from models.tracker import Issue, Project, Workspace
from models.tracker_collab import Notification, NotificationEmail
from services import jobs, outbox
from services.mail import send_mail
from services.transactions import writes

log = logging.getLogger(__name__)

KIND = "notificacoes"

LEASE = timedelta(minutes=15)
MAX_ATTEMPTS = 5
RETRY_AFTER = timedelta(minutes=2)  # doubled after each failed attempt
CHUNK = 500  # ids per IN list
SUBJECT_TITLE = 80

Actor = aliased(User)

LINES = {
    "assigned": "{actor} atribuiu a você",
    "mentioned": "{actor} mencionou você em um comentário de",
    "commented": "{actor} comentou em",
    "status_changed": "{actor} mudou o status de",
}


@dataclass
class RunReport:
    messages: int = 0
    sent: int = 0
    skipped: int = 0
    retried: int = 0
    failed: int = 0


@dataclass
class _Item:
    notification_id: uuid.UUID
    attempts: int
    kind: str
    read: bool
    created_at: datetime
    key: str
    title: str
    link: str
    actor: str


@dataclass
class _Person:
    name: str
    email: str
    wanted: bool


def _chunks(ids: list[uuid.UUID]) -> list[list[uuid.UUID]]:
    return [ids[i : i + CHUNK] for i in range(0, len(ids), CHUNK)]


# Runs claim one after the other ("giro-ntf").
OUTBOX = outbox.Outbox(
    NotificationEmail,
    NotificationEmail.notification_id,
    lock_key=int.from_bytes(b"giro-ntf", "big"),
    lease=LEASE,
    retry_after=RETRY_AFTER,
    max_attempts=MAX_ATTEMPTS,
)


def claim(now: datetime) -> list[uuid.UUID]:
    """Take every due outbox row for this run and commit the claim (``services.outbox``)."""
    return OUTBOX.claim(now)


def _issue_link(slug: str, project_id: uuid.UUID, key: str) -> str:
    cfg = current_app.config
    return f"{cfg['PUBLIC_URL']}{cfg['TRACKER_PREFIX']}/w/{slug}/p/{project_id}/issues/{key}"


def _items_by_person(ids: list[uuid.UUID]) -> dict[uuid.UUID, list[_Item]]:
    people: dict[uuid.UUID, list[_Item]] = defaultdict(list)
    for chunk in _chunks(ids):
        rows = db.session.execute(
            select(
                NotificationEmail.notification_id,
                NotificationEmail.attempts,
                Notification.user_id,
                Notification.kind,
                Notification.read_at,
                Notification.created_at,
                Issue.number,
                Issue.title,
                Issue.project_id,
                Project.key,
                Workspace.slug,
                Actor.name,
            )
            .join(Notification, Notification.id == NotificationEmail.notification_id)
            .join(Issue, Issue.id == Notification.issue_id)
            .join(Project, Project.id == Issue.project_id)
            .join(Workspace, Workspace.id == Project.workspace_id)
            .outerjoin(Actor, Actor.id == Notification.actor_id)
            .where(NotificationEmail.notification_id.in_(chunk))
        ).all()
        for row in rows:
            key = f"{row.key}-{row.number}"
            people[row.user_id].append(
                _Item(
                    notification_id=row.notification_id,
                    attempts=row.attempts,
                    kind=row.kind,
                    read=row.read_at is not None,
                    created_at=row.created_at,
                    key=key,
                    title=row.title,
                    link=_issue_link(row.slug, row.project_id, key),
                    actor=row.name or "Alguém",
                )
            )
    return people


def _people(user_ids: list[uuid.UUID]) -> dict[uuid.UUID, _Person]:
    rows = db.session.execute(
        select(User.id, User.name, User.email, User.notif_email, User.banned, User.email_verified_at).where(
            User.id.in_(user_ids)
        )
    ).all()
    return {
        row.id: _Person(
            name=row.name,
            email=row.email,
            wanted=bool(row.notif_email) and not row.banned and row.email_verified_at is not None,
        )
        for row in rows
    }


def _message(person: _Person, items: list[_Item]) -> tuple[str, str]:
    items = sorted(items, key=lambda item: item.created_at)
    if len(items) == 1:
        title = items[0].title
        if len(title) > SUBJECT_TITLE:
            title = title[: SUBJECT_TITLE - 1] + "…"
        subject = f"Giro: {items[0].key} {title}"
    else:
        subject = f"Giro: {len(items)} novidades nas suas issues"
    lines = [f"Olá, {person.name}.", ""]
    for item in items:
        lines.append(f"{LINES[item.kind].format(actor=item.actor)} {item.key} “{item.title}”")
        lines.append(item.link)
        lines.append("")
    lines.append(
        "Para não receber estes avisos por e-mail, desligue “Avisos por e-mail” no seu perfil: "
        f"{current_app.config['PUBLIC_URL']}/perfil"
    )
    return subject, "\n".join(lines) + "\n"


def _mark(items: list[_Item], now: datetime, **values) -> None:
    OUTBOX.mark([item.notification_id for item in items], now, **values)


def _retry_or_fail(items: list[_Item], now: datetime, error: str, report: RunReport) -> None:
    retried, failed = OUTBOX.retry_or_fail(((i.notification_id, i.attempts) for i in items), now, error)
    report.retried += retried
    report.failed += failed


def _send_to(person: _Person | None, items: list[_Item], now: datetime, report: RunReport) -> None:
    to_send = [item for item in items if person is not None and person.wanted and not item.read]
    skipped = [item for item in items if item not in to_send]
    _mark(skipped, now, state="skipped", claimed_at=None)
    report.skipped += len(skipped)
    db.session.commit()  # no transaction (on SQLite, no write lock) is held while mail goes out
    if to_send:
        subject, body = _message(person, to_send)
        try:
            send_mail(person.email, subject, body)
        except (smtplib.SMTPException, OSError) as exc:
            log.warning("notification e-mail to %s failed: %s", person.email, exc)
            _retry_or_fail(to_send, now, f"{type(exc).__name__}: {exc}", report)
        else:
            _mark(to_send, now, state="sent", sent_at=now, attempts=NotificationEmail.attempts + 1)
            report.messages += 1
            report.sent += len(to_send)
    db.session.commit()


@writes
def send_pending(now: datetime | None = None) -> RunReport:
    """One run: claim what is due, then one message per person, each outcome committed at once."""
    now = now or utcnow()
    report = RunReport()
    ids = claim(now)
    if not ids:
        return report
    items = _items_by_person(ids)
    people = _people(list(items))
    db.session.commit()
    for user_id, mine in items.items():
        _send_to(people.get(user_id), mine, now, report)
    return report


# --------------------------------------------------------------------------- the job


@jobs.job_kind(KIND, service="tracker")
def run_notifications(context: jobs.JobContext) -> dict[str, Any]:
    context.progress(0.1, "enviando notificações")
    report = send_pending()
    return {
        "mensagens": report.messages,
        "enviadas": report.sent,
        "ignoradas": report.skipped,
        "a_repetir": report.retried,
        "falharam": report.failed,
    }


def request_notifications(*, actor: User | None = None) -> tuple[Job, bool]:
    """Queue a run of the notification e-mails; one at a time (a run claims its own rows anyway)."""
    return jobs.enqueue(KIND, {}, actor=actor, lock_key=KIND)


def notifications_tick() -> str:
    """What the scheduler runs every five minutes: the notification e-mails (one run at a time)."""
    job, _ = request_notifications()
    db.session.commit()
    return str(job.id)
