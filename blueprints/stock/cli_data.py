"""``flask import ...`` and ``flask demo load``: getting the retailer's data in."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import click
import psycopg
from flask import Blueprint
from sqlalchemy.exc import DBAPIError

from blueprints.stock.cli_batches import describe_generation
from extensions import db
from services.clock import today
from services.stock import demo as demo_service
from services.stock import demo_history, demo_operations, generation, importer, imports
from services.tracker import demo as tracker_demo

import_cli = Blueprint("import_data", __name__, cli_group="import")
demo_cli = Blueprint("demo", __name__, cli_group="demo")
import_cli.cli.help = (
    "Import the retailer's data from UTF-8 CSV files with a header row. Each file is checked in full "
    "first: a bad row rejects it, every bad line is listed with its number (the first 100, then how "
    "many more) and nothing is written. Imports run one at a "
    "time: one started while another runs waits for it to finish."
)
demo_cli.cli.help = "The demo network."

# Files above this size get a progress bar while they are read.
PROGRESS_MIN_BYTES = 4 * 1024 * 1024


def _run_import(kind: str, path: str) -> None:
    size = os.path.getsize(path)
    name = Path(path).name
    try:
        if size >= PROGRESS_MIN_BYTES:
            with click.progressbar(length=size, label=f"Reading {name}", file=sys.stderr) as bar:
                log = imports.run_import(
                    None, kind, path, name, progress=bar.update, log_database_errors=False
                )
        else:
            log = imports.run_import(None, kind, path, name, log_database_errors=False)
        # The log line is kept either way (the admin's page lists the last imports).
        db.session.commit()
    except importer.ImportRejected as exc:
        db.session.rollback()
        raise click.ClickException(
            f"{name} rejected, nothing was imported:\n" + "\n".join(exc.lines())
        ) from None
    except (DBAPIError, sqlite3.Error, psycopg.Error) as exc:
        # E.g. a concurrent import of the same rows. The bulk writes run on the
        # raw driver connection, so its own exception types arrive unwrapped.
        db.session.rollback()
        reason = (str(getattr(exc, "orig", None) or exc).strip().splitlines() or ["unknown error"])[0]
        raise click.ClickException(
            f"{Path(path).name}: the database refused the import, nothing was imported: {reason}"
        ) from None
    except BaseException:
        db.session.rollback()
        raise
    if not log.ok:
        raise click.ClickException(f"{name} rejected, nothing was imported:\n" + "\n".join(_error_lines(log)))
    click.echo(log.summary.describe())


def _error_lines(log) -> list[str]:
    """Every bad line the log keeps, one per line, then how many more there were."""
    if not log.error_list:
        return [f"line {log.error_line}: {log.error}" if log.error_line else str(log.error)]
    lines = [f"line {e['line']}: {e['reason']}" for e in log.error_list]
    if log.more_errors:
        lines.append(f"... and {log.more_errors:,} more line(s) with errors")
    return lines


def _import_command(kind: str, help_text: str) -> None:
    @import_cli.cli.command(kind, help=help_text)
    @click.argument("file", type=click.Path(exists=True, dir_okay=False, readable=True))
    def command(file: str) -> None:
        _run_import(kind, file)


_import_command("stores", "Upsert stores and CDs by codigo. Columns: " + ",".join(importer.COLUMNS["stores"]))
_import_command("products", "Upsert products by sku. Columns: " + ",".join(importer.COLUMNS["products"]))
_import_command(
    "stock",
    "Replace the stock of every store named in the file. Columns: " + ",".join(importer.COLUMNS["stock"]),
)
_import_command(
    "sales",
    "Replace the daily sales of every (day, store) pair in the file. Columns: "
    + ",".join(importer.COLUMNS["sales"]),
)
_import_command(
    "campaigns",
    "Add campaigns (empty loja = every store). Columns: " + ",".join(importer.COLUMNS["campaigns"]),
)


@demo_cli.cli.command("load")
@click.option(
    "--stores",
    "n_stores",
    type=click.IntRange(1, demo_service.MAX_STORES),
    default=demo_service.DEFAULT_STORES,
    show_default=True,
    help="Stores besides the CDs",
)
@click.option(
    "--products",
    "n_products",
    type=click.IntRange(1, demo_service.MAX_PRODUCTS),
    default=demo_service.DEFAULT_PRODUCTS,
    show_default=True,
    help="Products (SKUs, one colour each)",
)
@click.option(
    "--seed", type=int, default=demo_service.DEFAULT_SEED, show_default=True, help="Same seed, same network"
)
@click.option("--if-empty", is_flag=True, help="Do nothing when stores already exist")
@click.option(
    "--replace",
    is_flag=True,
    help="Wipe the stock data (stores, products, stock, sales, campaigns, batches) and rebuild",
)
def load_demo(n_stores: int, n_products: int, seed: int, if_empty: bool, replace: bool) -> None:
    """Build a realistic demo network: CDs, stores, products, stock, 90 days of sales, a campaign, accounts."""
    existing = demo_service.store_count()
    if existing and if_empty:
        click.echo(f"demo load: the database already has {existing} store(s); nothing to do.")
        accounts = demo_service.existing_accounts()
        # A demo database from before the tracker's demo gets it now; anything else is left alone.
        tracker = _load_tracker_demo()
        if accounts:
            click.echo(
                demo_service.describe_accounts(accounts) + "\n  (unless their passwords were changed since)"
            )
        if tracker is not None:
            click.echo(tracker.describe())
        return
    if existing and not replace:
        raise click.ClickException(
            f"the database already has {existing} store(s); pass --replace to wipe the stock data and "
            "rebuild the demo, or --if-empty to leave it alone"
        )
    try:
        if existing:
            demo_service.wipe_stock_data()
        result = demo_service.load(n_stores=n_stores, n_products=n_products, seed=seed)
        people = demo_service.demo_people()
        history = demo_history.play(today(), people["planejador"], people["gerente"].loja_id)
        # The network ends with this week's batch, so the first screen has work on it.
        first_batch = generation.generate(today())
        tracker = tracker_demo.load(demo_service.demo_people(), demo_service.DEMO_EMAIL_DOMAIN, seed=seed)
        # The operations project lives in the demo organization (made now, or kept from before).
        slug = tracker.workspace_slug if tracker is not None else tracker_demo.workspace_slug(people["admin"])
        ops = demo_operations.wire(people, slug, today()) if slug is not None else None
        db.session.commit()
    except BaseException:
        db.session.rollback()
        raise
    click.echo(result.describe())
    click.echo(history.describe())
    click.echo(describe_generation(first_batch))
    if tracker is not None:
        click.echo(tracker.describe())
    if ops is not None:
        click.echo(ops.describe())


def _load_tracker_demo():
    """The tracker's demo for the demo accounts, when they all exist and it does not yet."""
    try:
        tracker = tracker_demo.load(demo_service.demo_people(), demo_service.DEMO_EMAIL_DOMAIN)
        db.session.commit()
    except BaseException:
        db.session.rollback()
        raise
    return tracker
