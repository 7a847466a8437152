"""The demo's operations project: the demo organization's "Operações de loja" (OPS), named in
the rules by the demo admin; the past weeks' batches reconciled into it (the older one half
received, last week's shipped and on its way) and one problem reported on a transfer into the
demo store manager's store."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from sqlalchemy import select

from extensions import db
from models.auth import User
from models.stock_batches import Lote, Recomendacao
from services.stock import operations, problems
from services.stock.batches import iso_week
from services.stock.rules import get_rules
from services.tracker import workspaces

PROJECT = {"name": "Operações de loja", "key": "OPS", "description": "Separação e recebimento dos lotes"}
WEEKS_BACK = (2, 1)


@dataclass
class OperationsDemo:
    project_key: str
    issues: int
    problems: int

    def describe(self) -> str:
        return (
            f"Operations project {self.project_key}: {self.issues} issues for the past weeks' transfers, "
            f"{self.problems} problem open"
        )


def wire(people: dict[str, User], workspace_slug: str, ref: date) -> OperationsDemo:
    """Flushes, never commits."""
    admin, manager = people["admin"], people["gerente"]
    # A demo rebuilt (--replace): the old project's issues speak of batches that are gone.
    for existing in workspaces.list_projects(admin, workspace_slug):
        if existing.key == PROJECT["key"]:
            workspaces.delete_project(admin, workspace_slug, existing.id)
            db.session.flush()
    project = workspaces.create_project(admin, workspace_slug, PROJECT)
    operations.configure(get_rules(for_update=True), project.id, admin)
    issues = 0
    for weeks in WEEKS_BACK:
        lote = db.session.scalar(select(Lote).where(Lote.semana == iso_week(ref - timedelta(weeks=weeks))[0]))
        if lote is not None:
            issues += operations.reconcile(lote.id)["issues"]
    opened = 0
    shipped = db.session.scalar(
        select(Recomendacao)
        .join(Lote, Lote.id == Recomendacao.lote_id)
        .where(
            Lote.semana == iso_week(ref - timedelta(weeks=1))[0],
            Recomendacao.status == "executada",
            Recomendacao.destino_id == manager.loja_id,
        )
        .order_by(Recomendacao.posicao)
        .limit(1)
    )
    if shipped is not None:
        problems.report(shipped.id, manager, "avariada", "Duas caixas chegaram molhadas.")
        opened = 1
    db.session.flush()
    return OperationsDemo(PROJECT["key"], issues, opened)
