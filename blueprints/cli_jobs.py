"""``flask worker``, ``flask scheduler`` and ``flask jobs ...``: the queue's processes and a look at a job."""

from __future__ import annotations

import uuid

import click
from flask import Blueprint, current_app

from extensions import db
from services import job_queue, jobs

jobs_cli = Blueprint("jobs", __name__, cli_group="jobs")
worker_cli = Blueprint("worker", __name__, cli_group=None)


def _require_redis() -> None:
    if not current_app.config.get("REDIS_URL"):
        raise click.ClickException(
            "REDIS_URL is not set: without Redis, jobs run in a thread of the web process and need no worker"
        )


@worker_cli.cli.command("worker")
@click.option("--burst", is_flag=True, help="Stop once the queue is empty (tests, one-off runs)")
@click.option("--name", default=None, help="Worker name (default: host and process id)")
def worker_command(burst: bool, name: str | None) -> None:
    """Run an RQ worker on REDIS_URL's queue: it takes jobs (batch generations and their
    partitions, imports, e-mails) one at a time, each in a process of its own. Run one per
    core, on as many hosts as needed; stop with SIGTERM (the current job finishes first)."""
    _require_redis()
    from rq import Worker

    # A worker runs jobs of every kind: every module registering one is imported before the first.
    from services import job_kinds  # noqa: F401

    app = current_app._get_current_object()

    class AppWorker(Worker):
        def main_work_horse(self, job, queue):
            # A forked process must not share the parent's database connections.
            with app.app_context():
                db.engine.dispose(close=False)
                super().main_work_horse(job, queue)

    worker = AppWorker([job_queue.rq_queue(app)], connection=job_queue.redis_connection(app), name=name)
    worker.work(burst=burst, with_scheduler=True, logging_level=app.config["LOG_LEVEL"])


# What ``flask scheduler`` queues, and when (cron syntax).
SCHEDULE = (
    ("services.stock.partitions:cadence_tick", "0 * * * *"),
    ("services.tracker.webhook_delivery:webhooks_tick", "* * * * *"),
    ("services.tracker.notification_mail:notifications_tick", "*/5 * * * *"),
    ("services.stock.notification_delivery:notifications_tick", "*/5 * * * *"),
    ("services.stock.digest:digest_tick", "5 * * * *"),
    ("services.tracker.attachments:sweep_tick", "35 * * * *"),
)


@worker_cli.cli.command("scheduler")
def scheduler_command() -> None:
    """Run RQ's cron scheduler: every hour it queues a batch generation when the cadence says one
    is due (the job checks again, so a duplicate run does nothing); every minute a pass of the
    tracker's due webhook deliveries; every five minutes the notification e-mails of both
    services; every hour, from Monday 08:00, the week's remanejamento summaries, and the sweep of
    attached files no row names. Run one per
    deployment; plain cron with ``flask batches run-due --queue``, ``flask tracker deliver`` and
    ``flask tracker send-notifications`` does the same."""
    _require_redis()
    from rq.cron import CronScheduler

    scheduler = CronScheduler(connection=job_queue.redis_connection(), name="giro-cadence")
    for target, cron in SCHEDULE:
        scheduler.register(job_queue.resolve(target), current_app.config["JOBS_QUEUE"], cron=cron)
    scheduler.start()


@jobs_cli.cli.command("show")
@click.argument("job_id", type=click.UUID)
def show_job(job_id: uuid.UUID) -> None:
    """Print a job's state, progress, times and result or error."""
    from models.jobs import Job

    job = db.session.get(Job, job_id)
    if job is None:
        raise click.ClickException(f"no job {job_id}")
    for key, value in jobs.job_out(job).items():
        click.echo(f"{key}: {value}")
