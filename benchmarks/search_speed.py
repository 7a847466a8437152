"""Search speed: the semantic half's latency at scale and the encoder's indexing throughput.

    .venv/bin/python benchmarks/search_speed.py [--issues 1000000]

Measures, in one process (no database):

- query latency: encoding a query with the built-in encoder fitted on the
  generated project of ``benchmarks/search_quality.py``, then the exact scan
  of ``services.tracker.vector_store`` over ``--issues`` vectors of that
  encoder's width (random unit vectors: the scan's cost does not depend on
  their values), masked to one project of ten; median and p95 of 200 queries;
- indexing: issues encoded per second, one issue at a time (what the ``busca``
  job does after single writes) and in batches of 500 (a backfill).

What it leaves out: the keyword half (a trigram-indexed ``LIKE`` on
PostgreSQL) and the database round trips, so it bounds the hybrid latency from
below; it is not the full 1,000,000-issue PostgreSQL measurement.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_quality import generated

from services.tracker import embeddings
from services.tracker.search_index import embedding_text
from services.tracker.vector_store import OrganizationVectors

QUERIES = ["pagamento duplicado", "etiqeta sem cep", "site demorando", "troca de tamanho", "nota fiscal"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--issues", type=int, default=1_000_000)
    args = parser.parse_args()
    docs, _ = generated(2000)
    texts = [embedding_text(d) for d in docs]
    model = embeddings.fit(texts)
    started = time.perf_counter()
    for text in texts[:300]:
        model.encode([text])
    one = 300 / (time.perf_counter() - started)
    started = time.perf_counter()
    for i in range(0, len(texts), 500):
        model.encode(texts[i : i + 500])
    batched = len(texts) / (time.perf_counter() - started)
    print(f"indexing: {one:.0f} issues/s one at a time, {batched:.0f} issues/s in batches of 500")

    rng = np.random.default_rng(0)
    projects = [uuid.uuid4() for _ in range(10)]
    store = OrganizationVectors((1, None), 0, model.dims)
    chunk = 100_000
    for start in range(0, args.issues, chunk):
        n = min(chunk, args.issues - start)
        block = rng.standard_normal((n, model.dims)).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        store.put([(uuid.uuid4(), projects[i % 10], block[i].tobytes()) for i in range(n)])
    times = []
    for i in range(200):
        q = QUERIES[i % len(QUERIES)]
        started = time.perf_counter()
        vector = model.encode([q])[0]
        store.nearest(vector, {projects[0]}, 200, -1.0)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    print(
        f"semantic query over {args.issues:,} vectors ({model.dims} dims, one project of ten): "
        f"median {statistics.median(times):.1f} ms, p95 {times[int(len(times) * 0.95)]:.1f} ms"
    )
    whole = []
    for i in range(50):
        vector = model.encode([QUERIES[i % len(QUERIES)]])[0]
        started = time.perf_counter()
        store.nearest(vector, set(projects), 200, -1.0)
        whole.append((time.perf_counter() - started) * 1000)
    print(f"  every project (no mask): median {statistics.median(whole):.1f} ms")


if __name__ == "__main__":
    main()
