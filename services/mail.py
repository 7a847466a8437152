"""Outgoing e-mail: SMTP when configured, otherwise the message goes to the log; sent at once,
or by a background job (kind ``email``) once the caller's transaction commits."""

from __future__ import annotations

import logging
import smtplib
from email.message import EmailMessage
from typing import Any

from blinker import Namespace
from flask import current_app

from services import jobs

log = logging.getLogger("giro.mail")
# Sent with the message for every mail, delivered or logged (tests and audits listen).
mail_sent = Namespace().signal("mail-sent")

KIND = "email"


def send_mail(
    to: str, subject: str, body: str, *, html: str | None = None, headers: dict[str, str] | None = None
) -> None:
    """One message: plain text, with an HTML alternative when given, and extra headers
    (``List-Unsubscribe``...)."""
    cfg = current_app.config
    message = EmailMessage()
    message["From"] = cfg["MAIL_FROM"]
    message["To"] = to
    message["Subject"] = subject
    for name, value in (headers or {}).items():
        message[name] = value
    message.set_content(body)
    if html is not None:
        message.add_alternative(html, subtype="html")
    mail_sent.send(current_app._get_current_object(), message=message)
    if not cfg["SMTP_HOST"]:
        log.info("mail to=%s subject=%s\n%s", to, subject, body)
        return
    with smtplib.SMTP(cfg["SMTP_HOST"], cfg["SMTP_PORT"], timeout=10) as smtp:
        if cfg["SMTP_STARTTLS"]:
            smtp.starttls()
        if cfg["SMTP_USER"]:
            smtp.login(cfg["SMTP_USER"], cfg["SMTP_PASSWORD"] or "")
        smtp.send_message(message)


def queue_mail(to: str, subject: str, body: str) -> None:
    """Send a message from a background job once the caller's transaction commits
    (nothing is sent for a request that fails); flushes. ``MAIL_VIA_JOBS=false`` sends inline."""
    if not current_app.config["MAIL_VIA_JOBS"]:
        send_mail(to, subject, body)
        return
    jobs.enqueue(KIND, {"to": to, "subject": subject, "body": body}, actor=None)


@jobs.job_kind(KIND, service="tracker", sensitive=True)
def run_email(context: jobs.JobContext) -> dict[str, Any]:
    send_mail(context.params["to"], context.params["subject"], context.params["body"])
    return {"enviado": True}
