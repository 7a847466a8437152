"""A week's batch generated as a job, split into product partitions computed in parallel.

The engine plans every product on its own once the demand is estimated, with
one exception: a shipment's cost (rules ``custoEnvio``/``custoKm``) is shared by
the items on its route, so a route opened for one product makes it cheaper for
the others. The demand estimate pools the whole network (store levels, prior
shapes, trends) and is made once, before splitting. So a generation job:

1. **prepares** (one worker): reads the network, estimates the demand for all
   of it, and writes each partition's slice of the arrays (its products' items,
   with their demand) to the spool directory ``JOBS_SPOOL_DIR``;
2. **computes** each partition (any worker, on any host that sees the spool):
   ``engine.recommend`` on the slice with the demand given, its output written
   to the spool atomically (a temporary file renamed), so a partition killed
   half way leaves nothing and simply runs again; a finished one is not redone;
3. **merges** (one worker, once every partition is done): puts the outputs
   back in the engine's global order and writes the batch and the job's
   ``done`` in ONE transaction. A batch is therefore never half-written: a
   worker killed at any point leaves either no change or the whole batch.

Without shipping costs the result is the batch a single ``engine.recommend``
call gives (a test compares them); with them, a route's cost is shared by the
items of one partition only, so a partitioned batch may drop a few lots that
would have shared a route opened in another partition (it never ships a lot
that does not pay for itself). Small networks run as one partition
(``JOBS_PARTITION_CELLS``). On RQ the partitions are queued jobs and the merge a job
depending on all of them; without Redis they run one after the other in the
job's thread. Partitions and the merge are retried when their worker dies.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import time
import uuid
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
from flask import current_app

from extensions import db
from models.stock import RegrasRemanejamento
from services import job_queue, jobs
from services.clock import today
from services.stock.access import ensure_stock_access
from services.stock.batches import iso_week
from services.stock.engine_contract import EngineInput, EngineOutput, EngineRules, Network
from services.stock.generation import write_batch
from services.stock.metrics import risk_figures
from services.stock.recommendations import newest_lote
from services.stock.rules import engine_rules, get_rules, next_due
from services.stock.snapshot import read_inputs

KIND = "lote"
_OUTPUT_ARRAYS = (
    "origin",
    "dest",
    "item",
    "quantity",
    "score",
    "priority",
    "days_to_stockout",
    "origin_stock",
    "dest_stock",
    "origin_daily_sales",
    "dest_daily_sales",
    "distance_km",
    "in_campaign",
    "expected_gain",
)
# Share of the progress bar each phase fills.
PREPARED, COMPUTED = 0.25, 0.9


def lock_key(on: date) -> str:
    return f"lote:{iso_week(on)[0]}"


def spool(job_id: uuid.UUID) -> Path:
    return jobs.spool_dir(job_id)


def partition_count(n_nodes: int, n_items: int, requested: int | None = None) -> int:
    """How many partitions: ``JOBS_PARTITION_CELLS`` cells each, at most ``JOBS_MAX_PARTITIONS``."""
    if requested:
        return max(1, int(requested))
    cells = max(n_nodes * n_items, 1)
    target = current_app.config["JOBS_PARTITION_CELLS"]
    return max(1, min(current_app.config["JOBS_MAX_PARTITIONS"], math.ceil(cells / target)))


def split_products(item_product: np.ndarray, n_products: int, parts: int) -> list[np.ndarray]:
    """Products in ``parts`` groups of about as many items each (consecutive indexes, so the
    merged output keeps the engine's item order)."""
    sizes = np.bincount(np.asarray(item_product, dtype=np.int64), minlength=n_products)
    bounds = np.searchsorted(np.cumsum(sizes), np.linspace(0, sizes.sum(), parts + 1)[1:-1], side="right")
    groups = np.split(np.arange(n_products), bounds)
    return [g for g in groups if g.size] or [np.arange(n_products)]


def slice_inputs(inputs: EngineInput, products: np.ndarray) -> tuple[EngineInput, np.ndarray]:
    """The engine's input restricted to ``products``; returns it and the global index of each item."""
    item_product = np.asarray(inputs.item_product, dtype=np.int64)
    items = np.flatnonzero(np.isin(item_product, products))
    remap = np.full(inputs.product_blocked.shape[0], -1, dtype=np.int64)
    remap[products] = np.arange(products.shape[0])
    part = dataclasses.replace(
        inputs,
        product_blocked=inputs.product_blocked[products],
        product_brand=inputs.product_brand[products],
        product_category=inputs.product_category[products],
        item_product=remap[item_product[items]].astype(np.int32),
        item_size_pos=inputs.item_size_pos[items],
        stock=inputs.stock[:, items],
        sales=inputs.sales[:, items],
        sales_recent=inputs.sales_recent[:, items],
        campaign=inputs.campaign[:, products],
        last_sale_age=None if inputs.last_sale_age is None else inputs.last_sale_age[:, items],
        receipt_out_days=None if inputs.receipt_out_days is None else inputs.receipt_out_days[:, items],
        receipt_out_recent=None if inputs.receipt_out_recent is None else inputs.receipt_out_recent[:, items],
        received=None if inputs.received is None else inputs.received[:, items],
        sent=None if inputs.sent is None else inputs.sent[:, items],
        last_sent_age=None if inputs.last_sent_age is None else inputs.last_sent_age[:, items],
        in_transit=None if inputs.in_transit is None else inputs.in_transit[:, items],
        # the demand is estimated once on the whole network and handed to each partition
        estimate_history=None,
        outcomes=None,
    )
    return part, items


def _save(path: Path, **arrays: Any) -> None:
    """Write an .npz atomically: a reader sees the whole file or none."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as handle:
        np.savez(handle, **arrays)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


_SEP = "\x1f"  # unit separator: never in a justification (control characters are refused)


def _pack(texts: list[str]) -> np.ndarray:
    """Strings as one UTF-8 byte array: a fixed-width unicode array would pad every
    justification to the longest one, several GB on a large network."""
    return np.frombuffer(_SEP.join(texts).encode(), dtype=np.uint8)


def _unpack(packed: np.ndarray, count: int) -> list[str]:
    return packed.tobytes().decode().split(_SEP) if count else []


def _load(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {name: data[name] for name in data.files}


# ---------------------------------------------------------------------------
# Asking


def request_generation(
    on: date, *, actor, cadence: bool = False, partitions: int | None = None, dispatch: bool = True
):
    """Queue the generation of ``on``'s week (or, with ``cadence``, only if one is due). Flushes.

    Returns ``(job, created)``: a generation of that week already queued or running is
    returned instead of a second one. A person must be a planner or an admin."""
    if actor is not None:
        ensure_stock_access(actor, "admin", "planejador")
    params: dict[str, Any] = {"data": on.isoformat(), "cadencia": cadence}
    if partitions:
        params["particoes"] = int(partitions)
    return jobs.enqueue(KIND, params, actor=actor, lock_key=lock_key(on), dispatch=dispatch)


def cadence_tick() -> str | None:
    """What the scheduler runs every hour: queue a generation when the cadence says one is due."""
    ref = today()
    if ref < next_due(get_rules().cadence, newest_lote(), ref):
        db.session.rollback()
        return None
    job, _ = request_generation(ref, actor=None, cadence=True)
    db.session.commit()
    return str(job.id)


# ---------------------------------------------------------------------------
# 1. prepare


@jobs.job_kind(KIND, service="stock", stock_readers=("admin", "planejador"))
def prepare(context: jobs.JobContext) -> Any:
    """Step 1: unless the cadence says no batch is due, write the spool, then compute the
    partitions here, or queue them for every worker when this runs on one."""
    on = date.fromisoformat(context.params["data"])
    context.progress(0.02, "lendo a rede")
    rules = get_rules()
    if context.params.get("cadencia") and on < next_due(rules.cadence, newest_lote(), on):
        return {"gerado": False, "proximo_lote": next_due(rules.cadence, newest_lote(), on).isoformat()}
    requester = context.requester()
    if requester is not None:
        ensure_stock_access(requester, "admin", "planejador")
    parts = _write_spool(context, on, rules)
    context.progress(PREPARED, "1 partição a calcular" if parts == 1 else f"{parts} partições a calcular")
    if _distributed():
        _queue_steps(context, parts)
        return jobs.CONTINUES
    for index in range(parts):
        compute(context, index)
    return merge(context)


def _write_spool(context: jobs.JobContext, on: date, rules: RegrasRemanejamento) -> int:
    """Read the network and estimate its demand once, then write each partition's inputs and
    the network's ``network.npz`` (ids, risk figures, the batch's date, rules and timings) to
    the job's spool. Returns how many partitions."""
    from services.stock import engine  # imported late: the engine is a separate, heavy module

    started = time.perf_counter()
    inputs, net = read_inputs(on, rules)
    rules_used = dataclasses.asdict(engine_rules(rules))
    read_seconds = time.perf_counter() - started
    # Everything is read: end the transaction (on SQLite it holds the one write lock).
    db.session.commit()
    context.progress(0.15, "estimando a demanda")
    demand = engine.estimate_demand(inputs)
    risk = risk_figures(inputs)
    groups = _product_groups(inputs, context.params.get("particoes"))
    folder = spool(context.job_id)
    shutil.rmtree(folder, ignore_errors=True)  # a prepare that died half way left files behind
    folder.mkdir(parents=True, exist_ok=True)
    write_partitions(folder, inputs, demand, groups)
    meta = {
        "data": on.isoformat(),
        "rules": rules_used,
        "parts": len(groups),
        "read": read_seconds,
        "prepare": time.perf_counter() - started,
    }
    _save_network(folder / "network.npz", net, risk, meta)
    return len(groups)


def _product_groups(inputs: EngineInput, requested: int | None) -> list[np.ndarray]:
    """The products of each partition (``requested`` partitions, or as many as the network's size
    asks for); a network without items is one partition."""
    n_nodes, n_items = inputs.stock.shape
    parts = partition_count(n_nodes, n_items, requested) if n_items else 1
    return split_products(inputs.item_product, inputs.product_blocked.shape[0], parts)


def _save_network(path: Path, net: Network, risk: tuple[int, ...], meta: dict[str, Any]) -> None:
    """What the merge needs besides the partitions' outputs (read back by ``merge``)."""
    _save(
        path,
        node_ids=np.array([str(i) for i in net.node_ids]),
        node_is_cd=net.node_is_cd,
        product_ids=np.array([str(i) for i in net.product_ids]),
        product_cor=np.array(net.product_cor, dtype=str),
        item_product=net.item_product,
        item_size=np.array(net.item_size, dtype=str),
        brands=np.array(net.brands, dtype=str),
        categories=np.array(net.categories, dtype=str),
        risk=np.array(risk, dtype=np.int64),
        meta=np.array(json.dumps(meta)),
    )


def _queue_steps(context: jobs.JobContext, parts: int) -> None:
    """Each partition a job of its own on RQ, and the merge a job depending on all of them."""
    computes = [
        job_queue.enqueue_rq(
            "services.jobs.run_step",
            str(context.job_id),
            "services.stock.partitions:compute",
            index,
            rq_id=f"giro-{context.job_id}-p{index}-a{context.attempt}",
        )
        for index in range(parts)
    ]
    job_queue.enqueue_rq(
        "services.jobs.run_step",
        str(context.job_id),
        "services.stock.partitions:merge",
        rq_id=f"giro-{context.job_id}-merge-a{context.attempt}",
        depends_on=computes,
    )


def _distributed() -> bool:
    """On an RQ worker with Redis up, partitions go back to the queue for every worker to take."""
    from rq import get_current_job

    return get_current_job() is not None and bool(job_queue.redis_ok())


# ---------------------------------------------------------------------------
# 2. compute one partition


def compute(context: jobs.JobContext, index: int) -> Any:
    folder = spool(context.job_id)
    if compute_file(folder, index) is None:
        return jobs.CONTINUES  # done by an earlier attempt
    parts = json.loads(str(_load(folder / "network.npz")["meta"]))["parts"]
    share = int((COMPUTED - PREPARED) * 100 / parts)
    jobs.write_progress(context.job_id, 0, f"partição {index + 1} de {parts} calculada", add=share)
    return jobs.CONTINUES


def compute_file(folder: Path, index: int) -> float | None:
    """Compute partition ``index`` of the spool ``folder`` into ``out-{index}.npz``; returns the
    engine's seconds, or None when an earlier attempt already wrote it. No Flask, no database:
    the benchmark runs it in plain processes."""
    from services.stock import engine

    target = folder / f"out-{index}.npz"
    if target.exists():
        return None
    meta = json.loads(str(_load(folder / "network.npz")["meta"]))
    data = _load(folder / f"in-{index}.npz")
    # absent from partitions written before they existed
    dispersion, run_effect = data.pop("dispersion", None), data.pop("run_effect", None)
    items = data.pop("items")
    demand = engine.Demand(data.pop("rate"), data.pop("alive"), dispersion, run_effect)
    data["history_days"] = int(data["history_days"])
    part = EngineInput(**data)
    started = time.perf_counter()
    out = engine.recommend(part, EngineRules(**meta["rules"]), demand=demand)
    justification = _pack(out.justification)  # the texts are built on demand: time them too
    seconds = time.perf_counter() - started
    arrays = {name: getattr(out, name) for name in _OUTPUT_ARRAYS}
    arrays["item"] = items[out.item].astype(np.int32)  # back to the network's item indexes
    _save(target, justification=justification, seconds=np.array(seconds), **arrays)
    return seconds


def write_partitions(folder: Path, inputs: EngineInput, demand: Any, groups: list[np.ndarray]) -> None:
    """Each partition's slice of the inputs, with its demand, as ``in-{i}.npz`` (optional
    inputs that are None are left out: they default to None when read back)."""
    for index, products in enumerate(groups):
        part, items = slice_inputs(inputs, products)
        fields = {
            f.name: value for f in dataclasses.fields(part) if (value := getattr(part, f.name)) is not None
        }
        _save(
            folder / f"in-{index}.npz",
            items=items,
            rate=demand.rate[:, items],
            alive=demand.alive[:, items],
            **({} if demand.dispersion is None else {"dispersion": demand.dispersion[:, items]}),
            **({} if demand.run_effect is None else {"run_effect": demand.run_effect[items]}),
            **fields,
        )


# ---------------------------------------------------------------------------
# 3. merge and write once


def merged_output(folder: Path, parts: int) -> tuple[EngineOutput, float]:
    """Every partition's output in the order one engine call gives: priority, score, destination,
    item, origin. Returns it and the compute seconds summed over partitions."""
    outputs = [_load(folder / f"out-{index}.npz") for index in range(parts)]
    columns = {name: np.concatenate([o[name] for o in outputs]) for name in _OUTPUT_ARRAYS}
    justification: list[str] = []
    for o in outputs:
        justification += _unpack(o["justification"], o["origin"].shape[0])
    priority = columns["priority"]
    rank = np.where(priority == "alta", 0, np.where(priority == "media", 1, 2)).astype(np.int64)
    order = np.lexsort((columns["origin"], columns["item"], columns["dest"], -columns["score"], rank))
    ordered = {name: values[order] for name, values in columns.items()}
    out = EngineOutput(**ordered, justification=[justification[i] for i in order.tolist()])
    return out, float(sum(float(o["seconds"]) for o in outputs))


def merge(context: jobs.JobContext) -> dict[str, Any]:
    folder = spool(context.job_id)
    stored = _load(folder / "network.npz")
    meta = json.loads(str(stored["meta"]))
    missing = [i for i in range(meta["parts"]) if not (folder / f"out-{i}.npz").exists()]
    if missing:
        raise RuntimeError(f"partitions {missing} have no output")
    jobs.write_progress(context.job_id, int(COMPUTED * 100), "gravando o lote")
    out, compute_seconds = merged_output(folder, meta["parts"])
    net = Network(
        node_ids=[uuid.UUID(i) for i in stored["node_ids"].tolist()],
        node_is_cd=stored["node_is_cd"],
        product_ids=[uuid.UUID(i) for i in stored["product_ids"].tolist()],
        product_cor=stored["product_cor"].tolist(),
        item_product=stored["item_product"],
        item_size=stored["item_size"].tolist(),
        brands=stored["brands"].tolist(),
        categories=stored["categories"].tolist(),
    )
    on = date.fromisoformat(meta["data"])
    started = time.perf_counter()
    result = write_batch(on, out, net, tuple(int(x) for x in stored["risk"]), user=context.requester())
    write_seconds = time.perf_counter() - started
    from services import ops_metrics

    ops_metrics.batch_generated(meta["prepare"] + compute_seconds + write_seconds)
    # The caller commits the batch and the job's "done" together, then removes the spool.
    return {
        "gerado": True,
        "lote_id": str(result.lote.id),
        "semana": result.lote.semana,
        "data": on.isoformat(),
        "novas": result.novas,
        "mantidas": result.mantidas,
        "substituidas": result.substituidas,
        "regenerado": result.regenerado,
        "particoes": meta["parts"],
        "tempos": {
            "leitura": round(meta["read"], 3),
            "preparo": round(meta["prepare"], 3),
            "calculo": round(compute_seconds, 3),
            "gravacao": round(write_seconds, 3),
        },
    }
