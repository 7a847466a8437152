"""Problems with a transfer become issues of the operations project.

From the batch page, the store manager's receipts page or the API, a person who may read a
transfer reports a problem (``avariada``, ``faltando``, ``tamanho_errado`` or ``outro`` with
words): an issue opens in the operations project, under the destination's sub-issue when
there is one, with the transfer's figures, assigned to the planner who approved it when they
are a member of the organization (the tracker notifies them), otherwise told to them by
remanejamento's notifications. A receipt with fewer units than shipped opens one by itself.
The transfer lists its problems (``GET …/recomendacoes/{id}/problemas``).
"""

from __future__ import annotations

import contextlib
import uuid
from dataclasses import dataclass

from flask import current_app
from sqlalchemy import select

from extensions import db
from models.auth import User
from models.stock import Loja, Produto, RegrasRemanejamento
from models.stock_batches import AcaoRecomendacao, Lote, Recomendacao
from models.stock_operations import PROBLEMAS, OperacaoIssue, ProblemaTransferencia
from models.tracker import Issue, Membership, Project, Workspace
from services.errors import ConflictError, FieldError, ValidationFailed
from services.stock import notifications, operations
from services.stock.access import ensure_stock_access
from services.stock.recommendations import get_recomendacao
from services.tracker import issues as tracker_issues

TEXT = {
    "avariada": "mercadoria avariada",
    "faltando": "unidades faltando",
    "tamanho_errado": "tamanho errado",
    "outro": "outro problema",
}
REPORTERS = ("admin", "planejador", "gerente_loja")


@dataclass(frozen=True)
class Problema:
    id: uuid.UUID
    tipo: str
    issue_key: str
    issue_title: str
    issue_url: str
    relatado_por: str | None
    created_at: object


def _approver(rec_id: uuid.UUID) -> uuid.UUID | None:
    return db.session.scalar(
        select(AcaoRecomendacao.usuario_id)
        .where(AcaoRecomendacao.recomendacao_id == rec_id, AcaoRecomendacao.acao == "aprovar")
        .order_by(AcaoRecomendacao.criado_em.desc())
        .limit(1)
    )


def _url(slug: str, project_id: uuid.UUID, key: str) -> str:
    cfg = current_app.config
    return f"{cfg['PUBLIC_URL']}{cfg['TRACKER_PREFIX']}/w/{slug}/p/{project_id}/issues/{key}"


def report(rid: uuid.UUID, user: User | None, tipo: str, texto: str | None) -> Problema:
    """Open the problem's issue. ``user`` None: the receipt itself (fewer units than shipped)."""
    if user is not None:
        ensure_stock_access(user, *REPORTERS)
        rec = get_recomendacao(rid, user)  # 404 when the user may not read it
    else:
        rec = db.session.get(Recomendacao, rid)
    if tipo not in PROBLEMAS or (tipo == "outro" and not (texto or "").strip()):
        raise ValidationFailed(
            [
                FieldError(
                    ("body", "tipo" if tipo not in PROBLEMAS else "texto"),
                    "Tipo de problema inválido ou sem descrição",
                    reason="problem_invalid",
                )
            ]
        )
    rules = db.session.get(RegrasRemanejamento, 1)
    lote = db.session.get(Lote, rec.lote_id)
    ctx = operations.context_for(lote, rules, [rec.origem_id, rec.destino_id]) if rules is not None else None
    if ctx is None:
        raise ConflictError(
            "Nenhum projeto de operação no Tracker: um admin de estoque escolhe um nas regras",
            reason="operations_project_missing",
        )
    issue = _open_issue(ctx, lote, rec, user, tipo, texto)
    problema = ProblemaTransferencia(
        recomendacao_id=rec.id, issue_id=issue.id, tipo=tipo, relatado_por_id=user.id if user else None
    )
    db.session.add(problema)
    db.session.flush()
    return Problema(
        problema.id,
        tipo,
        issue.key,
        issue.title,
        _url(ctx.slug, ctx.project.id, issue.key),
        user.name if user else None,
        problema.created_at,
    )


def _open_issue(ctx, lote: Lote, rec: Recomendacao, user: User | None, tipo: str, texto: str | None) -> Issue:
    produto = db.session.get(Produto, rec.produto_id)
    origem, destino = db.session.get(Loja, rec.origem_id), db.session.get(Loja, rec.destino_id)
    approver = _approver(rec.id)
    member = (
        approver is not None
        and db.session.get(Membership, (ctx.project.organization_id, approver)) is not None
    )
    parent = db.session.scalar(
        select(OperacaoIssue.issue_id).where(
            OperacaoIssue.lote_id == lote.id,
            OperacaoIssue.origem_id == rec.origem_id,
            OperacaoIssue.destino_id == rec.destino_id,
        )
    )
    who = user.name if user is not None else "o recebimento (menos unidades que o enviado)"
    figures = [
        f"- Transferência: {rec.quantidade} × {produto.nome} ({produto.sku}) {rec.cor} {rec.tamanho}",
        f"- {origem.nome} → {destino.nome}, lote {lote.semana}, situação: {rec.status}",
    ]
    if rec.quantidade_recebida is not None:
        figures.append(f"- Recebidas: {rec.quantidade_recebida} de {rec.quantidade}")
    description = f"Problema relatado por {who}: **{TEXT[tipo]}**.\n\n" + "\n".join(figures)
    if texto:
        description += f"\n\n> {texto.strip()}"
    base = current_app.config["PUBLIC_URL"]
    description += f"\n\n[Transferência no lote]({base}/lotes/{lote.id}/recomendacoes/{rec.id})\n"
    data = {
        "title": f"Problema: {TEXT[tipo]} · {produto.nome} {rec.tamanho} · {origem.nome} → {destino.nome}"[
            :500
        ],
        "description": description,
        "type": "bug",
        "priority": "high",
        "label_ids": [ctx.label_id],
        "assignee_id": approver if member else None,
        "parent_id": parent,
    }
    view = tracker_issues.create_issue(ctx.actor, ctx.slug, ctx.project.id, data)
    if approver is not None and not member:
        person = notifications.person(approver)
        if person is not None:
            payload = {
                "id": str(rec.id),
                "lote_id": str(lote.id),
                "semana": lote.semana,
                "tipo": TEXT[tipo],
                "issue": view.issue.key,
                "url": _url(ctx.slug, ctx.project.id, view.issue.key),
                "produto": produto.nome,
                "cor": rec.cor,
                "tamanho": rec.tamanho,
                "quantidade": rec.quantidade,
                "origem": origem.nome,
                "destino": destino.nome,
            }
            notifications.queue([(person, "problema", f"problema:{view.issue.id}", payload)])
    return view.issue


def listed(rid: uuid.UUID, user: User) -> list[Problema]:
    ensure_stock_access(user)
    get_recomendacao(rid, user)
    rows = db.session.execute(
        select(ProblemaTransferencia, Issue, Workspace.slug, User.name)
        .join(Issue, Issue.id == ProblemaTransferencia.issue_id)
        .join(Project, Project.id == Issue.project_id)
        .join(Workspace, Workspace.id == Project.workspace_id)
        .outerjoin(User, User.id == ProblemaTransferencia.relatado_por_id)
        .where(ProblemaTransferencia.recomendacao_id == rid)
        .order_by(ProblemaTransferencia.created_at)
    )
    return [
        Problema(
            p.id, p.tipo, issue.key, issue.title, _url(slug, issue.project_id, issue.key), name, p.created_at
        )
        for p, issue, slug, name in rows
    ]


def report_short_receipt(rid: uuid.UUID) -> None:
    """A receipt with fewer units than shipped opens a problem by itself, when there is an
    operations project to open it in."""
    # Without an operations project the difference stays in the transfer's history only.
    with contextlib.suppress(ConflictError):
        report(rid, None, "faltando", None)


def links_for(rec_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[tuple[str, str]]]:
    """The issues (key, URL) of the problems reported on these transfers, in one query (the
    history page lists them under each transfer)."""
    found: dict[uuid.UUID, list[tuple[str, str]]] = {}
    if not rec_ids:
        return found
    rows = db.session.execute(
        select(ProblemaTransferencia.recomendacao_id, Issue, Workspace.slug)
        .join(Issue, Issue.id == ProblemaTransferencia.issue_id)
        .join(Project, Project.id == Issue.project_id)
        .join(Workspace, Workspace.id == Project.workspace_id)
        .where(ProblemaTransferencia.recomendacao_id.in_(rec_ids))
        .order_by(ProblemaTransferencia.created_at)
    )
    for rec_id, issue, slug in rows:
        found.setdefault(rec_id, []).append((issue.key, _url(slug, issue.project_id, issue.key)))
    return found
