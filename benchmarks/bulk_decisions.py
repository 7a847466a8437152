"""A decision on every recommendation a filter matches: approve 2,000 in one request.

Usage::

    .venv/bin/python benchmarks/bulk_decisions.py [--recs 2000] [--runs 3] [--postgres URL | --no-postgres]

Builds, on a fresh database, the network of ``render_pages.py`` with one batch of
``--recs`` pending recommendations and a planner, signs the planner in, and times
(in-process through the WSGI app) the batch page's "select all matching → Aprovar":
``POST /lotes/<id>/acoes`` with ``todas=1``, which locks, checks, updates and logs
every recommendation in one transaction and renders the table and its toast. Between
runs the batch is put back to pending (not timed). It also times the search
(``?q=``) the planner narrows the batch with. Each figure is printed as min, median and
max of ``--runs`` runs. Target: the approval of 2,000 under 2 s on PostgreSQL.

The PostgreSQL database (default ``giro_bench_batchpage``; ``createdb -h 127.0.0.1 -U
postgres giro_bench_batchpage``) has its ``public`` schema dropped and recreated.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.render_pages import PASSWORD, _build, _reset_postgres  # noqa: E402

DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/giro_bench_batchpage"
TARGET_S = 2.0


def _figures(label: str, seconds: list[float]) -> None:
    print(
        f"  {label:<52} min {min(seconds):6.3f} s  median {statistics.median(seconds):6.3f} s"
        f"  max {max(seconds):6.3f} s"
    )


def bench(url: str, n_recs: int, runs: int) -> float:
    """Times the bulk approval on the database at ``url``; returns its median in seconds."""
    import flask_migrate
    from sqlalchemy import delete, func, select, update

    from app import create_app
    from extensions import db
    from models.stock_batches import AcaoRecomendacao, Recomendacao

    app = create_app(
        {"SQLALCHEMY_DATABASE_URI": url, "ARGON2_TIME_COST": 1, "ARGON2_MEMORY_COST": 1024, "SMTP_HOST": None}
    )
    with app.app_context():
        flask_migrate.upgrade(revision="heads")
        lote_id, email = _build(n_recs, all_pending=True)
        db.session.remove()
    client = app.test_client()
    assert client.post("/login", data={"email": email, "senha": PASSWORD}).status_code == 302
    csrf = client.get_cookie("csrf_access_token").value
    headers = {"HX-Request": "true", "X-CSRF-TOKEN": csrf}
    page = f"/lotes/{lote_id}"
    approve, search = [], []
    for _ in range(runs):
        with app.app_context():
            db.session.execute(update(Recomendacao).values(status="pendente", ultima_acao_em=None))
            db.session.execute(delete(AcaoRecomendacao))
            db.session.commit()
        start = time.perf_counter()
        response = client.post(f"{page}/acoes", data={"acao": "aprovar", "todas": "1"}, headers=headers)
        approve.append(time.perf_counter() - start)
        assert response.status_code == 200, response.status_code
        assert f"{n_recs:,}".replace(",", ".") + " aprovadas" in response.get_data(as_text=True)
        start = time.perf_counter()
        response = client.get(f"{page}?q=modelo 01", headers={"HX-Request": "true"})
        search.append(time.perf_counter() - start)
        assert response.status_code == 200
    with app.app_context():
        changed = db.session.scalar(select(func.count()).where(Recomendacao.status == "aprovada"))
        logged = db.session.scalar(select(func.count()).select_from(AcaoRecomendacao))
    print(f"  {n_recs} pending recommendations; last run: {changed} approved, {logged} actions logged")
    _figures("POST select all matching → approve (whole request)", approve)
    _figures("GET table searched by product (q=modelo 01)", search)
    median = statistics.median(approve)
    print(
        f"  approval median {median:.3f} s vs target {TARGET_S:.0f} s: {'OK' if median < TARGET_S else 'OVER'}"
    )
    return median


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recs", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    medians = []
    with tempfile.TemporaryDirectory() as tmp:
        print("SQLite")
        medians.append(bench(f"sqlite:///{tmp}/bench.db", args.recs, args.runs))
    if not args.no_postgres:
        print("PostgreSQL")
        _reset_postgres(args.postgres)
        medians.append(bench(args.postgres, args.recs, args.runs))
    return 0 if all(m < TARGET_S for m in medians) else 1


if __name__ == "__main__":
    sys.exit(main())
