"""A whole batch through the API: ``GET /api/v1/remanejamento/lotes/{lid}`` at ~174,000 recommendations.

Builds, in the PostgreSQL database ``giro_bench_stockfast`` (``BENCH_DATABASE_URL`` to change;
created when missing, its ``public`` schema dropped and recreated with ``--rebuild`` or when
empty), the batch-page network of ``benchmarks/render_pages.py`` with a batch of 17,428
recommendations, and a second batch of 10 times as many (174,280) copied from it in one
``INSERT ... SELECT``. Then, for each batch and each run, it starts gunicorn with one sync worker,
warms the worker up with a small request, and reads the whole batch over HTTP as a client would,
printing:

- the time to the first byte (headers) and to the last byte, and the body's size;
- the CPU seconds the worker spent on the request (on PostgreSQL the database writes each
  recommendation's JSON, ``schemas.fast.sql_json_object``, and the worker joins the text;
  the rest of the time is PostgreSQL's and the client's);
- the worker's peak resident memory (``VmHWM`` of ``/proc/<pid>/status``) before the request
  and after it: the growth is what answering the batch cost in memory.

Each run is a fresh worker, so each peak is that run's own. min/median/max of the runs are
printed with the load average. Target: the 174,280 batch's last byte in under 2 s, and a
worker peak that does not grow with the batch (the same at 17,428 and at 174,280).
The floor is PostgreSQL's own time to write the rows: ``COPY (<the same SELECT>) TO STDOUT``
with psql into /dev/null took 2.8-3.5 s at load 3.7 on the 2-core machine (about 1.0 s
of the backend's CPU), the plain columns 2.0-2.4 s.

    .venv/bin/python benchmarks/whole_batch.py [--runs 3] [--rebuild]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.render_pages import PASSWORD, _build, _reset_postgres  # noqa: E402

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/giro_bench_stockfast"
BASE_RECS = 17_428
COPIES = 10
TARGET_S = 2.0


def _ensure_database(url: str) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    name = make_url(url).database
    admin = make_url(url).set(database="postgres").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def _batches(url: str) -> dict[int, str] | None:
    """``{recommendations: batch id}`` of a database already built, else None."""
    import psycopg

    try:
        with psycopg.connect(url) as conn:
            rows = conn.execute("SELECT lote_id, count(*) FROM recomendacoes GROUP BY lote_id").fetchall()
    except psycopg.Error:
        return None
    found = {count: str(lote_id) for lote_id, count in rows}
    return found if set(found) == {BASE_RECS, BASE_RECS * COPIES} else None


def build(url: str) -> dict[int, str]:
    import flask_migrate
    from sqlalchemy import text

    from app import create_app
    from extensions import db
    from models.stock_batches import Lote, Recomendacao
    from services.stock.batches import iso_week

    _reset_postgres(url)
    app = create_app({"SQLALCHEMY_DATABASE_URI": url, "ARGON2_TIME_COST": 1, "ARGON2_MEMORY_COST": 1024})
    t0 = time.perf_counter()
    with app.app_context():
        flask_migrate.upgrade(revision="heads")
        small, _email = _build(BASE_RECS)
        base = db.session.get(Lote, small)
        semana, inicio, fim = iso_week(base.data.replace(day=base.data.day - 7))
        big = Lote(semana=semana, inicio=inicio, fim=fim, data=inicio, geracoes=1)
        db.session.add(big)
        db.session.flush()
        copied = [
            c.name for c in Recomendacao.__table__.columns if c.name not in ("id", "lote_id", "posicao")
        ]
        names = ", ".join(copied)
        db.session.execute(
            text(
                f"INSERT INTO recomendacoes (id, lote_id, posicao, {names}) "
                f"SELECT gen_random_uuid(), :big, posicao + k * :n, {names} "
                "FROM recomendacoes CROSS JOIN generate_series(0, :last) AS k WHERE lote_id = :small"
            ),
            {"big": big.id, "n": BASE_RECS, "last": COPIES - 1, "small": small},
        )
        db.session.commit()
        with db.engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql("VACUUM ANALYZE")
        found = {BASE_RECS: small, BASE_RECS * COPIES: str(big.id)}
    print(f"built batches of {BASE_RECS:,} and {BASE_RECS * COPIES:,} in {time.perf_counter() - t0:.1f} s")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cpu_s(pid: int) -> float:
    """User plus system CPU seconds the process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM")


class Server:
    """gunicorn with one sync worker on a free port, as deployed (``gunicorn.conf.py``)."""

    def __init__(self, url: str, metrics_dir: str):
        self.port = _free_port()
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "PROMETHEUS_MULTIPROC_DIR": metrics_dir,
            "LOG_LEVEL": "WARNING",
            "SMTP_HOST": "",
        }
        self.process = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "gunicorn"),
                "-c",
                str(ROOT / "gunicorn.conf.py"),
                "--workers",
                "1",
                "--worker-class",
                "sync",
                "--timeout",
                "300",
                "--bind",
                f"127.0.0.1:{self.port}",
                "app:create_app()",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                if self.request("GET", "/health")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.stop()
                raise RuntimeError("gunicorn did not start")
            time.sleep(0.2)
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split()
        self.worker = int(children[0])

    def request(self, method: str, path: str, body: dict | None = None, headers: dict | None = None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        try:
            payload = None if body is None else json.dumps(body)
            all_headers = {"Content-Type": "application/json", **(headers or {})}
            conn.request(method, path, body=payload, headers=all_headers)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def timed_read(self, path: str, headers: dict) -> tuple[float, float, bytes]:
        """Seconds to the headers and to the last byte, and the body."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        try:
            start = time.perf_counter()
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            first = time.perf_counter() - start
            assert response.status == 200, response.status
            parts = []
            while block := response.read(1 << 16):
                parts.append(block)
            return first, time.perf_counter() - start, b"".join(parts)
        finally:
            conn.close()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def run_once(url: str, metrics_dir: str, lote_id: str, expected: int) -> dict:
    server = Server(url, metrics_dir)
    try:
        status, body = server.request(
            "POST", "/api/v1/auth/login", {"email": "planner@bench.test", "senha": PASSWORD}
        )
        assert status == 200, body
        headers = {"Authorization": f"Bearer {orjson.loads(body)['accessToken']}"}
        # Warm-up: code imported, statements compiled, a connection open; not the whole batch.
        warm = f"/api/v1/remanejamento/lotes/{lote_id}/recomendacoes?limite=50"
        assert server.request("GET", warm, headers=headers)[0] == 200
        before, cpu = _peak_kb(server.worker), _cpu_s(server.worker)
        first, last, payload = server.timed_read(f"/api/v1/remanejamento/lotes/{lote_id}", headers)
        after, cpu = _peak_kb(server.worker), _cpu_s(server.worker) - cpu
    finally:
        server.stop()
    count = len(orjson.loads(payload)["recomendacoes"])
    assert count == expected, (count, expected)
    return {
        "first": first,
        "last": last,
        "mb": len(payload) / 1e6,
        "before": before / 1024,
        "after": after / 1024,
        "cpu": cpu,
    }


def _spread(values: list[float], unit: str, digits: int = 2) -> str:
    return (
        "/".join(f"{v:.{digits}f}" for v in (min(values), statistics.median(values), max(values)))
        + f" {unit}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rebuild", action="store_true", help="rebuild the data even if present")
    args = parser.parse_args()
    url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
    _ensure_database(url)
    batches = None if args.rebuild else _batches(url)
    if batches is None:
        batches = build(url)
    print(f"load average before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    worst = 0.0
    peaks: dict[int, list[float]] = {}
    with tempfile.TemporaryDirectory() as metrics_dir:
        for size in sorted(batches):
            runs = [run_once(url, metrics_dir, batches[size], size) for _ in range(args.runs)]
            lasts = [r["last"] for r in runs]
            peaks[size] = [r["after"] for r in runs]
            print(
                f"{size:>7,} recommendations, {runs[0]['mb']:.1f} MB body (min/median/max of {args.runs}): "
                f"first byte {_spread([r['first'] for r in runs], 's', 3)}, last byte {_spread(lasts, 's')}, "
                f"worker CPU {_spread([r['cpu'] for r in runs], 's')}; "
                f"worker peak RSS {_spread([r['before'] for r in runs], 'MB', 0)} before, "
                f"{_spread(peaks[size], 'MB', 0)} after"
            )
            if size == max(batches):
                worst = max(lasts)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    small, big = min(peaks), max(peaks)
    growth = statistics.median(peaks[big]) - statistics.median(peaks[small])
    print(
        f"target: last byte < {TARGET_S} s at {big:,}: {'met' if worst < TARGET_S else 'NOT met'} "
        f"(slowest {worst:.2f} s); worker peak at {big:,} minus at {small:,}: {growth:+.0f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
