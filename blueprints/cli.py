"""``flask --app app ...`` commands, registered through a blueprint."""

from __future__ import annotations

import click
from flask import Blueprint, Flask
from sqlalchemy import select

from blueprints.stock.cli_batches import batches_cli
from blueprints.stock.cli_data import demo_cli, import_cli
from extensions import db
from models.auth import PAPEIS
from models.stock import Loja
from services import auth as auth_service
from services.errors import DomainError

users_cli = Blueprint("users", __name__, cli_group="users")


@users_cli.cli.command("create")
@click.option("--email", required=True)
@click.option("--password", required=True)
@click.option("--name", required=True)
@click.option("--papel", type=click.Choice(PAPEIS), default="visualizador", show_default=True)
@click.option("--loja", "loja_codigo", help="Store code (codigo) of a gerente_loja")
@click.option("--superadmin", is_flag=True, help="Platform administrator of the tracker")
def create_user(email, password, name, papel, loja_codigo, superadmin):
    """Create an account that signs in to both services."""
    loja_id = None
    if loja_codigo:
        loja_id = db.session.scalar(select(Loja.id).where(Loja.codigo == loja_codigo))
        if loja_id is None:
            raise click.ClickException(f"no store with codigo {loja_codigo!r}")
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
    click.echo(f"created {user.email} ({user.papel}{', superadmin' if superadmin else ''}) id={user.id}")


def register_commands(app: Flask) -> None:
    app.register_blueprint(users_cli)
    app.register_blueprint(import_cli)
    app.register_blueprint(demo_cli)
    app.register_blueprint(batches_cli)
