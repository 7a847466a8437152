"""Import 1,000,000 sales rows through ``flask import sales`` on SQLite and PostgreSQL.

Usage::

    .venv/bin/python benchmarks/import_sales.py [--rows 1000000] [--postgres URL | --no-postgres]

Generates stores, products and a sales CSV in a temporary directory, then for
each database: migrates a fresh schema, imports the stores and products, and
times ``flask --app app import sales`` run as its own process (the real CLI
code path, start-up included), first into an empty table and then once more
with the same file (the idempotent re-import: every (day, store) pair is
replaced by identical rows). The PostgreSQL database (default
``giro_bench_import``, create it with ``createdb -h 127.0.0.1 -U postgres
giro_bench_import``) has its ``public`` schema dropped and recreated.
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/giro_bench_import"
SIZES = [str(n) for n in range(34, 44)]


def generate(directory: Path, rows: int) -> dict[str, Path]:
    """stores.csv, products.csv and sales.csv with ``rows`` sales rows on the days before yesterday.

    Like a real sales extract, each (day, store) pair lists only the items that
    sold: 100 stores, 2,000 product x size items, about 110 items per pair.
    """
    n_stores = 100
    n_products = 200
    items = [(f"BENCH-{p:04d}", size) for p in range(n_products) for size in SIZES]
    per_pair = 111
    n_days = -(-rows // (n_stores * per_pair))
    last = date.today() - timedelta(days=2)
    paths = {kind: directory / f"{kind}.csv" for kind in ("stores", "products", "sales")}
    with paths["stores"].open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["codigo", "nome", "cidade", "lat", "lng", "is_cd", "bloqueada"])
        out.writerow(["CD-BENCH", "CD Cajamar", "Cajamar - SP", -23.3556, -46.8769, "true", "false"])
        for s in range(n_stores):
            out.writerow([f"S{s:03d}", f"Loja {s}", "São Paulo - SP", -23.55, -46.63, "false", "false"])
    with paths["products"].open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["sku", "nome", "marca", "categoria", "colecao", "cor", "tamanhos", "imagem"])
        for p in range(n_products):
            out.writerow(
                [
                    f"BENCH-{p:04d}",
                    f"Tênis {p}",
                    "Passo Firme",
                    "Tênis",
                    "Verão 2026",
                    "Preto",
                    "|".join(SIZES),
                    "",
                ]
            )
    written = 0
    with paths["sales"].open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["data", "loja", "sku", "tamanho", "qtd"])
        for d in range(n_days):
            day = (last - timedelta(days=d)).isoformat()
            for s in range(n_stores):
                store = f"S{s:03d}"
                # A stride coprime with len(items) picks distinct items for the pair.
                for k in range(per_pair):
                    if written == rows:
                        return paths
                    sku, size = items[(d * 7 + s * 13 + k * 17) % len(items)]
                    out.writerow([day, store, sku, size, 1 + (d + s + k) % 5])
                    written += 1
    return paths


def flask(url: str, *args: str) -> tuple[float, str]:
    """Run one ``flask --app app`` command against ``url``; (seconds, output)."""
    env = {**os.environ, "DATABASE_URL": url}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"flask {' '.join(args)} failed on {url}:\n{done.stdout}\n{done.stderr}")
    return seconds, done.stdout


def reset_postgres(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS public CASCADE")
        conn.execute("CREATE SCHEMA public")


def run(name: str, url: str, files: dict[str, Path], rows: int) -> list[tuple[str, str, int, float, float]]:
    flask(url, "db", "upgrade", "heads")
    flask(url, "import", "stores", str(files["stores"]))
    flask(url, "import", "products", str(files["products"]))
    results = []
    for label in ("first import", "re-import"):
        seconds, output = flask(url, "import", "sales", str(files["sales"]))
        print(f"[{name} {label}] {output.strip()}", flush=True)
        results.append((name, label, rows, seconds, os.getloadavg()[0]))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--postgres", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_POSTGRES))
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="giro-bench-") as tmp:
        directory = Path(tmp)
        started = time.perf_counter()
        files = generate(directory, args.rows)
        size_mb = files["sales"].stat().st_size / 1e6
        print(
            f"generated {args.rows:,} sales rows ({size_mb:.1f} MB) in {time.perf_counter() - started:.1f} s"
        )

        results = run("sqlite", f"sqlite:///{directory / 'bench.db'}", files, args.rows)
        if not args.no_postgres:
            reset_postgres(args.postgres)
            results += run("postgresql", args.postgres, files, args.rows)

    print()
    print(f"{'database':<12} {'run':<14} {'rows':>10} {'seconds':>9} {'rows/s':>10} {'load avg':>9}")
    for name, label, rows, seconds, load in results:
        print(f"{name:<12} {label:<14} {rows:>10,} {seconds:>9.1f} {rows / seconds:>10,.0f} {load:>9.1f}")
    print("(seconds: wall time of the whole `flask import sales` process, start-up included;")
    print(f" load avg: the machine's 1-minute load average after the run, on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
