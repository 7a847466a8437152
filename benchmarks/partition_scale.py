"""Partitioned batch generation at scale: 1, 2 and 4 worker processes on one synthetic network.

    .venv/bin/python benchmarks/partition_scale.py [--stores 1000] [--products 5000] [--sizes 8]
                                                   [--workers 1,2,4] [--partitions 16]

Builds a synthetic network (default 1,000 stores + 4 CDs x 5,000 products x 8 sizes: 40 M
cells) with the engine simulator's generator, then runs what the ``lote`` job runs, with the
same functions (``services.stock.partitions``): the global demand estimate, the partition
files in a spool directory, each partition computed by ``compute_file`` in a pool of fresh
worker processes (spawned, as RQ workers are separate processes), and the merge into the
engine's global order. It prints wall time, peak memory per worker and the speed-up over one
worker. The database read and write are not part of it (``benchmarks/batch_scale.py`` measures
those end to end); the network is generated in memory.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.simulate_engine import Shape, build_world
from services.stock import engine, partitions


def _max_rss_mb() -> float:
    """This process's peak resident memory. VmHWM, not ru_maxrss: a spawned worker is forked
    from the coordinator before it execs, and Linux carries ru_maxrss across exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _work(folder: str, index: int) -> tuple[int, float, float]:
    """One partition in a worker process: (pid, engine seconds, the process's peak RSS so far)."""
    seconds = partitions.compute_file(Path(folder), index) or 0.0
    return os.getpid(), seconds, _max_rss_mb()


def _warm(_index: int) -> int:
    return os.getpid()


def run(args: argparse.Namespace) -> None:
    shape = Shape(f"{args.stores}x{args.products}", args.stores, args.cds, args.products, (args.sizes,))
    t0 = time.perf_counter()
    world = build_world(shape, seed=7)
    inputs, rules = world.inputs, world.rules
    del world
    n, k = inputs.stock.shape
    print(
        f"network: {args.stores:,} stores + {args.cds} CDs x {args.products:,} products x {args.sizes} sizes "
        f"= {n * k:,} cells (built in {time.perf_counter() - t0:.1f} s)"
    )

    folder = Path(tempfile.mkdtemp(prefix="giro-partitions-", dir=args.spool))
    try:
        t0 = time.perf_counter()
        rate = engine.estimate_daily_demand(inputs)
        demand_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        groups = partitions.split_products(
            inputs.item_product, inputs.product_blocked.shape[0], args.partitions
        )
        partitions.write_partitions(folder, inputs, rate, groups)
        partitions._save(
            folder / "network.npz",
            meta=np.array(json.dumps({"rules": asdict(rules), "parts": len(groups)})),
        )
        spool_s = time.perf_counter() - t0
        spool_mb = sum(f.stat().st_size for f in folder.glob("in-*.npz")) / 2**20
        del inputs, rate
        print(
            f"prepare: demand estimate {demand_s:.1f} s, {len(groups)} partitions written in {spool_s:.1f} s "
            f"({spool_mb:,.0f} MB of spool); coordinator peak RSS {_max_rss_mb():,.0f} MB"
        )

        results = []
        for workers in args.workers:
            for stale in folder.glob("out-*.npz"):
                stale.unlink()
            context = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
                list(pool.map(_warm, range(workers)))  # start the processes before the clock
                t0 = time.perf_counter()
                done = list(pool.map(_work, [str(folder)] * len(groups), range(len(groups))))
                wall = time.perf_counter() - t0
            peak_by_pid: dict[int, float] = {}
            for pid, _seconds, rss in done:
                peak_by_pid[pid] = max(rss, peak_by_pid.get(pid, 0.0))
            engine_s = sum(seconds for _pid, seconds, _rss in done)
            t0 = time.perf_counter()
            out, _ = partitions.merged_output(folder, len(groups))
            merge_s = time.perf_counter() - t0
            results.append((workers, wall, engine_s, max(peak_by_pid.values()), merge_s, len(out)))

        base = results[0][1]
        print(
            f"\n{'workers':>7} {'wall':>9} {'engine CPU':>11} {'peak/worker':>12} {'merge':>7} {'speed-up':>9}"
        )
        for workers, wall, engine_s, peak, merge_s, count in results:
            print(
                f"{workers:>7} {wall:>8.1f}s {engine_s:>10.1f}s {peak:>10,.0f}MB {merge_s:>6.1f}s "
                f"{base / wall:>8.2f}x   ({count:,} recommendations)"
            )
        load = os.getloadavg()
        print(f"\n{os.cpu_count()} CPUs; load average after the runs {load[0]:.1f}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stores", type=int, default=1000)
    parser.add_argument("--cds", type=int, default=4)
    parser.add_argument("--products", type=int, default=5000)
    parser.add_argument("--sizes", type=int, default=8)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--workers", type=lambda v: [int(x) for x in v.split(",")], default=[1, 2, 4])
    parser.add_argument("--spool", default=None, help="directory for the partition files (default: temp)")
    run(parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
