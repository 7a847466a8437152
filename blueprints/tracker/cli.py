"""``flask tracker ...``: the tracker's jobs for cron."""

from __future__ import annotations

import click
from flask import Blueprint

from services.tracker import notification_mail, webhook_delivery

tracker_cli = Blueprint("tracker_cli", __name__, cli_group="tracker")


@tracker_cli.cli.command("send-notifications")
def send_notifications():
    """E-mail pending notifications, one message per person. Safe to run from cron, even
    twice at once (each run claims its own rows); a failed message is retried on a later run."""
    report = notification_mail.send_pending()
    click.echo(
        f"{report.messages} messages: {report.sent} notifications sent, {report.skipped} skipped, "
        f"{report.retried} to retry, {report.failed} failed"
    )


@tracker_cli.cli.command("deliver")
def deliver():
    """Send the due webhook deliveries once (retries included). Safe from cron every minute,
    even alongside the delivery jobs: each pass claims its own rows, so none is sent twice."""
    report = webhook_delivery.deliver_due()
    click.echo(
        f"{report.delivered} delivered, {report.retried} to retry, {report.failed} failed, "
        f"{report.disabled} webhooks disabled"
    )
