"""From batch to shelf: a batch's approved transfers become the stores' work in the tracker.

A stock admin names a tracker project as the operations project (``projetoOperacoes`` of
the rules); they must be an owner or admin of its organization, and the issues are written
in their name, through the tracker's own services (so notifications, mentions, webhooks,
the audit log and the board work on them as on any other issue).

After every decision on a batch with an operations project, the ``operacoes`` job
reconciles the batch's issues with its transfers (``reconcile``): one issue per origin
("Lote 2026-W49 · separar no CD Extrema · 1.240 un. para 17 lojas", the pick list as a table
and a link to the origin's CSV), one sub-issue per destination, labelled by batch and
assigned to the store managers who are members of the organization. The stock service owns
the state and the issues mirror it: a destination's transfers executed move its sub-issue to
a status of category ``in_progress``, all received to ``done`` (with the units received and
any difference); an origin's issue is done when all its transfers are received, refused or
vetoed. A transfer refused or vetoed after its approval stays in the list, saying why.

Reconciling is idempotent (``operacao_issues`` names the issue of each origin and
destination, unique), so the same approval twice creates nothing twice, and a job that died
half way is completed by the next run. A job that finds the batch changed while it ran runs
again before it ends.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import current_app
from sqlalchemy import exists, func, or_, select

from extensions import db
from models.auth import User
from models.base import utcnow
from models.jobs import Job
from models.stock import Loja, Produto, RegrasRemanejamento
from models.stock_batches import AcaoRecomendacao, Lote, Recomendacao
from models.stock_operations import OperacaoIssue
from models.tracker import Issue, Label, Membership, Organization, Project, Status, Workspace
from services import jobs
from services.errors import DomainError, FieldError, PlanLimitError, ValidationFailed
from services.tracker import issues as tracker_issues
from services.tracker import workspaces
from services.tracker.access import MANAGE, organization_access

KIND = "operacoes"
MAX_PASSES = 5
LABEL_COLOR = "#0f766e"


# --------------------------------------------------------------------------- configuration


def configure(rules: RegrasRemanejamento, project_id: uuid.UUID | None, user: User) -> None:
    """Name (or clear) the operations project; ``user`` must manage its organization."""
    if project_id is None:
        rules.projeto_operacoes_id = None
        rules.operacoes_por_id = None
        return
    project = db.session.get(Project, project_id)
    refused = ValidationFailed(
        [
            FieldError(
                ("body", "projetoOperacoes"),
                "Projeto não encontrado numa organização que você administra",
                reason="operations_project_refused",
            )
        ]
    )
    if project is None:
        raise refused
    try:
        organization_access(user, project.organization_id, MANAGE)
    except DomainError:  # not a member, not a manager, suspended: the same answer
        raise refused from None
    rules.projeto_operacoes_id = project.id
    rules.operacoes_por_id = user.id


def projects_for(user: User) -> list[tuple[Project, str]]:
    """The projects (and their organization's name) a stock admin may name: those of the
    organizations they own or administer."""
    rows = db.session.execute(
        select(Project, Organization.name)
        .join(Organization, Organization.id == Project.organization_id)
        .join(Membership, Membership.organization_id == Project.organization_id)
        .where(Membership.user_id == user.id, Membership.role.in_(("owner", "admin")))
        .order_by(Organization.name, Project.name)
    )
    return [(project, name) for project, name in rows]


def project_choices(user: User, current: uuid.UUID | str | None) -> list[tuple[Project, str]]:
    """What the rules page offers: the projects ``user`` may name, and the one named now (even
    if another admin named it), so that saving the other rules keeps it."""
    choices = projects_for(user)
    if current and all(str(project.id) != str(current) for project, _name in choices):
        try:
            named = db.session.execute(
                select(Project, Organization.name)
                .join(Organization, Organization.id == Project.organization_id)
                .where(Project.id == uuid.UUID(str(current)))
            ).first()
        except ValueError:
            named = None
        if named is not None:
            choices.insert(0, (named[0], named[1]))
    return choices


@dataclass(frozen=True)
class SyncProblem:
    when: datetime | None
    error: str
    limited: bool  # the plan holds no more issues (the pass kept what fit)


def last_sync_problem() -> SyncProblem | None:
    """What the rules page says when the newest reconciliation failed or ran out of issues."""
    job = db.session.scalar(select(Job).where(Job.kind == KIND).order_by(Job.created_at.desc()).limit(1))
    if job is None:
        return None
    if job.state == "failed":
        return SyncProblem(job.finished_at, job.error or "", limited=False)
    if job.state == "done" and (job.result or {}).get("limite_do_plano"):
        return SyncProblem(job.finished_at, "", limited=True)
    return None


def is_on() -> bool:
    rules = db.session.get(RegrasRemanejamento, 1)
    return rules is not None and rules.projeto_operacoes_id is not None


def request_sync(lote_id: uuid.UUID) -> None:
    """Queue the batch's reconciliation when an operations project is named (after the commit)."""
    rules = db.session.get(RegrasRemanejamento, 1)
    if rules is None or rules.projeto_operacoes_id is None:
        return
    jobs.enqueue(KIND, {"lote_id": str(lote_id)}, actor=None, lock_key=f"{KIND}:{lote_id}")


# --------------------------------------------------------------------------- reconciling


@dataclass
class Item:
    id: uuid.UUID
    origem_id: uuid.UUID
    origem: str
    destino_id: uuid.UUID
    destino: str
    produto: str
    sku: str
    cor: str
    tamanho: str
    quantidade: int
    status: str
    vetado: bool
    recebida: int | None
    motivo: str | None

    @property
    def closed(self) -> bool:
        """Nothing more to do: received, or refused or vetoed after its approval."""
        return self.recebida is not None or self.status == "recusada" or self.vetado

    @property
    def state(self) -> str:
        if self.vetado:
            return f"vetada: {self.motivo or 'sem motivo'}"
        if self.status == "recusada":
            return f"recusada: {self.motivo or 'sem motivo'}"
        if self.recebida is not None:
            falta = self.quantidade - self.recebida
            return f"recebida ({self.recebida} un.)" + (f", faltaram {falta}" if falta else "")
        return {"aprovada": "a separar", "executada": "enviada"}.get(self.status, self.status)


def _items(lote_id: uuid.UUID) -> list[Item]:
    """Every transfer of the batch that was approved at some point (approved, executed, or
    refused or vetoed afterwards)."""
    origem, destino = db.aliased(Loja), db.aliased(Loja)
    approved = exists().where(
        AcaoRecomendacao.recomendacao_id == Recomendacao.id, AcaoRecomendacao.acao == "aprovar"
    )
    rows = db.session.execute(
        select(
            Recomendacao.id,
            Recomendacao.origem_id,
            origem.nome,
            Recomendacao.destino_id,
            destino.nome,
            Produto.nome,
            Produto.sku,
            Recomendacao.cor,
            Recomendacao.tamanho,
            Recomendacao.quantidade,
            Recomendacao.status,
            Recomendacao.vetado,
            Recomendacao.quantidade_recebida,
            func.coalesce(
                Recomendacao.motivo_veto, Recomendacao.motivo_recusa_texto, Recomendacao.motivo_recusa
            ),
        )
        .join(origem, origem.id == Recomendacao.origem_id)
        .join(destino, destino.id == Recomendacao.destino_id)
        .join(Produto, Produto.id == Recomendacao.produto_id)
        .where(
            Recomendacao.lote_id == lote_id,
            or_(Recomendacao.status.in_(("aprovada", "executada")), approved),
            Recomendacao.status != "pendente",
        )
        .order_by(origem.nome, destino.nome, Produto.nome, Recomendacao.tamanho)
    )
    return [Item(*row) for row in rows]


def _units(n: int) -> str:
    return f"{n:,}".replace(",", ".") + " un."


def _table(items: list[Item], with_destination: bool) -> str:
    head = (
        "| Produto | SKU | Cor | Tam. | Qtd. |" + (" Destino |" if with_destination else "") + " Situação |"
    )
    rule = "|---|---|---|---|---:|" + ("---|" if with_destination else "") + "---|"
    rows = [
        f"| {i.produto} | {i.sku} | {i.cor} | {i.tamanho} | {i.quantidade} |"
        + (f" {i.destino} |" if with_destination else "")
        + f" {i.state} |"
        for i in items
    ]
    return "\n".join([head, rule, *rows])


def _category(items: list[Item]) -> str:
    if all(i.closed for i in items):
        return "done"
    if any(i.status == "executada" for i in items):
        return "in_progress"
    return "todo"


@dataclass
class Target:
    """What the issue of one origin (``destino_id`` None) or one destination should say."""

    origem_id: uuid.UUID
    destino_id: uuid.UUID | None
    title: str
    description: str
    category: str
    store_id: uuid.UUID  # whose manager is assigned


def _targets(lote: Lote, items: list[Item]) -> list[Target]:
    base = current_app.config["PUBLIC_URL"]
    by_origin: dict[uuid.UUID, list[Item]] = defaultdict(list)
    for item in items:
        by_origin[item.origem_id].append(item)
    targets = []
    for origem_id, mine in by_origin.items():
        origem = mine[0].origem
        units = sum(i.quantidade for i in mine if not (i.status == "recusada" or i.vetado))
        destinations = sorted({i.destino_id for i in mine})
        csv = f"{base}/lotes/{lote.id}/separacao.csv?origemId={origem_id}"
        targets.append(
            Target(
                origem_id,
                None,
                f"Lote {lote.semana} · separar em {origem} · {_units(units)} para {len(destinations)} "
                + ("loja" if len(destinations) == 1 else "lojas"),
                f"Lista de separação de **{origem}** no lote {lote.semana} ([CSV]({csv}), "
                f"[lote]({base}/lotes/{lote.id})).\n\n{_table(mine, True)}\n",
                _category(mine),
                origem_id,
            )
        )
        for destino_id in destinations:
            part = [i for i in mine if i.destino_id == destino_id]
            received = sum(i.recebida or 0 for i in part)
            sent = sum(i.quantidade for i in part if i.status == "executada")
            summary = f"Enviadas {sent} un.; recebidas {received} un." if sent else "Ainda não enviadas."
            targets.append(
                Target(
                    origem_id,
                    destino_id,
                    f"Lote {lote.semana} · {origem} → {part[0].destino} · {_units(sum(i.quantidade for i in part))}",
                    f"{summary}\n\n{_table(part, False)}\n",
                    _category(part),
                    destino_id,
                )
            )
    return targets


@dataclass
class Context:
    actor: User
    slug: str
    project: Project
    statuses: dict[str, uuid.UUID]
    label_id: uuid.UUID
    managers: dict[uuid.UUID, uuid.UUID]  # store → its manager, when a member


def _context(lote: Lote, rules: RegrasRemanejamento, items: list[Item]) -> Context | None:
    return context_for(lote, rules, [i.origem_id for i in items] + [i.destino_id for i in items])


def context_for(lote: Lote, rules: RegrasRemanejamento, store_ids: list[uuid.UUID]) -> Context | None:
    """Where and as whom the batch's issues are written (None without an operations project)."""
    if rules.projeto_operacoes_id is None:
        return None
    actor = db.session.get(User, rules.operacoes_por_id) if rules.operacoes_por_id else None
    project = db.session.get(Project, rules.projeto_operacoes_id)
    if actor is None or project is None:
        return None
    slug = db.session.scalar(select(Workspace.slug).where(Workspace.id == project.workspace_id))
    statuses: dict[str, uuid.UUID] = {}
    for status in db.session.scalars(
        select(Status).where(Status.project_id == project.id).order_by(Status.position)
    ):
        statuses.setdefault(status.category, status.id)
    name = f"Lote {lote.semana}"
    label_id = db.session.scalar(select(Label.id).where(Label.project_id == project.id, Label.name == name))
    if label_id is None:
        label_id = workspaces.create_label(actor, slug, project.id, {"name": name, "color": LABEL_COLOR}).id
    stores = set(store_ids)
    managers = {
        loja_id: user_id
        for user_id, loja_id in db.session.execute(
            select(User.id, User.loja_id)
            .join(Membership, Membership.user_id == User.id)
            .where(
                User.papel == "gerente_loja",
                User.loja_id.in_(stores),
                Membership.organization_id == project.organization_id,
            )
        )
    }
    return Context(actor, slug, project, statuses, label_id, managers)


def _apply(ctx: Context, lote: Lote, target: Target, parent_id: uuid.UUID | None) -> tuple[uuid.UUID, bool]:
    """Create or bring up to date the issue of ``target``; returns its id and whether it changed."""
    destino = target.destino_id or target.origem_id
    link = db.session.scalar(
        select(OperacaoIssue).where(
            OperacaoIssue.lote_id == lote.id,
            OperacaoIssue.origem_id == target.origem_id,
            OperacaoIssue.destino_id == destino,
        )
    )
    status_id = ctx.statuses.get(target.category) or ctx.statuses.get("todo")
    wanted: dict[str, Any] = {
        "title": target.title[:500],
        "description": target.description,
        "status_id": status_id,
    }
    issue = db.session.get(Issue, link.issue_id) if link is not None else None
    if issue is None:
        data = {
            **wanted,
            "type": "task",
            "priority": "medium",
            "label_ids": [ctx.label_id],
            "assignee_id": ctx.managers.get(target.store_id),
            "parent_id": parent_id,
        }
        view = tracker_issues.create_issue(ctx.actor, ctx.slug, ctx.project.id, data)
        if link is not None:
            db.session.delete(link)
            db.session.flush()
        db.session.add(
            OperacaoIssue(
                lote_id=lote.id, origem_id=target.origem_id, destino_id=destino, issue_id=view.issue.id
            )
        )
        db.session.flush()
        return view.issue.id, True
    changes = {name: value for name, value in wanted.items() if getattr(issue, name) != value}
    if changes:
        tracker_issues.update_issue(ctx.actor, ctx.slug, ctx.project.id, issue.key, changes)
    return issue.id, bool(changes)


def reconcile(lote_id: uuid.UUID) -> dict[str, int]:
    """Bring the batch's issues in the operations project in line with its transfers. Flushes."""
    rules = db.session.get(RegrasRemanejamento, 1)
    lote = db.session.get(Lote, lote_id)
    if rules is None or rules.projeto_operacoes_id is None or lote is None:
        return {"issues": 0, "alteradas": 0}
    items = _items(lote_id)
    if not items:
        return {"issues": 0, "alteradas": 0}
    ctx = _context(lote, rules, items)
    if ctx is None:
        return {"issues": 0, "alteradas": 0}
    changed = total = 0
    parents: dict[uuid.UUID, uuid.UUID] = {}
    for target in _targets(lote, items):
        if target.destino_id is not None and target.origem_id not in parents:
            continue  # its origin's issue could not be made (the plan's limit)
        try:
            with db.session.begin_nested():
                issue_id, did = _apply(ctx, lote, target, parents.get(target.origem_id))
        except PlanLimitError:
            # The organization's plan holds no more issues: what fits is kept, and said.
            return {"issues": total, "alteradas": changed, "limite_do_plano": True}
        if target.destino_id is None:
            parents[target.origem_id] = issue_id
        total += 1
        changed += did
    return {"issues": total, "alteradas": changed}


def _changed_since(lote_id: uuid.UUID, moment: datetime) -> bool:
    return bool(
        db.session.scalar(
            select(
                exists().where(
                    Recomendacao.lote_id == lote_id,
                    or_(Recomendacao.ultima_acao_em >= moment, Recomendacao.recebida_em >= moment),
                )
            )
        )
    )


@jobs.job_kind(KIND, service="stock")
def run_reconcile(context: jobs.JobContext) -> dict[str, Any]:
    lote_id = uuid.UUID(context.params["lote_id"])
    result: dict[str, Any] = {}
    for attempt in range(MAX_PASSES):
        started = utcnow()
        context.progress(min(0.9, 0.1 + attempt * 0.2), "atualizando as tarefas da operação")
        result = reconcile(lote_id)
        db.session.commit()
        if not _changed_since(lote_id, started):
            break
    return result


# --------------------------------------------------------------------------- the issue page


@dataclass(frozen=True)
class IssueTransfer:
    """A transfer an issue lists, and what the viewer may do with it from the issue page."""

    item: Item
    lote_id: uuid.UUID
    can_execute: bool
    can_receive: bool


def transfers_of_issue(issue_id: uuid.UUID, user: User) -> list[IssueTransfer] | None:
    """The transfers behind an operations issue, for a viewer with a stock role who may read
    them (a store manager: those into or out of their store); None for any other issue or
    viewer. The actions are the batch page's: the services check them again when taken."""
    if user.papel is None:
        return None
    link = db.session.scalar(select(OperacaoIssue).where(OperacaoIssue.issue_id == issue_id))
    if link is None:
        return None
    items = [
        item
        for item in _items(link.lote_id)
        if item.origem_id == link.origem_id
        and (link.destino_id == link.origem_id or item.destino_id == link.destino_id)
    ]
    if user.papel == "gerente_loja":
        items = [i for i in items if user.loja_id in (i.origem_id, i.destino_id)]
    executes = user.papel in ("admin", "planejador")
    receives = user.papel in ("admin", "planejador", "gerente_loja")
    return [
        IssueTransfer(
            item,
            link.lote_id,
            can_execute=executes and item.status == "aprovada" and not item.vetado,
            can_receive=receives
            and item.status == "executada"
            and item.recebida is None
            and not item.vetado
            and (user.papel != "gerente_loja" or user.loja_id == item.destino_id),
        )
        for item in items
    ]


def batch_issue_links(user: User, lotes: list[tuple[uuid.UUID, str]]) -> dict[uuid.UUID, str]:
    """For the dashboard: each batch's issues in the operations project (the list filtered by
    its label), for a viewer who is a member of the project's organization."""
    rules = db.session.get(RegrasRemanejamento, 1)
    if rules is None or rules.projeto_operacoes_id is None or not lotes:
        return {}
    project = db.session.get(Project, rules.projeto_operacoes_id)
    if project is None or db.session.get(Membership, (project.organization_id, user.id)) is None:
        return {}
    slug = db.session.scalar(select(Workspace.slug).where(Workspace.id == project.workspace_id))
    labels = dict(
        db.session.execute(
            select(Label.name, Label.id).where(
                Label.project_id == project.id, Label.name.in_([f"Lote {semana}" for _id, semana in lotes])
            )
        ).all()
    )
    prefix = current_app.config["TRACKER_PREFIX"]
    return {
        lote_id: f"{prefix}/w/{slug}/p/{project.id}/issues?label_id={labels[f'Lote {semana}']}"
        for lote_id, semana in lotes
        if f"Lote {semana}" in labels
    }
