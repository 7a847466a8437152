"""The state machine of the decisions: one recommendation, a list of them, or every match of a filter.

States (docs/batches.md, "Decision states and roles"): ``pendente`` → ``aprovada``
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
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy import func, insert, select, update

from extensions import db
from models.auth import User
from models.base import utcnow
from models.stock_batches import MOTIVOS_RECUSA, STATUS_RECOMENDACAO, AcaoRecomendacao, Lote, Recomendacao
from services.clock import today
from services.errors import (
    ConflictError,
    DomainError,
    FieldError,
    ForbiddenError,
    NotFoundError,
    ValidationFailed,
)
from services.stock import notifications, operations
from services.stock.recommendations import FiltroRecomendacoes, get_recomendacao, listed, scoped

DECIDERS = ("admin", "planejador")
# gerente_loja runs the transfers of its own store; deciding is the planners' job.
EXECUTORS = ("admin", "planejador", "gerente_loja")


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


# --- actions ---------------------------------------------------------------------------------


def aprovar(rid: uuid.UUID, user: User) -> Recomendacao:
    return _act(rid, user, "aprovar")


def recusar(rid: uuid.UUID, user: User, motivo: str | None = None, texto: str | None = None) -> Recomendacao:
    """Refuse, optionally saying why: ``motivo`` one of ``MOTIVOS_RECUSA``, ``texto`` the
    planner's words (required with ``outro``)."""
    motivo, texto = refusal_reason(motivo, texto)
    return _act(rid, user, "recusar", motivo=texto, motivo_recusa=motivo)


def refusal_reason(motivo: str | None, texto: str | None) -> tuple[str | None, str | None]:
    """The refusal's reason checked: a known code, and words when it is ``outro``."""
    texto = (texto or "").strip() or None
    if motivo is None:
        return None, texto
    if motivo not in MOTIVOS_RECUSA:
        raise ValidationFailed(
            [
                FieldError(
                    ("body", "motivo"),
                    "Motivo de recusa desconhecido: use " + ", ".join(MOTIVOS_RECUSA),
                    reason="refusal_reason_unknown",
                )
            ]
        )
    if motivo == "outro" and texto is None:
        raise ValidationFailed(
            [
                FieldError(
                    ("body", "motivoTexto"),
                    "Descreva o motivo da recusa",
                    reason="refusal_reason_without_text",
                )
            ]
        )
    return motivo, texto


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
    acao: str,
    lote_id: uuid.UUID,
    rid: uuid.UUID,
    user: User,
    motivo: str | None = None,
    motivo_recusa: str | None = None,
) -> Recomendacao:
    """``acao`` on a recommendation of batch ``lote_id``; one that is not in it is not found.

    ``motivo`` is the veto's reason, or the refusal's words next to its ``motivo_recusa`` code."""
    if acao == "vetar":
        return vetar(lote_id, rid, user, motivo or "")
    if acao == "restaurar":
        return restaurar(lote_id, rid, user)
    get_recomendacao(rid, user, lote_id=lote_id)
    if acao == "recusar":
        return recusar(rid, user, motivo_recusa, motivo)
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
    acao: str,
    lote_id: uuid.UUID,
    ids: list[uuid.UUID],
    user: User,
    motivo: str | None = None,
    motivo_recusa: str | None = None,
) -> list[Desfecho]:
    """``acao`` on each of ``ids`` in turn, each with its own state check and SAVEPOINT: a
    refusal undoes its own row only, and the others still change."""
    visible = scoped(
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
                after = decidir(acao, lote_id, rid, user, motivo, motivo_recusa)
                desfecho.changed = (after.status, after.vetado) != before
        except DomainError as exc:
            desfecho.error = exc
        desfechos.append(desfecho)
    return desfechos


def _act(
    rid: uuid.UUID,
    user: User,
    acao: str,
    *,
    lote_id: uuid.UUID | None = None,
    motivo: str | None = None,
    motivo_recusa: str | None = None,
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
    rec = db.session.scalar(scoped(stmt, user))
    if rec is None:
        raise NotFoundError("Recomendação não encontrada", reason="recomendacao_not_found")
    if transition.holds_result(rec):
        return rec
    if (rec.status, rec.vetado) not in transition.sources:
        _refuse(transition, rec)
    antes = rec.status
    # Restoring logs the veto's reason it lifts, so an undo can bring it back.
    logged_motivo = rec.motivo_veto if acao == "restaurar" else motivo
    _apply(acao, rec, motivo, motivo_recusa)
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
            motivo=logged_motivo,
            motivo_recusa=motivo_recusa,
            usuario_id=user.id,
            usuario_nome=user.name,
            criado_em=now,
        )
    )
    db.session.flush()
    notifications.decisions(acao, [rec.id], motivo_recusa)
    operations.request_sync(rec.lote_id)
    return rec


def _refuse(transition: Transition, rec: Recomendacao) -> None:
    if rec.vetado and transition.vetoed_refusal:
        raise ConflictError(transition.vetoed_refusal, reason=transition.vetoed_refusal_reason)
    raise ConflictError(
        transition.refusal.format(status=rec.status),
        reason=transition.refusal_reason,
        params={"status": rec.status},
    )


def _apply(acao: str, rec: Recomendacao, motivo: str | None, motivo_recusa: str | None = None) -> None:
    """Set the transition's result, and what goes with it."""
    name, value = TRANSITIONS[acao].result
    setattr(rec, name, value)
    for column, column_value in _side_effects(acao, motivo, motivo_recusa).items():
        setattr(rec, column, column_value)


def _side_effects(acao: str, motivo: str | None, motivo_recusa: str | None) -> dict[str, Any]:
    """The columns an action sets besides its result (the same for one row or a whole batch)."""
    if acao == "executar":
        return {"executada_em": utcnow(), "executada_data": today()}
    if acao == "vetar":
        return {"motivo_veto": motivo}
    if acao == "restaurar":
        return {"motivo_veto": None}
    if acao == "recusar":
        return {"motivo_recusa": motivo_recusa, "motivo_recusa_texto": motivo}
    return {}


# --- a decision on everything a filter matches -----------------------------------------------

# Rows per UPDATE ... WHERE id IN (...): well within every engine's bound-parameter limit.
BULK_CHUNK = 500


@dataclass(frozen=True)
class ResultadoEmLote:
    """What one action on every recommendation matching a filter came to.

    ``ignoradas`` counts the recommendations left as they were, by why: the state that
    holds them (``aprovada``, ``recusada``... already the result, or a state the action
    cannot leave), ``vetada``, ``nao_vetada`` (restoring one that is not vetoed), or
    ``papel`` (the user's role may not take the action at all).
    """

    acao: str
    alteradas: int
    ignoradas: dict[str, int] = field(default_factory=dict)

    @property
    def total_ignoradas(self) -> int:
        return sum(self.ignoradas.values())


def decidir_filtro(
    acao: str,
    filtro: FiltroRecomendacoes,
    user: User,
    motivo: str | None = None,
    motivo_recusa: str | None = None,
) -> ResultadoEmLote:
    """``acao`` on every recommendation ``list_recomendacoes(user, filtro)`` finds, all pages.

    One transaction and one UPDATE path: the matching rows are locked (``FOR UPDATE``, in id
    order so two planners cannot deadlock), each is checked against the state machine as a
    single action would be, the ones that may change are updated together, and one action
    log row is written per recommendation changed. Nothing is committed here: a failure
    anywhere rolls every row back with the request.
    """
    motivo, motivo_recusa = _bulk_reasons(acao, motivo, motivo_recusa)
    return _decide_matching(acao, listed(user, filtro), user, motivo, motivo_recusa)


def decidir_selecao(
    acao: str,
    lote_id: uuid.UUID,
    ids: list[uuid.UUID],
    user: User,
    motivo: str | None = None,
    motivo_recusa: str | None = None,
) -> ResultadoEmLote:
    """``acao`` on the recommendations ``ids`` of batch ``lote_id``, as ``decidir_filtro``
    does for a filter: all or nothing, one UPDATE path, the ones not in a state to change
    counted in ``ignoradas``. For callers that decide many known rows at once (the demo's
    past weeks); the API's selection answers each id's outcome (``decidir_varias``)."""
    motivo, motivo_recusa = _bulk_reasons(acao, motivo, motivo_recusa)
    stmt = scoped(select(Recomendacao).where(Recomendacao.id.in_(ids), Recomendacao.lote_id == lote_id), user)
    return _decide_matching(acao, stmt, user, motivo, motivo_recusa)


def _bulk_reasons(acao: str, motivo: str | None, motivo_recusa: str | None) -> tuple[str | None, str | None]:
    if acao == "vetar":
        motivo = (motivo or "").strip()
        if not motivo:
            raise ValidationFailed(
                [
                    FieldError(
                        ("body", "motivo"),
                        "O motivo do veto não pode ser vazio",
                        reason="veto_without_motivo",
                    )
                ]
            )
    elif acao == "recusar":
        motivo_recusa, motivo = refusal_reason(motivo_recusa, motivo)
    else:
        motivo = motivo_recusa = None
    return motivo, motivo_recusa


def _decide_matching(
    acao: str, stmt, user: User, motivo: str | None, motivo_recusa: str | None
) -> ResultadoEmLote:
    transition = TRANSITIONS[acao]
    if stmt is None:
        return ResultadoEmLote(acao, 0)
    if user.papel not in transition.roles:
        matching = db.session.scalar(select(func.count()).select_from(stmt.subquery())) or 0
        return ResultadoEmLote(acao, 0, {"papel": matching} if matching else {})
    rows = db.session.execute(
        stmt.with_only_columns(
            Recomendacao.id, Recomendacao.status, Recomendacao.vetado, Recomendacao.motivo_veto
        )
        .order_by(Recomendacao.id)
        .with_for_update(of=Recomendacao)
    ).all()
    name, value = transition.result
    ignoradas: Counter[str] = Counter()
    changing = []
    for rid, status, vetado, motivo_veto in rows:
        if (status if name == "status" else vetado) == value:
            ignoradas[status if name == "status" else ("vetada" if value else "nao_vetada")] += 1
        elif (status, vetado) not in transition.sources:
            ignoradas["vetada" if vetado and transition.vetoed_refusal else status] += 1
        else:
            changing.append((rid, status, vetado, motivo_veto))
    if changing:
        _update_all(acao, changing, user, motivo, motivo_recusa)
        # A filter lists one batch: the first row's.
        operations.request_sync(db.session.get(Recomendacao, changing[0][0]).lote_id)
    return ResultadoEmLote(acao, len(changing), dict(ignoradas))


def _update_all(
    acao: str,
    changing: list[tuple[uuid.UUID, str, bool, str | None]],
    user: User,
    motivo: str | None,
    motivo_recusa: str | None,
) -> None:
    name, value = TRANSITIONS[acao].result
    now = utcnow()
    values = {
        name: value,
        "ultima_acao_em": now,
        "ultima_acao_por_id": user.id,
        "ultima_acao_por_nome": user.name,
        **_side_effects(acao, motivo, motivo_recusa),
    }
    ids = [row[0] for row in changing]
    for start in range(0, len(ids), BULK_CHUNK):
        db.session.execute(
            update(Recomendacao)
            .where(Recomendacao.id.in_(ids[start : start + BULK_CHUNK]))
            .values(**values)
            .execution_options(synchronize_session=False)
        )
    log = [
        {
            "id": uuid.uuid4(),
            "recomendacao_id": rid,
            "acao": acao,
            "status_anterior": status,
            "status_novo": value if name == "status" else status,
            "vetado": value if name == "vetado" else vetado,
            "motivo": motivo_veto if acao == "restaurar" else motivo,
            "motivo_recusa": motivo_recusa,
            "usuario_id": user.id,
            "usuario_nome": user.name,
            "criado_em": now,
        }
        for rid, status, vetado, motivo_veto in changing
    ]
    # A Core executemany: the ORM's bulk path would rebuild every row first (twice as slow).
    db.session.execute(insert(AcaoRecomendacao.__table__), log)
    notifications.decisions(acao, ids, motivo_recusa)
    # Recommendations already loaded in this session would still show their old state.
    for obj in list(db.session.identity_map.values()):
        if isinstance(obj, Recomendacao):
            db.session.expire(obj)


# --- undo ------------------------------------------------------------------------------------

# How long after an action its author may still undo it (the page offers it for a few seconds).
UNDO_SECONDS = 120


def desfazer(lote_id: uuid.UUID, rid: uuid.UUID, user: User, acao: str) -> Recomendacao:
    """Undo ``acao``, the latest action on the recommendation, taken by ``user`` less than
    ``UNDO_SECONDS`` ago: the reverse move, logged as ``desfazer`` (its ``motivo`` names the
    action undone). Anything else is a ``ConflictError``."""
    transition = TRANSITIONS.get(acao)
    if transition is None:
        raise NotFoundError("Ação desconhecida", reason="action_not_found")
    if user.papel not in transition.roles:
        raise ForbiddenError("Sem permissão para esta ação", reason="role_not_allowed")
    if db.session.get(Lote, lote_id) is None:
        raise NotFoundError("Lote não encontrado", reason="lote_not_found")
    stmt = (
        select(Recomendacao)
        .where(Recomendacao.id == rid, Recomendacao.lote_id == lote_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    rec = db.session.scalar(scoped(stmt, user))
    if rec is None:
        raise NotFoundError("Recomendação não encontrada", reason="recomendacao_not_found")
    last = db.session.scalar(
        select(AcaoRecomendacao)
        .where(AcaoRecomendacao.recomendacao_id == rid)
        .order_by(AcaoRecomendacao.criado_em.desc())
        .limit(1)
    )
    now = utcnow()
    if (
        last is None
        or last.acao != acao
        or last.usuario_id != user.id
        or now - last.criado_em > timedelta(seconds=UNDO_SECONDS)
    ):
        raise ConflictError("Não há ação recente sua para desfazer", reason="undo_not_available")
    antes = rec.status
    name, _value = transition.result
    if name == "status":
        rec.status = last.status_anterior
    rec.vetado = not last.vetado if name == "vetado" else rec.vetado
    if acao == "executar":
        rec.executada_em = rec.executada_data = None
    elif acao == "recusar":
        rec.motivo_recusa = rec.motivo_recusa_texto = None
    elif acao == "vetar":
        rec.motivo_veto = None
    elif acao == "restaurar":
        # The veto comes back with its reason, which the restoring action logged.
        rec.motivo_veto = last.motivo
    rec.ultima_acao_em = now
    rec.ultima_acao_por_id = user.id
    rec.ultima_acao_por_nome = user.name
    db.session.add(
        AcaoRecomendacao(
            recomendacao_id=rec.id,
            acao="desfazer",
            status_anterior=antes,
            status_novo=rec.status,
            vetado=rec.vetado,
            motivo=acao,
            usuario_id=user.id,
            usuario_nome=user.name,
            criado_em=now,
        )
    )
    db.session.flush()
    return rec
