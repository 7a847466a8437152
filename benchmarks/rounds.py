"""Figures that reproduce: the same measurement in several rounds, reported as min/median/max of
the rounds' medians, with the machine's load beside them."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable


def load_average() -> str:
    return "load average {:.2f} {:.2f} {:.2f} (1, 5, 15 min, {} CPUs)".format(
        *os.getloadavg(), os.cpu_count()
    )


def time_requests(call: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median wall-clock and median CPU milliseconds of this process over ``runs`` calls.

    CPU time is the work of one request without the wait for a busy CPU (on PostgreSQL
    it leaves out the database server's own share)."""
    wall, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        response = call()
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        status = getattr(response, "status_code", 200)
        assert status == 200, status
    return statistics.median(wall), statistics.median(cpu)


def in_rounds(label: str, call: Callable[[], object], runs: int, rounds: int) -> float:
    """Prints min/median/max over ``rounds`` of the per-round medians; returns the median CPU ms."""
    call()  # warm-up: templates compiled, caches filled
    walls, cpus = zip(*(time_requests(call, runs) for _ in range(rounds)), strict=True)
    print(
        f"  {label:<44} wall {min(walls):6.1f}/{statistics.median(walls):6.1f}/{max(walls):6.1f} ms"
        f"  CPU {min(cpus):6.1f}/{statistics.median(cpus):6.1f}/{max(cpus):6.1f} ms"
        f"  (min/median/max of {rounds} rounds' medians, {runs} requests each)"
    )
    return statistics.median(cpus)
