"""What-if: the engine run with edited rules, without saving them, compared with the
current batch (the newest one's active recommendations).

The edited rules go through ``rules.update_rules`` (the same checks as saving) inside a
SAVEPOINT that is always rolled back: nothing is stored, and the engine reads the network
exactly as the next generation would with those rules.

Expected extra sales are estimated the same way for both sides, per recommendation, from
the observed daily averages over the engine's horizon (Poisson demand):
E[min(D_dest, stock + q)] - E[min(D_dest, stock)] minus what the origin stops selling,
E[min(D_orig, stock)] - E[min(D_orig, stock - q)]. Recommendations are taken one at a
time, so the figure is an estimate to compare rule sets, not a forecast.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from datetime import date
from typing import Any

import numpy as np
from sqlalchemy import select

from extensions import db
from models.auth import User
from models.stock_batches import Recomendacao
from services.clock import today
from services.stock.access import ensure_stock_access
from services.stock.engine_contract import EngineRules
from services.stock.recommendations import active_condition, newest_lote
from services.stock.rules import NovasRegras, engine_rules, get_rules, update_rules
from services.stock.snapshot import read_inputs

# Routes listed in the difference, the largest changes first.
ROUTES_LISTED = 10


def _extra_sales(qty, dest_stock, dest_daily, origin_stock, origin_daily, horizon: int) -> float:
    from services.stock.engine import expected_sales  # the engine is a heavy module, loaded late

    q = np.asarray(qty, dtype=np.float64)
    ds, os_ = np.asarray(dest_stock, dtype=np.float64), np.asarray(origin_stock, dtype=np.float64)
    mu_d = np.asarray(dest_daily, dtype=np.float64) * horizon
    mu_o = np.asarray(origin_daily, dtype=np.float64) * horizon
    gain = expected_sales(ds + q, mu_d) - expected_sales(ds, mu_d)
    loss = expected_sales(os_, mu_o) - expected_sales(np.maximum(os_ - q, 0), mu_o)
    return float(np.sum(gain - loss)) if q.size else 0.0


def _summary(units_by_route: Counter, recomendacoes: int, extra: float) -> dict:
    lojas = {node for route in units_by_route for node in route}
    return {
        "recomendacoes": recomendacoes,
        "unidades": int(sum(units_by_route.values())),
        "vendas_extras": round(extra, 1),
        "lojas": len(lojas),
        "rotas": len(units_by_route),
    }


def _current(horizon: int) -> tuple[dict, Counter, Any]:
    lote = newest_lote()
    routes: Counter = Counter()
    if lote is None:
        return _summary(routes, 0, 0.0), routes, None
    rows = db.session.execute(
        select(
            Recomendacao.origem_id,
            Recomendacao.destino_id,
            Recomendacao.quantidade,
            Recomendacao.estoque_destino,
            Recomendacao.venda_media_destino,
            Recomendacao.estoque_origem,
            Recomendacao.venda_media_origem,
        ).where(Recomendacao.lote_id == lote.id, active_condition())
    ).all()
    for r in rows:
        routes[(r.origem_id, r.destino_id)] += r.quantidade
    columns = list(zip(*rows, strict=True)) if rows else [[]] * 7
    extra = _extra_sales(columns[2], columns[3], columns[4], columns[5], columns[6], horizon)
    return _summary(routes, len(rows), extra), routes, lote


def simulate(body: NovasRegras, user: User, on: date | None = None) -> dict:
    """Run the engine with ``body`` (the full edited rules, as ``update_rules`` takes them) without
    saving it; the simulated batch's figures next to the current batch's and their
    difference, with the routes that change most. Only a stock ``admin``."""
    from services.stock import engine  # the engine is a heavy module, loaded late

    ensure_stock_access(user, "admin")
    started = time.perf_counter()
    on = on or today()
    savepoint = db.session.begin_nested()
    try:
        update_rules(body, user)
        edited = get_rules()
        rules: EngineRules = engine_rules(edited)
        inputs, net = read_inputs(on, edited)
        out = engine.recommend(inputs, rules)
    finally:
        savepoint.rollback()
    horizon = rules.horizon_days
    routes: Counter = Counter()
    for o, d, q in zip(out.origin.tolist(), out.dest.tolist(), out.quantity.tolist(), strict=True):
        routes[(net.node_ids[o], net.node_ids[d])] += q
    extra = _extra_sales(
        out.quantity,
        out.dest_stock,
        out.dest_daily_sales,
        out.origin_stock,
        out.origin_daily_sales,
        horizon,
    )
    simulado = _summary(routes, len(out), extra)
    atual, current_routes, lote = _current(horizon)
    changes = {
        route: routes.get(route, 0) - current_routes.get(route, 0)
        for route in set(routes) | set(current_routes)
        if routes.get(route, 0) != current_routes.get(route, 0)
    }
    top = sorted(changes.items(), key=lambda item: (-abs(item[1]), str(item[0])))[:ROUTES_LISTED]
    nodes_now = {n for r in current_routes for n in r}
    nodes_sim = {n for r in routes for n in r}
    return {
        "lote_atual": lote,
        "atual": atual,
        "simulado": simulado,
        "diferenca": {key: round(simulado[key] - atual[key], 1) for key in simulado},
        "rotas": [
            {
                "origem_id": o,
                "destino_id": d,
                "atual": current_routes.get((o, d), 0),
                "simulado": routes.get((o, d), 0),
            }
            for (o, d), _delta in top
        ],
        "rotas_novas": len(set(routes) - set(current_routes)),
        "rotas_removidas": len(set(current_routes) - set(routes)),
        "lojas_novas": len(nodes_sim - nodes_now),
        "lojas_removidas": len(nodes_now - nodes_sim),
        "segundos": round(time.perf_counter() - started, 2),
    }


def loja_names(ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
    from models.stock import Loja

    if not ids:
        return {}
    return dict(db.session.execute(select(Loja.id, Loja.nome).where(Loja.id.in_(ids))).all())
