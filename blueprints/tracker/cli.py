"""``flask tracker ...``: the tracker's jobs for cron (stored-file sweep included), and an operator's
single sign-on rescue."""

from __future__ import annotations

from datetime import timedelta

import click
from flask import Blueprint
from sqlalchemy import select

from extensions import db
from models.tracker import Organization
from services.errors import DomainError
from services.tracker import attachments, notification_mail, search_index, sso, webhook_delivery
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


@tracker_cli.cli.command("sweep-attachments")
@click.option(
    "--min-age-minutes",
    type=click.IntRange(min=0),
    default=60,
    show_default=True,
    help="Only objects at least this old (a younger one may be an upload about to be recorded).",
)
def sweep_attachments(min_age_minutes):
    """Remove stored files that no attachment names (an upload cut short by a crash, a deletion
    whose removal failed). Safe from cron, e.g. hourly."""
    candidates = attachments.orphan_candidates(min_age=timedelta(minutes=min_age_minutes))
    with click.progressbar(length=len(candidates), label="Stored files checked") as bar:
        result = attachments.sweep_orphans(candidates, progress=bar.update)
    db.session.commit()
    click.echo(f"{result.examined} stored files checked, {len(result.removed)} orphans removed")


@tracker_cli.cli.command("reindex-search")
@click.argument("organization_slug", required=False)
@writes
def reindex_search(organization_slug):
    """(Re)build the search vectors of one organization, or of every one: refits the built-in
    encoder on the organization's issues (or uses EMBEDDING_MODEL_DIR's model) and embeds every
    issue. Safe while people work: writes made meanwhile are queued and embedded after."""
    if organization_slug:
        organizations = [_organization(organization_slug)]
    else:
        organizations = list(db.session.scalars(select(Organization).order_by(Organization.slug)))
    total = 0
    for organization in organizations:
        slug = organization.slug
        with click.progressbar(length=100, label=f"{slug}", show_percent=True) as bar:
            seen = [0]

            def advance(fraction: float, _message: str, bar=bar, seen=seen) -> None:
                percent = int(fraction * 100)
                bar.update(max(0, percent - seen[0]))
                seen[0] = max(seen[0], percent)

            done = search_index.reindex(organization.id, advance)
            bar.update(100 - seen[0])
        total += done
        click.echo(f"{slug}: {done} tarefas indexadas")
    click.echo(f"{len(organizations)} organizations, {total} issues indexed")
