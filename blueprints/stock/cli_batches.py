"""``flask batches ...``: generate a week's batch now, or only when the cadence says one is due;
``resultado`` prints how the executed transfers sold against the engine's prediction.

Both run the batch generation job (``services.stock.partitions``): in the
foreground by default, with a progress bar, or with ``--queue`` on the workers
(``flask worker``), printing the job's id. Either way the job is recorded, and a
week already being generated is not generated twice at once.
"""

from __future__ import annotations

from datetime import date

import click
from flask import Blueprint

from extensions import db
from models.jobs import Job
from services import jobs
from services.clock import today
from services.stock import digest, generation, notification_delivery, outcome, partitions, rules

batches_cli = Blueprint("batches", __name__, cli_group="batches")


def describe_generation(result: generation.GenerationResult) -> str:
    lote = result.lote
    return describe_result(
        {
            "lote_id": str(lote.id),
            "semana": lote.semana,
            "data": lote.data.isoformat(),
            "novas": result.novas,
            "mantidas": result.mantidas,
            "substituidas": result.substituidas,
            "regenerado": result.regenerado,
            "tempos": {k: round(v, 3) for k, v in result.timings.items()},
        }
    )


def describe_result(result: dict) -> str:
    verb = "refreshed" if result["regenerado"] else "created"
    line = (
        f"batch {result['lote_id']} {verb} for {result['semana']} (date {result['data']}): "
        f"{result['novas']} new recommendations"
    )
    if result["regenerado"]:
        line += f", {result['mantidas']} decided kept, {result['substituidas']} untouched pending replaced"
    timings = ", ".join(f"{k} {v:.2f}s" for k, v in (result.get("tempos") or {}).items())
    if result.get("particoes"):
        timings += f"; {result['particoes']} partition(s)"
    return f"{line} [{timings}]"


def _generate(day: date, *, cadence: bool, queue: bool, parts: int | None) -> dict | None:
    job, created = partitions.request_generation(
        day, actor=None, cadence=cadence, partitions=parts, dispatch=queue
    )
    job_id = job.id
    db.session.commit()
    if not created:
        raise click.ClickException(f"the batch of that week is already being generated: job {job_id}")
    if queue:
        click.echo(f"queued job {job_id}; follow it with `flask jobs show {job_id}`")
        return None
    with click.progressbar(length=100, label="generating", show_percent=True) as bar:
        done = 0

        def progress(percent: int, message: str) -> None:
            nonlocal done
            bar.label = message
            if percent > done:
                bar.update(percent - done)
                done = percent

        jobs.run_job(job_id, reraise=True, listener=progress)
        bar.update(100 - done)
    db.session.expire_all()
    job = db.session.get(Job, job_id)
    if job.state != "done":
        raise click.ClickException(f"job {job_id} {job.state}: {job.error or job.message}")
    return job.result


_DATE = click.DateTime(formats=["%Y-%m-%d"])
_QUEUE = click.option("--queue", is_flag=True, help="Hand the job to the workers and print its id")
_PARTS = click.option(
    "--partitions", type=click.IntRange(1, 256), default=None, help="Product partitions (default by size)"
)


@batches_cli.cli.command("generate")
@click.option("--date", "on", type=_DATE, default=None, help="A day of the week (YYYY-MM-DD); default today.")
@_QUEUE
@_PARTS
def generate_command(on, queue, partitions):
    """Generate the batch of the ISO week of DATE, or refresh it keeping every decision."""
    day: date = on.date() if on else today()
    result = _generate(day, cadence=False, queue=queue, parts=partitions)
    if result is not None:
        click.echo(describe_result(result))


@batches_cli.cli.command("run-due")
@click.option(
    "--date",
    "on",
    type=_DATE,
    default=None,
    help="Act as if today were this day (YYYY-MM-DD); default today.",
)
@_QUEUE
@_PARTS
def run_due_command(on, queue, partitions):
    """Generate a batch only if the cadence says one is due (safe to run from cron every hour)."""
    day: date = on.date() if on else today()
    result = _generate(day, cadence=True, queue=queue, parts=partitions)
    if result is None:
        return
    if not result.get("gerado", True):
        cadence = rules.get_cadence(day)
        click.echo(f"no batch due (cadence {cadence.cadence}, next on {cadence.proximo_lote.isoformat()})")
        return
    click.echo(describe_result(result))


def _fmt(value, pattern: str) -> str:
    return "-" if value is None else format(value, pattern)


def _janelas(g: outcome.ResultadoGrupo) -> str:
    parciais = g.janela_28.parciais
    if not g.janela_28.parcial:
        return "completa"
    low, high = parciais.dias_decorridos_min, parciais.dias_decorridos_max
    return f"aberta ({low} d)" if low == high else f"aberta ({low}-{high} d)"


@batches_cli.cli.command("resultado")
@click.option(
    "--agrupar",
    type=click.Choice(outcome.AGRUPAMENTOS),
    default="lote",
    show_default=True,
    help="Group by batch, route, brand or category.",
)
@click.option("--lote", "lote_id", type=click.UUID, default=None, help="Only this batch's transfers.")
@click.option("--limite", type=click.IntRange(1, 1000), default=100, show_default=True, help="Groups shown.")
def resultado_command(agrupar, lote_id, limite):
    """Expected (ESI) against actual (ASI) sales increase of the executed transfers.

    ASI counts the moved units sold at the destination in the 14 and 28 days from the receipt,
    beyond the destination's own stock; only complete windows are summed, an open one is
    flagged with its days elapsed (docs/engine.md, section 9).
    """
    result = outcome.resultado(None, agrupar, lote_id, limite)
    rows = [*result.grupos, result.total]
    width = max(len(g.chave) for g in rows)
    click.echo(
        f"{'grupo':<{width}} {'transf.':>7} {'unid.':>6} {'ESI':>7} {'ASI14':>6} {'ASI28':>6} "
        f"{'%14d':>6} {'ASI/ESI14':>9}  janelas"
    )
    for g in rows:
        j14, j28 = g.janela_14, g.janela_28
        pct = None if j14.pct_vendido is None else f"{100 * j14.pct_vendido:.1f}%"
        click.echo(
            f"{g.chave:<{width}} {g.transferencias:>7} {g.unidades_movidas:>6} {_fmt(g.esi, '.1f'):>7} "
            f"{j14.asi:>6} {j28.asi:>6} {pct or '-':>6} {_fmt(j14.razao, '.2f'):>9}  {_janelas(g)}"
        )


@batches_cli.cli.command("send-notifications")
def send_notifications_command():
    """Send remanejamento's queued notifications (and queue the transfers just become late): one
    e-mail, or one push per browser, per person. Safe from cron every few minutes, even twice at
    once (each run claims its own rows); a failure is retried on a later run."""
    report = notification_delivery.send_pending()
    click.echo(
        f"{report.messages} messages: {report.sent} notifications sent, {report.skipped} skipped, "
        f"{report.retried} to retry, {report.failed} failed; {report.late} transfers late"
    )


@batches_cli.cli.command("send-digest")
@click.option(
    "--at",
    "at",
    type=click.DateTime(formats=["%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M%z"]),
    default=None,
    help="Act as if it were this moment (ISO 8601 with its offset); default now.",
)
def send_digest_command(at):
    """Queue and send the week's summaries once due (from Monday 08:00 in GIRO_TIMEZONE); a
    person gets one per week however often this runs."""
    if at is not None and digest.due_week(at) is None:
        click.echo(f"not due: the week's summaries go from Monday {digest.SEND_AT:%H:%M} on")
    queued = digest.queue_summaries(at)
    report = notification_delivery.send_pending()
    click.echo(f"{queued} summaries queued; {report.messages} messages sent, {report.retried} to retry")
