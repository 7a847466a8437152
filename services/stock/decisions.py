"""Who may see and decide which recommendation, and the state machine of the decisions.

States (README, "Remanejamento: batches and the engine"): ``pendente`` → ``aprovada``
(aprovar) → ``executada`` (executar); ``pendente`` or ``aprovada`` → ``recusada``
(recusar). The veto is orthogonal: ``vetar`` marks a ``pendente`` or ``aprovada``
recommendation, which then cannot be approved or executed until ``restaurar``.
Repeating the action already taken answers the recommendation unchanged; any other
move is a ``ConflictError`` (409). ``TRANSITIONS`` holds all of it: the API's
actions, the pages' buttons and their bulk decisions read that one table.

Every change locks the recommendation row first (``SELECT ... FOR UPDATE``), so two
planners acting at once are serialised: the second sees the first one's result and
either repeats it (unchanged) or is refused with 409. Nothing is lost.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import case, false, func, or_, select
from sqlalchemy.orm import aliased

from extensions import db
from models.auth import User
from models.base import utcnow
from models.remanejamento import STATUS_RECOMENDACAO, AcaoRecomendacao, Lote, Recomendacao
from models.stock import Loja, Produto
from services.clock import today
from services.errors import (
    ConflictError,
    DomainError,
    FieldError,
    ForbiddenError,
    NotFoundError,
    ValidationFailed,
)

DECIDERS = ("admin", "planejador")
# gerente_loja runs the transfers of its own store; deciding is the planners' job.
EXECUTORS = ("admin", "planejador", "gerente_loja")
LIST_ORDER = (Recomendacao.prioridade_rank, Recomendacao.score.desc(), Recomendacao.posicao, Recomendacao.id)
# The list order backwards: a list sorted by priority, descending.
LIST_ORDER_REVERSED = (
    Recomendacao.prioridade_rank.desc(),
    Recomendacao.score,
    Recomendacao.posicao.desc(),
    Recomendacao.id.desc(),
)


@dataclass(frozen=True)
class Transition:
    """One action: who may take it, what it sets, and the states ``(status, vetado)`` it changes.

    A recommendation that already holds ``result`` is answered unchanged; one in any other
    state than ``sources`` is refused: ``vetoed_refusal`` when it is vetoed and one is
    given, ``refusal`` otherwise (``{status}`` is its status).
    """

    roles: tuple[str, ...]
    result: tuple[str, Any]
    sources: frozenset[tuple[str, bool]]
    refusal: str = ""
    refusal_reason: str = ""
    vetoed_refusal: str = ""
    vetoed_refusal_reason: str = ""

    def holds_result(self, rec: Recomendacao) -> bool:
        name, value = self.result
        return getattr(rec, name) == value


def _states(statuses: tuple[str, ...], vetoes: tuple[bool, ...] = (False,)) -> frozenset[tuple[str, bool]]:
    return frozenset((status, vetado) for status in statuses for vetado in vetoes)


# In the order pages show the actions.
TRANSITIONS: dict[str, Transition] = {
    "aprovar": Transition(
        DECIDERS,
        ("status", "aprovada"),
        _states(("pendente",)),
        refusal="Não é possível aprovar uma recomendação {status}",
        refusal_reason="approve_not_allowed",
        vetoed_refusal="Recomendação vetada: restaure-a antes de aprovar",
        vetoed_refusal_reason="approve_vetoed",
    ),
    "executar": Transition(
        EXECUTORS,
        ("status", "executada"),
        _states(("aprovada",)),
        refusal="Só uma recomendação aprovada pode ser executada (esta está {status})",
        refusal_reason="execute_not_allowed",
        vetoed_refusal="Recomendação vetada: restaure-a antes de executar",
        vetoed_refusal_reason="execute_vetoed",
    ),
    "recusar": Transition(
        DECIDERS,
        ("status", "recusada"),
        _states(("pendente", "aprovada"), (False, True)),
        refusal="Não é possível recusar uma recomendação {status}",
        refusal_reason="refuse_not_allowed",
    ),
    "vetar": Transition(
        DECIDERS,
        ("vetado", True),
        _states(("pendente", "aprovada")),
        refusal="Não é possível vetar uma recomendação {status}",
        refusal_reason="veto_not_allowed",
    ),
    # Never refused: a recommendation that is not vetoed is already restored.
    "restaurar": Transition(DECIDERS, ("vetado", False), _states(STATUS_RECOMENDACAO, (True,))),
}
ACOES = tuple(TRANSITIONS)


def may(user: User, acao: str) -> bool:
    """Whether ``user``'s role may take ``acao`` at all."""
    return user.papel in TRANSITIONS[acao].roles


def available_actions(rec: Recomendacao, user: User) -> list[str]:
    """The actions that would change ``rec`` if ``user`` took them now.

    While a veto stands, lifting it is the only one offered: refusing a vetoed
    recommendation is accepted, but not suggested.
    """
    state = (rec.status, rec.vetado)
    return [
        acao
        for acao, transition in TRANSITIONS.items()
        if user.papel in transition.roles
        and state in transition.sources
        and (not rec.vetado or transition.result[0] == "vetado")
    ]


def visible_condition(user: User):
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
        raise NotFoundError("Lote não encontrado", reason="lote_not_found")
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
        raise NotFoundError("Recomendação não encontrada", reason="recomendacao_not_found")
    return rec


@dataclass(frozen=True)
class FiltroRecomendacoes:
    """What a list of recommendations keeps, in which order, and which page of it.

    The filters match exactly; ``None`` does not filter. ``ordem`` is one of ``SORTS``.
    """

    lote_id: uuid.UUID | None = None  # the newest batch when None
    produto_id: uuid.UUID | None = None
    destino_id: uuid.UUID | None = None
    origem_id: uuid.UUID | None = None
    prioridade: str | None = None
    status: str | None = None
    tipo_origem: str | None = None
    vetado: bool | None = None
    ordem: str = "prioridade"
    desc: bool = False
    limite: int | None = None
    offset: int = 0


# The exact-match filters: attribute of ``FiltroRecomendacoes`` and the column it matches.
FILTER_COLUMNS = (
    ("produto_id", Recomendacao.produto_id),
    ("destino_id", Recomendacao.destino_id),
    ("origem_id", Recomendacao.origem_id),
    ("prioridade", Recomendacao.prioridade),
    ("status", Recomendacao.status),
    ("tipo_origem", Recomendacao.tipo_origem),
    ("vetado", Recomendacao.vetado),
)
# Orders of the list besides its own (``prioridade``); ties keep the list order.
SORTS = (
    "prioridade",
    "score",
    "quantidade",
    "ruptura",
    "produto",
    "origem",
    "destino",
    "distancia",
    "status",
)


def _listed(user: User, filtro: FiltroRecomendacoes):
    """The statement of the list's rows (``None`` when there is no batch at all)."""
    lote_id = filtro.lote_id
    if lote_id is None:
        lote = newest_lote()
        if lote is None:
            return None
        lote_id = lote.id
    else:
        get_lote(lote_id)
    stmt = select(Recomendacao).where(Recomendacao.lote_id == lote_id)
    for name, column in FILTER_COLUMNS:
        value = getattr(filtro, name)
        if value is not None:
            stmt = stmt.where(column == value)
    return _scoped(stmt, user)


def list_recomendacoes(user: User, filtro: FiltroRecomendacoes) -> list[Recomendacao]:
    """Recommendations of one batch (``lote_id``, else the newest), filters matching exactly.

    Order: priority (alta, media, baixa), score descending, then the engine's order;
    ``ordem`` (one of ``SORTS``) and ``desc`` sort by another column, ties in that order.
    ``vetado`` keeps only the vetoed (or only the other) ones. ``limite``/``offset`` page.
    """
    stmt = _listed(user, filtro)
    if stmt is None:
        return []
    stmt = _sorted(stmt, filtro.ordem, filtro.desc)
    return _page(stmt, filtro.limite, filtro.offset)


def count_recomendacoes(user: User, filtro: FiltroRecomendacoes) -> int:
    """How many recommendations ``list_recomendacoes`` finds with ``filtro``, all pages together."""
    stmt = _listed(user, filtro)
    if stmt is None:
        return 0
    return db.session.scalar(select(func.count()).select_from(stmt.subquery())) or 0


def _sorted(stmt, ordem: str, desc: bool):
    if ordem == "prioridade":
        return stmt.order_by(*(LIST_ORDER_REVERSED if desc else LIST_ORDER))
    keys: tuple
    if ordem == "produto":
        stmt = stmt.join(Produto, Produto.id == Recomendacao.produto_id)
        keys = (_text_key(Produto.nome), _text_key(Recomendacao.tamanho))
    elif ordem in ("origem", "destino"):
        loja = aliased(Loja)
        column = Recomendacao.origem_id if ordem == "origem" else Recomendacao.destino_id
        stmt = stmt.join(loja, loja.id == column)
        keys = (_text_key(loja.nome),)
    elif ordem == "status":
        # The workflow's order, vetoed ones last.
        keys = (
            Recomendacao.vetado,
            case({s: i for i, s in enumerate(STATUS_RECOMENDACAO)}, value=Recomendacao.status),
        )
    else:
        columns = {
            "score": Recomendacao.score,
            "quantidade": Recomendacao.quantidade,
            "ruptura": Recomendacao.dias_ate_ruptura,
            "distancia": Recomendacao.distancia_km,
        }
        keys = (columns[ordem],)
    return stmt.order_by(*(key.desc() if desc else key for key in keys), *LIST_ORDER)


def _text_key(column):
    """Case-insensitive, by code point on both databases (PostgreSQL would otherwise use its locale)."""
    lowered = func.lower(column)
    return lowered.collate("C") if db.session.get_bind().dialect.name == "postgresql" else lowered


def lote_recomendacoes(
    lote_id: uuid.UUID, user: User, *, ativas: bool = False, limite: int | None = None, offset: int = 0
) -> list[Recomendacao]:
    get_lote(lote_id)
    stmt = select(Recomendacao).where(Recomendacao.lote_id == lote_id)
    if ativas:
        stmt = stmt.where(active_condition())
    return _page(_scoped(stmt, user).order_by(*LIST_ORDER), limite, offset)


def _page(stmt, limite: int | None, offset: int) -> list[Recomendacao]:
    stmt = stmt.offset(offset)
    if limite is not None:
        stmt = stmt.limit(limite)
    return list(db.session.scalars(stmt))


def active_condition():
    """Active = neither vetoed nor refused (``ativas=true``)."""
    return (Recomendacao.vetado == false()) & (Recomendacao.status != "recusada")


def distinct_values(lote_id: uuid.UUID, user: User) -> tuple[set[uuid.UUID], set[uuid.UUID], set[uuid.UUID]]:
    """The origins, destinations and products of the batch's recommendations ``user`` may see."""
    get_lote(lote_id)
    stmt = select(Recomendacao.origem_id, Recomendacao.destino_id, Recomendacao.produto_id).where(
        Recomendacao.lote_id == lote_id
    )
    origens: set[uuid.UUID] = set()
    destinos: set[uuid.UUID] = set()
    produtos: set[uuid.UUID] = set()
    for origem, destino, produto in db.session.execute(_scoped(stmt, user).distinct()):
        origens.add(origem)
        destinos.add(destino)
        produtos.add(produto)
    return origens, destinos, produtos


# --- actions ---------------------------------------------------------------------------------


def aprovar(rid: uuid.UUID, user: User) -> Recomendacao:
    return _act(rid, user, "aprovar")


def recusar(rid: uuid.UUID, user: User) -> Recomendacao:
    return _act(rid, user, "recusar")


def executar(rid: uuid.UUID, user: User) -> Recomendacao:
    return _act(rid, user, "executar")


def vetar(lote_id: uuid.UUID, rid: uuid.UUID, user: User, motivo: str) -> Recomendacao:
    motivo = motivo.strip()
    if not motivo:
        raise ValidationFailed(
            [
                FieldError(
                    ("body", "motivo"), "O motivo do veto não pode ser vazio", reason="veto_without_motivo"
                )
            ]
        )
    return _act(rid, user, "vetar", lote_id=lote_id, motivo=motivo)


def restaurar(lote_id: uuid.UUID, rid: uuid.UUID, user: User) -> Recomendacao:
    return _act(rid, user, "restaurar", lote_id=lote_id)


def decidir(
    acao: str, lote_id: uuid.UUID, rid: uuid.UUID, user: User, motivo: str | None = None
) -> Recomendacao:
    """``acao`` on a recommendation of batch ``lote_id``; one that is not in it is not found."""
    if acao == "vetar":
        return vetar(lote_id, rid, user, motivo or "")
    if acao == "restaurar":
        return restaurar(lote_id, rid, user)
    get_recomendacao(rid, user, lote_id=lote_id)
    return _act(rid, user, acao)


@dataclass
class Desfecho:
    """What one recommendation of a bulk decision came to."""

    rid: uuid.UUID
    # As the user saw it before the decision; None when it is not theirs to see.
    recomendacao: Recomendacao | None
    changed: bool = False
    error: DomainError | None = None


def decidir_varias(
    acao: str, lote_id: uuid.UUID, ids: list[uuid.UUID], user: User, motivo: str | None = None
) -> list[Desfecho]:
    """``acao`` on each of ``ids`` in turn, each with its own state check and SAVEPOINT: a
    refusal undoes its own row only, and the others still change."""
    visible = _scoped(
        select(Recomendacao).where(Recomendacao.id.in_(ids), Recomendacao.lote_id == lote_id), user
    )
    recs = {rec.id: rec for rec in db.session.scalars(visible)}
    desfechos = []
    for rid in ids:
        rec = recs.get(rid)
        before = (rec.status, rec.vetado) if rec is not None else None
        desfecho = Desfecho(rid, rec)
        try:
            with db.session.begin_nested():
                after = decidir(acao, lote_id, rid, user, motivo)
                desfecho.changed = (after.status, after.vetado) != before
        except DomainError as exc:
            desfecho.error = exc
        desfechos.append(desfecho)
    return desfechos


def _act(
    rid: uuid.UUID, user: User, acao: str, *, lote_id: uuid.UUID | None = None, motivo: str | None = None
) -> Recomendacao:
    transition = TRANSITIONS[acao]
    if user.papel not in transition.roles:
        raise ForbiddenError("Sem permissão para esta ação", reason="role_not_allowed")
    # The row lock (FOR UPDATE) makes a second planner wait and then see the first
    # one's result. SQLite has no row locks; there the writing request already holds
    # the database's write lock from its first statement (``app.py``).
    if lote_id is not None and db.session.get(Lote, lote_id) is None:
        raise NotFoundError("Lote não encontrado", reason="lote_not_found")
    stmt = (
        select(Recomendacao)
        .where(Recomendacao.id == rid)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    if lote_id is not None:
        stmt = stmt.where(Recomendacao.lote_id == lote_id)
    rec = db.session.scalar(_scoped(stmt, user))
    if rec is None:
        raise NotFoundError("Recomendação não encontrada", reason="recomendacao_not_found")
    if transition.holds_result(rec):
        return rec
    if (rec.status, rec.vetado) not in transition.sources:
        _refuse(transition, rec)
    antes = rec.status
    _apply(acao, rec, motivo)
    now = utcnow()
    rec.ultima_acao_em = now
    rec.ultima_acao_por_id = user.id
    rec.ultima_acao_por_nome = user.name
    db.session.add(
        AcaoRecomendacao(
            recomendacao_id=rec.id,
            acao=acao,
            status_anterior=antes,
            status_novo=rec.status,
            vetado=rec.vetado,
            motivo=motivo,
            usuario_id=user.id,
            usuario_nome=user.name,
            criado_em=now,
        )
    )
    db.session.flush()
    return rec


def _refuse(transition: Transition, rec: Recomendacao) -> None:
    if rec.vetado and transition.vetoed_refusal:
        raise ConflictError(transition.vetoed_refusal, reason=transition.vetoed_refusal_reason)
    raise ConflictError(
        transition.refusal.format(status=rec.status),
        reason=transition.refusal_reason,
        params={"status": rec.status},
    )


def _apply(acao: str, rec: Recomendacao, motivo: str | None) -> None:
    """Set the transition's result, and what goes with it."""
    name, value = TRANSITIONS[acao].result
    setattr(rec, name, value)
    if acao == "executar":
        rec.executada_em = utcnow()
        rec.executada_data = today()
    elif acao == "vetar":
        rec.motivo_veto = motivo
    elif acao == "restaurar":
        rec.motivo_veto = None
