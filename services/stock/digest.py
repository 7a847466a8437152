"""The weekly summary: every Monday from 08:00 in ``GIRO_TIMEZONE``, each planner and store
manager with ``digestSemanal`` on gets one e-mail: last week's batch outcome (ESI against
the units of moved goods sold so far, ASI), this week's batch for their scope, and what is in
transit and late.

``flask scheduler`` runs ``digest_tick`` every hour; the ``resumo_semanal`` job queues each
person's summary (keyed by the week: a second run, or a run after a worker died half way,
queues nothing twice) and sends the outbox at once (``services.stock.notification_delivery``).
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from flask import current_app
from sqlalchemy import func, select

from extensions import db
from models.auth import User
from models.base import utcnow
from models.stock_batches import Lote, Recomendacao
from models.stock_notifications import StockNotification
from services import jobs
from services.stock import notification_delivery, notifications, outcome, transit
from services.stock.batches import iso_week, totais
from services.transactions import writes

KIND = "resumo_semanal"
SEND_AT = time(8, 0)


def due_week(now: datetime) -> str | None:
    """The ISO week whose summary is due at ``now``: from Monday 08:00 (local) on."""
    local = now.astimezone(ZoneInfo(current_app.config["TIMEZONE"]))
    monday = local.date() - timedelta(days=local.weekday())
    if local.replace(tzinfo=None) < datetime.combine(monday, SEND_AT):
        return None
    return iso_week(monday)[0]


def _lote(semana: str) -> Lote | None:
    return db.session.scalar(select(Lote).where(Lote.semana == semana))


def _figures(user: User, this_week: Lote | None, last_week: Lote | None) -> dict[str, Any]:
    """What one person's summary says, within what that person may read."""
    figures: dict[str, Any] = {"esi": None, "asi": None, "recomendacoes": 0, "unidades": 0, "alta": 0}
    if last_week is not None:
        total = outcome.resultado(user, lote_id=last_week.id).total
        window = total.janela_14
        figures["esi"] = total.esi
        figures["asi"] = window.asi + window.parciais.asi
    if this_week is not None:
        t = totais(this_week.id, user)
        figures.update(recomendacoes=t.total_itens, unidades=t.total_unidades, alta=t.alta_prioridade)
        figures["link"] = f"/lotes/{this_week.id}"
    limit = transit.alert_days()
    if user.papel == "gerente_loja":
        itens = transit.em_transito(user.loja_id, user).itens
        figures.update(em_transito=len(itens), atrasadas=sum(1 for i in itens if i.atrasada))
        figures["escopo"] = user.loja.nome if user.loja is not None else "sua loja"
    else:
        figures["em_transito"] = int(
            db.session.scalar(
                select(func.count()).select_from(Recomendacao).where(transit.in_transit_condition())
            )
        )
        figures["atrasadas"] = len(transit.late_transfers(limit, utcnow()))
        figures["escopo"] = "toda a rede"
    return figures


@writes
def queue_summaries(now: datetime | None = None) -> int:
    """Queue the week's summary for everyone due one; returns how many people."""
    now = now or utcnow()
    semana = due_week(now)
    if semana is None:
        return 0
    monday = datetime.strptime(semana + "-1", "%G-W%V-%u").date()
    this_week, last_week = _lote(semana), _lote(iso_week(monday - timedelta(days=7))[0])
    people = notifications.planners() + [
        p for group in notifications.managers_of(_store_ids()).values() for p in group
    ]
    done = set(
        db.session.scalars(
            select(StockNotification.user_id).where(StockNotification.dedupe_key == f"resumo:{semana}")
        )
    )
    people = [p for p in people if p[0] not in done and p[3]]  # not queued yet, and wanted
    if not people:
        return 0
    users = {u.id: u for u in db.session.scalars(select(User).where(User.id.in_([p[0] for p in people])))}
    network: dict[str, Any] | None = None
    entries = []
    for person in people:
        user = users[person[0]]
        if user.papel in notifications.PLANNERS:
            network = network or _figures(user, this_week, last_week)
            figures = network
        else:
            figures = {**_figures(user, this_week, last_week), "loja_id": str(user.loja_id)}
        entries.append((person, KIND, f"resumo:{semana}", {"semana": semana, **figures}))
    notifications.queue(entries, summary=True)
    db.session.commit()
    return len(entries)


def _store_ids() -> list:
    return list(
        db.session.scalars(
            select(User.loja_id).where(User.papel == "gerente_loja", User.loja_id.is_not(None)).distinct()
        )
    )


@jobs.job_kind(KIND, service="stock")
def run_summaries(context: jobs.JobContext) -> dict[str, Any]:
    context.progress(0.1, "preparando o resumo semanal")
    queued = queue_summaries()
    context.progress(0.5, "enviando")
    report = notification_delivery.send_pending()
    return {"resumos": queued, "mensagens": report.messages, "a_repetir": report.retried}


def digest_tick() -> str | None:
    """What the scheduler runs every hour: the week's summaries once they are due."""
    if due_week(utcnow()) is None:
        return None
    job, _ = jobs.enqueue(KIND, {}, actor=None, lock_key=KIND)
    db.session.commit()
    return str(job.id)
