"""Who may see and decide which recommendation, and the state machine of the decisions.

States (DESIGN.md): ``pendente`` → ``aprovada`` (aprovar) → ``executada`` (executar);
``pendente`` or ``aprovada`` → ``recusada`` (recusar). The veto is orthogonal: ``vetar``
marks a ``pendente`` or ``aprovada`` recommendation, which then cannot be approved or
executed until ``restaurar``. Repeating the action already taken answers the
recommendation unchanged; any other move is a ``ConflictError`` (409).

Every change locks the recommendation row first (``SELECT ... FOR UPDATE``), so two
planners acting at once are serialised: the second sees the first one's result and
either repeats it (unchanged) or is refused with 409. Nothing is lost.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import false, or_, select

from extensions import db
from models.auth import User
from models.base import utcnow
from models.remanejamento import AcaoRecomendacao, Lote, Recomendacao
from services.clock import today
from services.errors import ConflictError, FieldError, ForbiddenError, NotFoundError, ValidationFailed

DECIDERS = ("admin", "planejador")
# gerente_loja runs the transfers of its own store; deciding is the planners' job.
EXECUTORS = ("admin", "planejador", "gerente_loja")
ACTION_ROLES = {
    "aprovar": DECIDERS,
    "recusar": DECIDERS,
    "vetar": DECIDERS,
    "restaurar": DECIDERS,
    "executar": EXECUTORS,
}
LIST_ORDER = (Recomendacao.prioridade_rank, Recomendacao.score.desc(), Recomendacao.posicao, Recomendacao.id)
# SQLite refuses to upgrade a reader to a writer once another writer committed
# (SQLITE_BUSY_SNAPSHOT); the action is then retried on a fresh transaction.


def visible_condition(user: User | Actor):
    """SQL condition on ``Recomendacao`` for what ``user`` may see.

    A ``gerente_loja`` sees the transfers into or out of its own store only (none
    without a store); every other role sees everything.
    """
    if user.papel != "gerente_loja":
        return None
    if user.loja_id is None:
        return false()
    return or_(Recomendacao.origem_id == user.loja_id, Recomendacao.destino_id == user.loja_id)


def _scoped(stmt, user: User):
    cond = visible_condition(user)
    return stmt if cond is None else stmt.where(cond)


def get_lote(lote_id: uuid.UUID) -> Lote:
    lote = db.session.get(Lote, lote_id)
    if lote is None:
        raise NotFoundError("Lote não encontrado")
    return lote


def newest_lote() -> Lote | None:
    return db.session.scalar(select(Lote).order_by(Lote.inicio.desc()).limit(1))


def get_recomendacao(rid: uuid.UUID, user: User, *, lote_id: uuid.UUID | None = None) -> Recomendacao:
    """One recommendation the user may see; 404 otherwise (no hint that it exists)."""
    stmt = _scoped(select(Recomendacao).where(Recomendacao.id == rid), user)
    if lote_id is not None:
        stmt = stmt.where(Recomendacao.lote_id == lote_id)
    rec = db.session.scalar(stmt)
    if rec is None:
        raise NotFoundError("Recomendação não encontrada")
    return rec


def list_recomendacoes(user: User, filters: dict[str, Any]) -> list[Recomendacao]:
    """Recommendations of one batch (``loteId``, else the newest), filters matching exactly.

    Order: priority (alta, media, baixa), score descending, then the engine's order.
    """
    lote_id = filters.get("loteId")
    if lote_id is None:
        lote = newest_lote()
        if lote is None:
            return []
        lote_id = lote.id
    else:
        get_lote(lote_id)
    stmt = select(Recomendacao).where(Recomendacao.lote_id == lote_id)
    columns = {
        "produtoId": Recomendacao.produto_id,
        "lojaDestinoId": Recomendacao.destino_id,
        "origemId": Recomendacao.origem_id,
        "prioridade": Recomendacao.prioridade,
        "status": Recomendacao.status,
        "tipoOrigem": Recomendacao.tipo_origem,
    }
    for name, column in columns.items():
        if filters.get(name) is not None:
            stmt = stmt.where(column == filters[name])
    return _page(_scoped(stmt, user), filters.get("limite"), filters.get("offset", 0))


def lote_recomendacoes(
    lote_id: uuid.UUID, user: User, *, ativas: bool = False, limite: int | None = None, offset: int = 0
) -> list[Recomendacao]:
    get_lote(lote_id)
    stmt = select(Recomendacao).where(Recomendacao.lote_id == lote_id)
    if ativas:
        stmt = stmt.where(active_condition())
    return _page(_scoped(stmt, user), limite, offset)


def _page(stmt, limite: int | None, offset: int) -> list[Recomendacao]:
    stmt = stmt.order_by(*LIST_ORDER).offset(offset)
    if limite is not None:
        stmt = stmt.limit(limite)
    return list(db.session.scalars(stmt))


def active_condition():
    """Active = neither vetoed nor refused (DESIGN.md, ``ativas=true``)."""
    return (Recomendacao.vetado == false()) & (Recomendacao.status != "recusada")


# --- actions ---------------------------------------------------------------------------------


def aprovar(rid: uuid.UUID, user: User) -> Recomendacao:
    return _act(rid, user, "aprovar", _aprovar)


def recusar(rid: uuid.UUID, user: User) -> Recomendacao:
    return _act(rid, user, "recusar", _recusar)


def executar(rid: uuid.UUID, user: User) -> Recomendacao:
    return _act(rid, user, "executar", _executar)


def vetar(lote_id: uuid.UUID, rid: uuid.UUID, user: User, motivo: str) -> Recomendacao:
    motivo = motivo.strip()
    if not motivo:
        raise ValidationFailed([FieldError(("body", "motivo"), "O motivo do veto não pode ser vazio")])
    return _act(rid, user, "vetar", lambda rec: _vetar(rec, motivo), lote_id=lote_id, motivo=motivo)


def restaurar(lote_id: uuid.UUID, rid: uuid.UUID, user: User) -> Recomendacao:
    return _act(rid, user, "restaurar", _restaurar, lote_id=lote_id)


def _aprovar(rec: Recomendacao) -> bool:
    if rec.status == "aprovada":
        return False
    if rec.vetado:
        raise ConflictError("Recomendação vetada: restaure-a antes de aprovar")
    if rec.status != "pendente":
        raise ConflictError(f"Não é possível aprovar uma recomendação {rec.status}")
    rec.status = "aprovada"
    return True


def _recusar(rec: Recomendacao) -> bool:
    if rec.status == "recusada":
        return False
    if rec.status not in ("pendente", "aprovada"):
        raise ConflictError(f"Não é possível recusar uma recomendação {rec.status}")
    rec.status = "recusada"
    return True


def _executar(rec: Recomendacao) -> bool:
    if rec.status == "executada":
        return False
    if rec.vetado:
        raise ConflictError("Recomendação vetada: restaure-a antes de executar")
    if rec.status != "aprovada":
        raise ConflictError(f"Só uma recomendação aprovada pode ser executada (esta está {rec.status})")
    rec.status = "executada"
    rec.executada_em = utcnow()
    rec.executada_data = today()
    return True


def _vetar(rec: Recomendacao, motivo: str) -> bool:
    if rec.vetado:
        return False
    if rec.status not in ("pendente", "aprovada"):
        raise ConflictError(f"Não é possível vetar uma recomendação {rec.status}")
    rec.vetado = True
    rec.motivo_veto = motivo
    return True


def _restaurar(rec: Recomendacao) -> bool:
    if not rec.vetado:
        return False
    rec.vetado = False
    rec.motivo_veto = None
    return True


@dataclass(frozen=True)
class Actor:
    """The acting user as plain values: they survive a SQLite retry's rollback without a query."""

    id: uuid.UUID
    name: str
    papel: str
    loja_id: uuid.UUID | None


def _act(
    rid: uuid.UUID,
    user: User,
    acao: str,
    apply: Callable[[Recomendacao], bool],
    *,
    lote_id: uuid.UUID | None = None,
    motivo: str | None = None,
) -> Recomendacao:
    if user.papel not in ACTION_ROLES[acao]:
        raise ForbiddenError("Sem permissão para esta ação")
    actor = Actor(user.id, user.name, user.papel, user.loja_id)
    # The row lock (FOR UPDATE) makes a second planner wait and then see the first
    # one's result. SQLite has no row locks; there the writing request already holds
    # the database's write lock from its first statement (``app.py``).
    if lote_id is not None and db.session.get(Lote, lote_id) is None:
        raise NotFoundError("Lote não encontrado")
    stmt = (
        select(Recomendacao)
        .where(Recomendacao.id == rid)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    if lote_id is not None:
        stmt = stmt.where(Recomendacao.lote_id == lote_id)
    cond = visible_condition(actor)
    if cond is not None:
        stmt = stmt.where(cond)
    rec = db.session.scalar(stmt)
    if rec is None:
        raise NotFoundError("Recomendação não encontrada")
    antes = rec.status
    if not apply(rec):
        return rec
    now = utcnow()
    rec.ultima_acao_em = now
    rec.ultima_acao_por_id = actor.id
    rec.ultima_acao_por_nome = actor.name
    db.session.add(
        AcaoRecomendacao(
            recomendacao_id=rec.id,
            acao=acao,
            status_anterior=antes,
            status_novo=rec.status,
            vetado=rec.vetado,
            motivo=motivo,
            usuario_id=actor.id,
            usuario_nome=actor.name,
            criado_em=now,
        )
    )
    db.session.flush()
    return rec
