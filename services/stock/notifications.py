"""What each person hears of remanejamento, queued in the same transaction as its cause.

Events and who hears them (only what their role and store let them read):

- a batch generated: admins and planners (``lote_gerado``);
- transfers approved: the origin's store manager (``separar``: what to pick) and the
  destination's (``chegando``: what is coming);
- transfers executed: the destination's store manager (``receber``);
- transfers in transit past ``TRANSIT_ALERT_DAYS``: the planner who approved them and
  the destination's manager (``atrasada``, found by each delivery run);
- a refusal for ``estoque_errado``: admins and planners (``estoque_errado``);
- every Monday, a weekly summary (``resumo_semanal``, ``services.stock.digest``).

Each event writes one outbox row (``stock_notifications``) per person and channel the
person has on (``notifEmail``; ``notifPush`` with a subscribed browser; ``digestSemanal``
for the summary), keyed so that the same event never queues twice. Nothing leaves the
process here: ``services.stock.notification_delivery`` sends the rows, one message per
person per run.
"""

from __future__ import annotations

import base64
import binascii
import functools
import uuid
from collections.abc import Iterable
from typing import Any

from flask import current_app
from itsdangerous import BadSignature, URLSafeSerializer
from sqlalchemy import bindparam, case, delete, exists, func, select
from sqlalchemy.orm import aliased

from extensions import db
from models.auth import User
from models.base import utcnow
from models.stock import Loja, Produto
from models.stock_batches import Lote, Recomendacao
from models.stock_notifications import PushSubscription, StockNotification
from services import unique
from services.errors import ConflictError, FieldError, NotFoundError, ValidationFailed
from services.outbound import RefusedAddress, addresses_of, check_addresses, parse_url

PLANNERS = ("admin", "planejador")
# The event each decision causes, and who hears it.
DECISION_KINDS = {"aprovar": ("separar", "chegando"), "executar": ("receber",)}
NEUTRAL_REFUSAL = "estoque_errado"


def push_available() -> bool:
    cfg = current_app.config
    return bool(cfg.get("VAPID_PRIVATE_KEY") and cfg.get("VAPID_PUBLIC_KEY") and cfg.get("VAPID_SUBJECT"))


# --------------------------------------------------------------------------- queueing


@functools.cache
def _people_statement():
    # Built once (see ``_transfers_statement``); each caller adds its own condition.
    has_browser = exists().where(PushSubscription.user_id == User.id)
    return select(
        User.id, User.notif_email, User.notif_push & has_browser, User.digest_semanal, User.loja_id
    ).where(User.banned.is_(False), User.email_verified_at.is_not(None))


def people(condition) -> list[tuple[uuid.UUID, bool, bool, bool, uuid.UUID | None]]:
    """(id, e-mail on, push on with a browser, summary on, store) of the active accounts matching."""
    return [tuple(row) for row in db.session.execute(_people_statement().where(condition))]


def person(user_id: uuid.UUID):
    """One account as ``queue`` takes it, or None when it is inactive."""
    found = people(User.id == user_id)
    return found[0] if found else None


def planners() -> list:
    return people(User.papel.in_(PLANNERS))


def managers_of(loja_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, list]:
    found: dict[uuid.UUID, list] = {}
    ids = list(set(loja_ids))
    if not ids:
        return found
    for person in people((User.papel == "gerente_loja") & User.loja_id.in_(ids)):
        found.setdefault(person[4], []).append(person)
    return found


def queue(entries: list[tuple[Any, str, str, dict]], *, summary: bool = False) -> None:
    """Queue ``(person, kind, dedupe_key, payload)`` on each channel the person has on; an
    event already queued for a person and channel is left as it is."""
    now = utcnow()
    rows = []
    for person, kind, key, payload in entries:
        user_id, email_on, push_on, summary_on, _loja = person
        channels = (
            (["email"] if summary_on else [])
            if summary
            else [
                channel for channel, on in (("email", email_on), ("push", push_on and push_available())) if on
            ]
        )
        rows += [
            {
                "id": uuid.uuid4(),
                "user_id": user_id,
                "channel": channel,
                "kind": kind,
                "dedupe_key": key,
                "payload": payload,
                "state": "pending",
                "attempts": 0,
                "next_attempt_at": now,
                "created_at": now,
            }
            for channel in channels
        ]
    if rows:
        db.session.execute(
            unique.insert(StockNotification.__table__).on_conflict_do_nothing(
                index_elements=["user_id", "channel", "dedupe_key"]
            ),
            rows,
        )


def lote_gerado(lote: Lote) -> None:
    """A batch was generated (or refreshed): each generation is its own event."""
    count, units, high, destinations = db.session.execute(
        select(
            func.count(),
            func.coalesce(func.sum(Recomendacao.quantidade), 0),
            func.coalesce(func.sum(case((Recomendacao.prioridade == "alta", 1), else_=0)), 0),
            func.count(func.distinct(Recomendacao.destino_id)),
        ).where(Recomendacao.lote_id == lote.id, Recomendacao.status == "pendente")
    ).one()
    payload = {
        "lote_id": str(lote.id),
        "semana": lote.semana,
        "recomendacoes": int(count),
        "unidades": int(units),
        "alta": int(high),
        "destinos": int(destinations),
    }
    key = f"lote:{lote.id}:{lote.geracoes}"
    queue([(person, "lote_gerado", key, payload) for person in planners()])


@functools.cache
def _transfers_statement():
    # Built once: composing this five-table select costs more than running it, and a single
    # decision runs it every time.
    Origem, Destino = aliased(Loja), aliased(Loja)
    return (
        select(
            Recomendacao.id,
            Recomendacao.lote_id,
            Lote.semana,
            Recomendacao.origem_id,
            Origem.nome,
            Recomendacao.destino_id,
            Destino.nome,
            Produto.nome,
            Recomendacao.cor,
            Recomendacao.tamanho,
            Recomendacao.quantidade,
        )
        .join(Lote, Lote.id == Recomendacao.lote_id)
        .join(Origem, Origem.id == Recomendacao.origem_id)
        .join(Destino, Destino.id == Recomendacao.destino_id)
        .join(Produto, Produto.id == Recomendacao.produto_id)
        .where(Recomendacao.id.in_(bindparam("ids", expanding=True)))
    )


def transfers(ids: list[uuid.UUID]) -> list[dict]:
    rows = db.session.execute(_transfers_statement(), {"ids": list(ids)})
    keys = (
        "id",
        "lote_id",
        "semana",
        "origem_id",
        "origem",
        "destino_id",
        "destino",
        "produto",
        "cor",
        "tamanho",
        "quantidade",
    )
    return [
        {k: (str(v) if isinstance(v, uuid.UUID) else v) for k, v in zip(keys, row, strict=True)}
        for row in rows
    ]


def decisions(acao: str, ids: list[uuid.UUID], motivo_recusa: str | None = None) -> None:
    """Recommendations changed by ``acao`` (one, a selection or a whole filter)."""
    if not ids or (
        acao not in DECISION_KINDS and not (acao == "recusar" and motivo_recusa == NEUTRAL_REFUSAL)
    ):
        return
    entries = []
    for start in range(0, len(ids), 500):
        chunk = transfers(ids[start : start + 500])
        if acao == "recusar":
            planner_list = planners()
            entries += [
                (p, "estoque_errado", f"estoque_errado:{t['id']}", t) for t in chunk for p in planner_list
            ]
            continue
        stores = managers_of(
            [uuid.UUID(t["origem_id"]) for t in chunk] + [uuid.UUID(t["destino_id"]) for t in chunk]
        )
        for t in chunk:
            for kind in DECISION_KINDS[acao]:
                loja = t["origem_id"] if kind == "separar" else t["destino_id"]
                entries += [
                    (p, kind, f"{kind}:{t['id']}", {**t, "loja_id": loja})
                    for p in stores.get(uuid.UUID(loja), [])
                ]
    queue(entries)


# --------------------------------------------------------------------------- unsubscribing


def _serializer() -> URLSafeSerializer:
    return URLSafeSerializer(current_app.config["SECRET_KEY"], salt="giro-unsubscribe")


def unsubscribe_token(user_id: uuid.UUID, preference: str) -> str:
    """A link's token that turns one preference (``email`` or ``resumo``) off, without signing in."""
    return _serializer().dumps({"u": str(user_id), "p": preference})


def read_unsubscribe_token(token: str) -> tuple[User, str] | None:
    try:
        data = _serializer().loads(token)
        user = db.session.get(User, uuid.UUID(data["u"]))
        preference = data["p"]
    except (BadSignature, KeyError, TypeError, ValueError):
        return None
    if user is None or preference not in ("email", "resumo"):
        return None
    return user, preference


def unsubscribe(user: User, preference: str) -> None:
    """Turn the preference off; what is queued for it and not yet sent is not sent."""
    if preference == "resumo":
        user.digest_semanal = False
    else:
        user.notif_email = False
    db.session.flush()


# --------------------------------------------------------------------------- browsers (Web Push)

MAX_BROWSERS = 20  # per person; the oldest goes when a 21st subscribes


def _b64(value: str, length: int, first: int | None = None) -> bool:
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (ValueError, binascii.Error):
        return False
    return len(raw) == length and (first is None or raw[0] == first)


def _subscription_errors(endpoint: str, p256dh: str, auth: str) -> list[FieldError]:
    errors = []
    try:
        target = parse_url(endpoint)
        addresses = addresses_of(target)
        if not addresses:
            raise RefusedAddress(f"{target.host} does not resolve")
        check_addresses(target, addresses, allow_loopback=bool(current_app.config["PUSH_ALLOW_LOOPBACK"]))
    except RefusedAddress as exc:
        errors.append(
            FieldError(
                ("body", "endpoint"), f"Not a push service's address: {exc}", reason="push_endpoint_refused"
            )
        )
    if not _b64(p256dh, 65, 0x04):
        errors.append(
            FieldError(
                ("body", "keys", "p256dh"),
                "Not an uncompressed P-256 public key (base64url)",
                reason="push_key_invalid",
            )
        )
    if not _b64(auth, 16):
        errors.append(
            FieldError(
                ("body", "keys", "auth"),
                "Not a 16-byte authentication secret (base64url)",
                reason="push_key_invalid",
            )
        )
    return errors


def subscribe_browser(user: User, endpoint: str, p256dh: str, auth: str) -> PushSubscription:
    """Record a browser's subscription (the same endpoint again replaces it, whoever had it)."""
    if not push_available():
        raise ConflictError(
            "Web Push is not configured on this instance (VAPID keys)", reason="push_unavailable"
        )
    errors = _subscription_errors(endpoint, p256dh, auth)
    if errors:
        raise ValidationFailed(errors, "Validation failed")
    db.session.execute(delete(PushSubscription).where(PushSubscription.endpoint == endpoint))
    mine = list(
        db.session.scalars(
            select(PushSubscription.id)
            .where(PushSubscription.user_id == user.id)
            .order_by(PushSubscription.created_at)
        )
    )
    if len(mine) >= MAX_BROWSERS:
        db.session.execute(
            delete(PushSubscription).where(PushSubscription.id.in_(mine[: len(mine) - MAX_BROWSERS + 1]))
        )
    subscription = PushSubscription(
        user_id=user.id, endpoint=endpoint, p256dh=p256dh, auth=auth, created_at=utcnow()
    )
    db.session.add(subscription)
    db.session.flush()
    return subscription


def unsubscribe_browser(user: User, subscription_id: uuid.UUID) -> None:
    deleted = db.session.execute(
        delete(PushSubscription).where(
            PushSubscription.id == subscription_id, PushSubscription.user_id == user.id
        )
    )
    if not deleted.rowcount:
        raise NotFoundError("Assinatura não encontrada", reason="push_subscription_not_found")
