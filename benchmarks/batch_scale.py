"""Batch generation at the target scale on PostgreSQL: read, compute and write times and peak memory.

Builds (or reuses) a network of 300 nodes (4 CDs, 296 stores), 1,000 products x 6
sizes (1.8 M stock cells) and 91 days of sales (about 9 M rows: the quarter the demand
estimate reads, ``ENGINE_HISTORY_DAYS``) in the dedicated
database ``giro_bench_batches``, then generates one batch in a fresh process and
prints the seconds spent reading the inputs, computing and writing, the total,
the ratio total / read and the peak resident memory of that process.

    createdb -h 127.0.0.1 -U postgres giro_bench_batches
    .venv/bin/python benchmarks/batch_scale.py            # build the data once, then run
    .venv/bin/python benchmarks/batch_scale.py --rebuild  # rebuild the data first
    BENCH_DATABASE_URL=postgresql://... .venv/bin/python benchmarks/batch_scale.py

Targets: total under 20 s, peak RSS under 1.5 GB, total under 2 x read.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import uuid
from datetime import date, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/giro_bench_batches"
CDS, STORES, PRODUCTS, SIZES, DAYS = 4, 296, 1000, ("34", "35", "36", "37", "38", "39"), 91
BATCH_DATE = date(2026, 11, 18)
SEED = 7


def _app(url: str):
    from app import create_app

    return create_app({"SQLALCHEMY_DATABASE_URI": url, "TESTING": False})


BINARY_HEADER = b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8
BINARY_TRAILER = b"\xff\xff"


def _binary_rows(columns: list[np.ndarray]) -> bytes:
    """Tuples of int4 columns in PostgreSQL's binary COPY layout (no header, no trailer)."""
    n = len(columns[0])
    fields = [("n", ">i2")]
    for i in range(len(columns)):
        fields += [(f"l{i}", ">i4"), (f"v{i}", ">i4")]
    rows = np.empty(n, dtype=np.dtype(fields))
    rows["n"] = len(columns)
    for i, col in enumerate(columns):
        rows[f"l{i}"] = 4
        rows[f"v{i}"] = col
    return rows.tobytes()


def _binary_copy(columns: list[np.ndarray]) -> bytes:
    """A whole ``COPY ... FROM STDIN (FORMAT binary)`` payload of int4 columns."""
    return BINARY_HEADER + _binary_rows(columns) + BINARY_TRAILER


def build(url: str) -> None:
    """Recreate the schema through the migrations and load the network with COPY."""
    import flask_migrate
    from sqlalchemy import create_engine, text

    from config import normalize_database_url

    engine = create_engine(normalize_database_url(url), isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    app = _app(url)
    with app.app_context():
        flask_migrate.upgrade(revision="heads")

    rng = np.random.default_rng(SEED)
    t0 = time.perf_counter()
    n_nodes, n_items = CDS + STORES, PRODUCTS * len(SIZES)
    node_ids = [uuid.UUID(bytes=rng.bytes(16), version=4) for _ in range(n_nodes)]
    product_ids = [uuid.UUID(bytes=rng.bytes(16), version=4) for _ in range(PRODUCTS)]
    lat = rng.uniform(-30.0, -8.0, n_nodes)
    lng = rng.uniform(-55.0, -35.0, n_nodes)

    import psycopg

    with psycopg.connect(url) as conn, conn.cursor() as cur:
        with cur.copy("COPY lojas (id, codigo, nome, cidade, lat, lng, is_cd, bloqueada) FROM STDIN") as cp:
            for i, nid in enumerate(node_ids):
                is_cd = i < CDS
                cp.write_row(
                    (
                        nid,
                        f"N{i:04d}",
                        f"{'CD' if is_cd else 'Loja'} {i:04d}",
                        "Cidade",
                        lat[i],
                        lng[i],
                        is_cd,
                        False,
                    )
                )
        with cur.copy(
            "COPY produtos (id, sku, nome, marca, categoria, colecao, cor, tamanhos) FROM STDIN"
        ) as cp:
            for p, pid in enumerate(product_ids):
                cp.write_row(
                    (
                        pid,
                        f"SKU{p:05d}",
                        f"Produto {p:05d}",
                        f"Marca {p % 20:02d}",
                        f"Categoria {p % 10:02d}",
                        "Verão 2026",
                        "Preto",
                        json.dumps(list(SIZES)),
                    )
                )
        cur.execute("CREATE TEMP TABLE bench_nodes (i int4 PRIMARY KEY, id uuid)")
        cur.execute("CREATE TEMP TABLE bench_items (k int4 PRIMARY KEY, produto_id uuid, tamanho text)")
        with cur.copy("COPY bench_nodes (i, id) FROM STDIN") as cp:
            for i, nid in enumerate(node_ids):
                cp.write_row((i, nid))
        with cur.copy("COPY bench_items (k, produto_id, tamanho) FROM STDIN") as cp:
            for p, pid in enumerate(product_ids):
                for s, size in enumerate(SIZES):
                    cp.write_row((p * len(SIZES) + s, pid, size))

        # Demand: store x product x size-curve rates with gamma heterogeneity, ~0.057 units/day a cell.
        size_curve = np.array([0.08, 0.15, 0.25, 0.25, 0.17, 0.10]) * len(SIZES)
        store_f = rng.gamma(4.0, 0.25, STORES)
        product_f = rng.gamma(1.2, 1 / 1.2, PRODUCTS)
        rate = (
            0.057
            * store_f[:, None]
            * np.repeat(product_f, len(SIZES))[None, :]
            * np.tile(size_curve, PRODUCTS)
        )
        stock = np.zeros((n_nodes, n_items), dtype=np.int32)
        stock[:CDS] = rng.poisson(25, (CDS, n_items))
        stock[CDS:] = rng.poisson(np.maximum(rate * 20, 0.3) * rng.uniform(0.2, 2.0, rate.shape))
        ii, kk = np.indices(stock.shape)
        cur.execute("CREATE TEMP TABLE bench_stock (i int4, k int4, q int4)")
        with cur.copy("COPY bench_stock FROM STDIN (FORMAT binary)") as cp:
            cp.write(_binary_copy([ii.ravel(), kk.ravel(), stock.ravel()]))
        cur.execute(
            "INSERT INTO estoque (loja_id, produto_id, tamanho, qtd) "
            "SELECT n.id, it.produto_id, it.tamanho, s.q FROM bench_stock s "
            "JOIN bench_nodes n ON n.i = s.i JOIN bench_items it ON it.k = s.k"
        )
        del ii, kk, stock

        cur.execute("CREATE TEMP TABLE bench_sales (d int4, i int4, k int4, q int4)")
        rows = 0
        with cur.copy("COPY bench_sales FROM STDIN (FORMAT binary)") as cp:
            cp.write(BINARY_HEADER)
            for day in range(1, DAYS + 1):
                q = rng.poisson(rate).astype(np.int32)
                si, sk = np.nonzero(q)
                rows += len(si)
                cp.write(_binary_rows([np.full(len(si), day, np.int32), si + CDS, sk, q[si, sk]]))
            cp.write(BINARY_TRAILER)
        first = BATCH_DATE - timedelta(days=DAYS)
        cur.execute(
            "INSERT INTO vendas (data, loja_id, produto_id, tamanho, qtd) "
            "SELECT %s::date + (s.d - 1), n.id, it.produto_id, it.tamanho, s.q FROM bench_sales s "
            "JOIN bench_nodes n ON n.i = s.i JOIN bench_items it ON it.k = s.k",
            (first,),
        )
        conn.commit()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    print(
        f"built {n_nodes} nodes, {PRODUCTS} products x {len(SIZES)} sizes "
        f"({n_nodes * n_items:,} stock cells), {rows:,} sales rows in {time.perf_counter() - t0:.1f} s"
    )


def has_data(url: str) -> bool:
    import psycopg

    try:
        with psycopg.connect(url) as conn:
            first = conn.execute("SELECT min(data) FROM vendas").fetchone()[0]
            return first is not None and first <= BATCH_DATE - timedelta(days=DAYS)
    except psycopg.Error:
        return False


def run(url: str) -> None:
    """One generation, in this (fresh) process; prints a JSON line of figures."""
    from sqlalchemy import text

    from extensions import db
    from services.stock import generation

    app = _app(url)
    with app.app_context():
        # A fresh week: no earlier batch (a DELETE would leave dead index entries behind).
        db.session.execute(text("TRUNCATE lotes, recomendacoes, acoes_recomendacao CASCADE"))
        db.session.commit()
        t0 = time.perf_counter()
        result = generation.generate(BATCH_DATE)
        t1 = time.perf_counter()
        db.session.commit()
        commit = time.perf_counter() - t1
        total = time.perf_counter() - t0
        timings = result.timings
        print(
            json.dumps(
                {
                    "read_s": round(timings["read"], 2),
                    "compute_s": round(timings["compute"], 2),
                    "write_s": round(timings["write"] + commit, 2),
                    "total_s": round(total, 2),
                    "recommendations": result.novas,
                    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                }
            )
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rebuild", action="store_true", help="rebuild the data set even if present")
    parser.add_argument("--runs", type=int, default=1, help="generations to time (each in a fresh process)")
    parser.add_argument("--run-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
    if args.run_only:
        run(url)
        return
    if args.rebuild or not has_data(url):
        build(url)
    for _ in range(args.runs):
        out = subprocess.run(
            [sys.executable, __file__, "--run-only"],
            capture_output=True,
            text=True,
            check=False,
            env=os.environ,
        )
        if out.returncode != 0:
            sys.exit(out.stderr)
        figures = json.loads(out.stdout.strip().splitlines()[-1])
        ratio = figures["total_s"] / figures["read_s"] if figures["read_s"] else float("inf")
        print(
            f"read {figures['read_s']:.2f} s | compute {figures['compute_s']:.2f} s | "
            f"write {figures['write_s']:.2f} s | total {figures['total_s']:.2f} s | "
            f"total/read {ratio:.2f} | peak RSS {figures['peak_rss_mb']:.0f} MB | "
            f"{figures['recommendations']:,} recommendations"
        )
        ok = figures["total_s"] < 20 and figures["peak_rss_mb"] < 1536 and ratio < 2
        print("targets (total < 20 s, RSS < 1.5 GB, total < 2 x read):", "met" if ok else "NOT met")


if __name__ == "__main__":
    main()
