"""``flask tracker ...``: the tracker's jobs for cron, and an operator's single sign-on rescue."""

from __future__ import annotations

import click
from flask import Blueprint
from sqlalchemy import select

from extensions import db
from models.tracker import Organization
from services.errors import DomainError
from services.tracker import notification_mail, sso, webhook_delivery
from services.transactions import writes

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


def _organization(slug: str) -> Organization:
    organization = db.session.scalar(select(Organization).where(Organization.slug == slug))
    if organization is None:
        raise click.ClickException(f"No organization with the slug {slug!r}")
    return organization


@tracker_cli.cli.command("sso-disable")
@click.argument("organization_slug")
@writes
def sso_disable(organization_slug):
    """Turn an organization's single sign-on off (its provider is gone): every member signs in
    with a password again; those the provider created set one with "forgot password"."""
    organization = _organization(organization_slug)
    try:
        sso.operator_disable(organization)
    except DomainError as exc:
        raise click.ClickException(str(exc)) from None
    db.session.commit()
    click.echo(f"Single sign-on of {organization.slug} disabled; passwords work again.")


@tracker_cli.cli.command("sso-verify-domain")
@click.argument("organization_slug")
@click.argument("domain")
@writes
def sso_verify_domain(organization_slug, domain):
    """Vouch for an e-mail domain of an organization as an operator (instead of its DNS TXT
    record). Refused when another organization has proven it."""
    organization = _organization(organization_slug)
    try:
        sso.operator_verify_domain(organization, domain)
    except DomainError as exc:
        raise click.ClickException(str(exc)) from None
    db.session.commit()
    click.echo(f"{domain} proven for {organization.slug}.")
