"""``flask batches ...``: generate a week's batch now, or only when the cadence says one is due."""

from __future__ import annotations

from datetime import date

import click
from flask import Blueprint

from extensions import db
from services.clock import today
from services.stock import generation, rules

batches_cli = Blueprint("batches", __name__, cli_group="batches")


def describe_generation(result: generation.GenerationResult) -> str:
    lote = result.lote
    verb = "refreshed" if result.regenerado else "created"
    line = (
        f"batch {lote.id} {verb} for {lote.semana} (date {lote.data.isoformat()}): "
        f"{result.novas} new recommendations"
    )
    if result.regenerado:
        line += f", {result.mantidas} decided kept, {result.substituidas} untouched pending replaced"
    timings = ", ".join(f"{k} {v:.2f}s" for k, v in result.timings.items())
    return f"{line} [{timings}]"


def _run(generate) -> generation.GenerationResult | None:
    """Run a generation with a progress bar and commit it in one transaction."""
    with click.progressbar(length=100, label="generating", show_percent=True) as bar:
        done = 0

        def progress(step: str, fraction: float) -> None:
            nonlocal done
            bar.label = step
            target = int(fraction * 100)
            if target > done:
                bar.update(target - done)
                done = target

        try:
            result = generate(progress)
        except Exception:
            db.session.rollback()
            raise
        if result is not None:
            progress("concluido", 1.0)
    db.session.commit()
    return result


@batches_cli.cli.command("generate")
@click.option(
    "--date",
    "on",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    default=None,
    help="A day of the week to generate (YYYY-MM-DD); default today in GIRO_TIMEZONE.",
)
def generate_command(on):
    """Generate the batch of the ISO week of DATE, or refresh it keeping every decision."""
    day: date = on.date() if on else today()
    result = _run(lambda progress: generation.generate(day, progress=progress))
    click.echo(describe_generation(result))


@batches_cli.cli.command("run-due")
@click.option(
    "--date",
    "on",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    default=None,
    help="Act as if today were this day (YYYY-MM-DD); default today in GIRO_TIMEZONE.",
)
def run_due_command(on):
    """Generate a batch only if the cadence says one is due (safe to run from cron every hour)."""
    day: date = on.date() if on else today()
    result = _run(lambda progress: generation.run_due(day, progress=progress))
    if result is None:
        cadence = rules.cadence_out(day)
        click.echo(
            f"no batch due (cadence {cadence['cadence']}, next on {cadence['proximoLote'].isoformat()})"
        )
        return
    click.echo(describe_generation(result))
