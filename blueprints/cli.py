"""``flask --app app ...`` commands, registered through a blueprint."""

from __future__ import annotations

import click
from flask import Blueprint, Flask
from sqlalchemy import select

from blueprints.cli_jobs import jobs_cli, worker_cli
from blueprints.stock.cli_batches import batches_cli
from blueprints.stock.cli_data import demo_cli, import_cli
from blueprints.tracker.cli import tracker_cli
from extensions import db
from models.auth import PAPEIS
from models.stock import Loja
from services import auth as auth_service
from services.errors import DomainError
from services.stock import access

users_cli = Blueprint("users", __name__, cli_group="users")


@users_cli.cli.command("create")
@click.option("--email", required=True)
@click.option("--password", required=True)
@click.option("--name", required=True)
@click.option("--papel", type=click.Choice(PAPEIS), help="Stock role; without it, no remanejamento access")
@click.option("--loja", "loja_codigo", help="Store code (codigo) of a gerente_loja")
@click.option("--superadmin", is_flag=True, help="Platform administrator of the tracker")
def create_user(email, password, name, papel, loja_codigo, superadmin):
    """Create an account (its address counts as verified) that signs in to both services."""
    loja_id = _store_id(loja_codigo)
    if papel == "gerente_loja" and loja_id is None:
        raise click.ClickException("a gerente_loja needs --loja")
    if len(password) < 8:
        raise click.ClickException("the password needs at least 8 characters")
    try:
        user = auth_service.create_user(
            email=email, password=password, name=name, papel=papel, loja_id=loja_id, superadmin=superadmin
        )
    except DomainError as exc:
        raise click.ClickException(exc.message) from None
    db.session.commit()
    role = user.papel or "no stock access"
    click.echo(f"created {user.email} ({role}{', superadmin' if superadmin else ''}) id={user.id}")


def _store_id(loja_codigo: str | None):
    if not loja_codigo:
        return None
    loja_id = db.session.scalar(select(Loja.id).where(Loja.codigo == loja_codigo))
    if loja_id is None:
        raise click.ClickException(f"no store with codigo {loja_codigo!r}")
    return loja_id


def _account(email: str):
    user = auth_service.verified_owner(email)
    if user is None:
        raise click.ClickException(f"no account has proven the address {email!r}")
    return user


@users_cli.cli.command("grant")
@click.option("--email", required=True)
@click.option("--papel", type=click.Choice(PAPEIS), required=True)
@click.option("--loja", "loja_codigo", help="Store code (codigo) of a gerente_loja")
def grant_stock_role(email, papel, loja_codigo):
    """Give an account (by its verified address) a stock role, or change it."""
    user = _account(email)
    try:
        access.grant(None, user, papel, _store_id(loja_codigo))
    except DomainError as exc:
        raise click.ClickException(exc.message) from None
    db.session.commit()
    click.echo(f"{user.email}: {papel}")


@users_cli.cli.command("revoke")
@click.option("--email", required=True)
def revoke_stock_role(email):
    """Take away an account's stock role: it no longer reaches remanejamento."""
    user = _account(email)
    # Every request checks the role, so live tokens lose stock access at once.
    access.grant(None, user, None)
    db.session.commit()
    click.echo(f"{user.email}: no stock access")


def register_commands(app: Flask) -> None:
    app.register_blueprint(users_cli)
    app.register_blueprint(import_cli)
    app.register_blueprint(demo_cli)
    app.register_blueprint(batches_cli)
    app.register_blueprint(tracker_cli)
    app.register_blueprint(jobs_cli)
    app.register_blueprint(worker_cli)
