"""Building a week's batch: read the network into the engine's arrays, run it, write the batch.

One batch per ISO week. Generating again for a week that already has a batch
refreshes it in place: every recommendation somebody acted on (approved,
executed, refused, vetoed or restored) is kept exactly as it is, the untouched
pending ones are replaced by the new engine output, and a new proposal for the
same origin, destination, product and size as a kept one is dropped. No
decision is ever lost.

Generation runs in the caller's transaction and only flushes: the CLI commits
once at the end, so a failure half way leaves nothing behind. The rules row is
locked for the whole run, which serialises concurrent generations and keeps
the rules from changing under one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

import numpy as np
from sqlalchemy import delete, false, select

from extensions import db
from models.auth import User
from models.base import utcnow
from models.stock_batches import Lote, Recomendacao
from services.clock import today
from services.stock import notifications, storage
from services.stock.access import ensure_stock_access
from services.stock.batches import iso_week
from services.stock.engine_contract import EngineOutput, Network
from services.stock.metrics import risk_figures
from services.stock.recommendations import newest_lote
from services.stock.rules import engine_rules, get_rules, next_due
from services.stock.snapshot import read_inputs

Progress = Callable[[str, float], None]


@dataclass
class GenerationResult:
    lote: Lote
    novas: int  # recommendations written by this run
    mantidas: int  # recommendations somebody acted on, kept as they were
    substituidas: int  # untouched pending ones replaced by this run
    regenerado: bool  # the week already had a batch
    timings: dict[str, float] = field(default_factory=dict)  # seconds per phase: read, compute, write


def _kept_mask(out: EngineOutput, net: Network, skip: set[tuple]) -> np.ndarray:
    """Which output rows to write: those not colliding with a kept (decided) recommendation."""
    keep = np.ones(len(out), dtype=bool)
    if not skip:
        return keep
    products = net.item_product[out.item]
    for m, (o, d, p, k) in enumerate(
        zip(out.origin.tolist(), out.dest.tolist(), products.tolist(), out.item.tolist(), strict=True)
    ):
        if (net.node_ids[o], net.node_ids[d], net.product_ids[p], net.item_size[k]) in skip:
            keep[m] = False
    return keep


def _replace_untouched(lote: Lote) -> tuple[int, list[tuple]]:
    """Delete the week's untouched pending recommendations; returns how many, and the keys of the rest."""
    # The status check re-runs on rows a concurrent decision locked (READ COMMITTED),
    # so a recommendation approved meanwhile is never deleted.
    result = db.session.execute(
        delete(Recomendacao)
        .where(
            Recomendacao.lote_id == lote.id,
            Recomendacao.status == "pendente",
            Recomendacao.vetado == false(),
            Recomendacao.ultima_acao_em.is_(None),
        )
        .execution_options(synchronize_session=False)
    )
    kept = [
        tuple(r)
        for r in db.session.execute(
            select(
                Recomendacao.origem_id,
                Recomendacao.destino_id,
                Recomendacao.produto_id,
                Recomendacao.tamanho,
            ).where(Recomendacao.lote_id == lote.id)
        )
    ]
    return result.rowcount or 0, kept


def write_batch(
    on: date,
    out: EngineOutput,
    net: Network,
    risk: tuple[int, int, int],
    *,
    user: User | None,
    lock_rules: bool = True,
) -> GenerationResult:
    """Write the engine's output as the batch of ``on``'s ISO week (creating or refreshing it). Flushes.

    ``lock_rules`` takes the rules row first, as ``generate`` does for its whole run;
    the partitioned generation (``services.stock.partitions``) writes through here
    once every partition is computed, in one transaction."""
    if lock_rules:
        get_rules(for_update=True)
    semana, inicio, fim = iso_week(on)
    lote = db.session.scalar(select(Lote).where(Lote.semana == semana).with_for_update())
    regenerado = lote is not None
    substituidas, kept_rows = 0, []
    now = utcnow()
    if lote is None:
        lote = Lote(semana=semana, inicio=inicio, fim=fim, data=on, gerado_em=now, geracoes=1)
        lote.criado_por_id = user.id if user is not None else None
        db.session.add(lote)
        db.session.flush()
    else:
        substituidas, kept_rows = _replace_untouched(lote)
        lote.data = on
        lote.gerado_em = now
        lote.geracoes += 1
    lote.tamanhos_em_risco, lote.lojas_em_risco, lote.rupturas = risk
    db.session.flush()
    keep = _kept_mask(out, net, set(kept_rows))
    written = storage.insert_recommendations(out, net, keep, lote.id, on)
    db.session.flush()
    notifications.lote_gerado(lote)
    return GenerationResult(
        lote=lote, novas=written, mantidas=len(kept_rows), substituidas=substituidas, regenerado=regenerado
    )


def generate(on: date, *, user: User | None = None, progress: Progress | None = None) -> GenerationResult:
    """Generate (or refresh) the batch of the ISO week of ``on``. Flushes; the caller commits.

    ``user`` None is the operator (CLI, cron); a person must be a planner or an admin."""
    from services.stock import engine  # imported late: the engine is a separate, heavy module

    if user is not None:
        ensure_stock_access(user, "admin", "planejador")

    report = progress or (lambda _step, _fraction: None)
    timings: dict[str, float] = {}
    rules = get_rules(for_update=True)

    report("leitura", 0.0)
    t0 = time.perf_counter()
    inputs, net = read_inputs(on, rules)
    timings["read"] = time.perf_counter() - t0

    report("calculo", 0.4)
    t0 = time.perf_counter()
    out = engine.recommend(inputs, engine_rules(rules))
    timings["compute"] = time.perf_counter() - t0
    risk = risk_figures(inputs)
    del inputs

    report("gravacao", 0.8)
    t0 = time.perf_counter()
    result = write_batch(on, out, net, risk, user=user, lock_rules=False)
    result.timings = {**timings, "write": time.perf_counter() - t0}
    report("concluido", 1.0)
    return result


def generate_batch(on: date, *, user: User | None = None, progress: Progress | None = None) -> Lote:
    """Generate (or refresh) the batch of the ISO week of ``on`` and return it. The caller commits."""
    return generate(on, user=user, progress=progress).lote


def run_due(
    ref: date | None = None, *, user: User | None = None, progress: Progress | None = None
) -> GenerationResult | None:
    """Generate a batch only when the cadence says one is due; None otherwise. Safe to repeat."""
    ref = ref or today()
    rules = get_rules(for_update=True)  # two cron runs at once: the second waits, then sees it done
    if ref < next_due(rules.cadence, newest_lote(), ref):
        return None
    return generate(ref, user=user, progress=progress)
