"""The outcome metric (ESI against ASI) and the learning step that reads it, at scale.

Usage::

    .venv/bin/python benchmarks/outcome.py [--transfers 20000] [--runs 3]
        [--database-url postgresql://postgres@127.0.0.1:5432/giro_bench_outcome] [--sqlite]

Builds, on a fresh database, 300 stores and a CD, 1,000 products × 6 sizes, eight weekly
batches over the last 56 days holding ``--transfers`` executed transfers (90 % received two
days after execution), the daily sales of every destination cell over the last 70 days and as
many rows again of other cells. Then times, through the WSGI app with a planner's token:
``GET /metricas/resultado`` grouped by batch and by route, and ``GET /metricas/aprendizado``
(decisions and outcomes of the 182-day window: the same work a generation's learning factors
do). Each figure is min, median and max of ``--runs`` runs (wall, and the app's own CPU), with the
load average; ``--keep`` times the database an earlier run built. Target: each
under 2 s at 20,000 executed transfers on PostgreSQL.

The PostgreSQL database has its ``public`` schema dropped and recreated.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.render_pages import _reset_postgres  # noqa: E402

DEFAULT_POSTGRES = os.environ.get(
    "BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/giro_bench_outcome"
)
PASSWORD = "senha-forte-123"
TARGET_S = 2.0
SIZES = ("36", "37", "38", "39", "40", "41")


def _build(n_transfers: int, seed: int = 11) -> str:
    """The network, batches, transfers and sales; returns the planner's e-mail."""
    from sqlalchemy import insert

    from extensions import db
    from models.stock import Loja, Produto, Venda
    from models.stock_batches import Lote, Recomendacao
    from services import auth as auth_service
    from services.clock import today
    from services.stock.batches import iso_week

    rng = random.Random(seed)
    ref = today()
    cd = Loja(codigo="CD01", nome="CD Cajamar", cidade="Cajamar", is_cd=True)
    stores = [Loja(codigo=f"S{i:03d}", nome=f"Loja {i:03d}", cidade="São Paulo") for i in range(300)]
    produtos = [
        Produto(
            sku=f"OUT-{p:04d}",
            nome=f"Modelo {p:04d}",
            marca=f"Marca {p % 25}",
            categoria=f"Categoria {p % 12}",
            colecao="Verão 2026",
            cor="Preto",
            tamanhos=list(SIZES),
        )
        for p in range(1000)
    ]
    db.session.add_all([cd, *stores, *produtos])
    db.session.flush()
    lotes = []
    for week in range(8):
        on = ref - timedelta(days=56 - 7 * week)
        semana, inicio, fim = iso_week(on)
        lote = Lote(semana=semana, inicio=inicio, fim=fim, data=on, geracoes=1)
        db.session.add(lote)
        lotes.append(lote)
    db.session.flush()
    rows, cells = [], set()
    for position in range(n_transfers):
        lote = lotes[position % len(lotes)]
        origem = cd if rng.random() < 0.7 else rng.choice(stores)
        destino = rng.choice([s for s in stores if s is not origem][:50] if origem is cd else stores[:50])
        produto = rng.choice(produtos)
        tamanho = rng.choice(SIZES)
        quantidade = rng.randint(3, 12)
        executada = lote.data + timedelta(days=rng.randint(0, 2))
        recebida = executada + timedelta(days=2) if rng.random() < 0.9 else None
        cells.add((destino.id, produto.id, tamanho))
        rows.append(
            {
                "id": uuid.uuid4(),
                "lote_id": lote.id,
                "produto_id": produto.id,
                "tamanho": tamanho,
                "cor": produto.cor,
                "origem_id": origem.id,
                "destino_id": destino.id,
                "tipo_origem": "cd" if origem.is_cd else "loja",
                "quantidade": quantidade,
                "estoque_destino": rng.randint(0, 4),
                "venda_media_destino": 0.5,
                "estoque_origem": 40,
                "venda_media_origem": 0.1,
                "distancia_km": 50.0,
                "justificativa": "benchmark",
                "prioridade": "alta",
                "prioridade_rank": 0,
                "score": 50,
                "posicao": position,
                "dias_ate_ruptura": 3,
                "em_campanha": False,
                "venda_extra_esperada": round(rng.uniform(0.3, 0.9) * quantidade, 3),
                "data": lote.data,
                "status": "executada",
                "vetado": False,
                "ultima_acao_em": datetime(executada.year, executada.month, executada.day, 15, tzinfo=UTC),
                "executada_em": datetime(executada.year, executada.month, executada.day, 15, tzinfo=UTC),
                "executada_data": executada,
                "quantidade_recebida": quantidade if recebida else None,
                "recebida_em": datetime(recebida.year, recebida.month, recebida.day, 15, tzinfo=UTC)
                if recebida
                else None,
                "recebida_data": recebida,
            }
        )
    for start in range(0, len(rows), 5000):
        db.session.execute(insert(Recomendacao), rows[start : start + 5000])
    # Daily sales of every destination cell, and as many rows of other stores' cells.
    others = set()
    while len(others) < len(cells):
        others.add((rng.choice(stores[50:]).id, rng.choice(produtos).id, rng.choice(SIZES)))
    days = [ref - timedelta(days=d) for d in range(1, 71)]
    batch = []
    for loja_id, produto_id, tamanho in [*cells, *others]:
        for day in days:
            if rng.random() < 0.35:
                batch.append(
                    {"data": day, "loja_id": loja_id, "produto_id": produto_id, "tamanho": tamanho, "qtd": 1}
                )
        if len(batch) >= 50_000:
            db.session.execute(insert(Venda), batch)
            batch = []
    if batch:
        db.session.execute(insert(Venda), batch)
    user = auth_service.create_user(
        email="planner@bench.test", password=PASSWORD, name="Paula Planejadora", papel="planejador"
    )
    db.session.commit()
    return user.email


def _figures(label: str, seconds: list[float]) -> None:
    print(
        f"  {label:<44} min {min(seconds):6.3f} s  median {statistics.median(seconds):6.3f} s"
        f"  max {max(seconds):6.3f} s"
    )


def bench(url: str, n_transfers: int, runs: int, *, build: bool = True) -> float:
    """Times the three reads on the database at ``url``; returns the largest median."""
    import flask_migrate
    from sqlalchemy import func, select

    from app import create_app
    from extensions import db
    from models.stock import Venda

    app = create_app(
        {"SQLALCHEMY_DATABASE_URI": url, "ARGON2_TIME_COST": 1, "ARGON2_MEMORY_COST": 1024, "SMTP_HOST": None}
    )
    started = time.perf_counter()
    with app.app_context():
        flask_migrate.upgrade(revision="heads")
        email = _build(n_transfers) if build else "planner@bench.test"
        sales = db.session.scalar(select(func.count()).select_from(Venda))
        if build and url.startswith("postgresql"):
            db.session.execute(db.text("ANALYZE"))
            db.session.commit()
        db.session.remove()
    built = f"built in {time.perf_counter() - started:.0f} s" if build else "reused"
    print(f"  {built}: {n_transfers} executed transfers, {sales} sales rows")
    client = app.test_client()
    login = client.post("/api/v1/auth/login", json={"email": email, "senha": PASSWORD})
    headers = {"Authorization": f"Bearer {login.get_json()['accessToken']}"}
    reads = {
        "GET /metricas/resultado (agrupar=lote)": "/api/v1/remanejamento/metricas/resultado",
        "GET /metricas/resultado?agrupar=rota": "/api/v1/remanejamento/metricas/resultado?agrupar=rota",
        "GET /metricas/aprendizado": "/api/v1/remanejamento/metricas/aprendizado",
    }
    times: dict[str, list[float]] = {label: [] for label in reads}
    cpu: dict[str, list[float]] = {label: [] for label in reads}
    body = None
    for _ in range(runs):
        for label, path in reads.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            response = client.get(path, headers=headers)
            times[label].append(time.perf_counter() - start)
            cpu[label].append(time.process_time() - start_cpu)
            assert response.status_code == 200, response.get_json()
            if body is None:
                body = response.get_json()
    total = body["total"]
    print(
        f"  total: {total['transferencias']} transfers, {total['unidadesMovidas']} units, ESI {total['esi']}, "
        f"ASI14 {total['janela14']['asi']} (razao {total['janela14']['razao']}), "
        f"{total['janela28']['parciais']['transferencias']} with the 28-day window open"
    )
    for label, seconds in times.items():
        _figures(label, seconds)
        where = "SQLite's work included" if url.startswith("sqlite") else "the rest: PostgreSQL"
        print(f"  {'':<44} app CPU median {statistics.median(cpu[label]):.3f} s ({where})")
    print(f"  load average: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f}")
    worst = max(statistics.median(s) for s in times.values())
    print(
        f"  largest median {worst:.3f} s vs target {TARGET_S:.0f} s: {'OK' if worst < TARGET_S else 'OVER'}"
    )
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transfers", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--database-url", default=DEFAULT_POSTGRES)
    parser.add_argument("--sqlite", action="store_true", help="Also run on SQLite (a temporary file)")
    parser.add_argument(
        "--keep", action="store_true", help="Time the PostgreSQL database built by an earlier run, as it is"
    )
    args = parser.parse_args()
    medians = []
    print("PostgreSQL")
    if not args.keep:
        _reset_postgres(args.database_url)
    medians.append(bench(args.database_url, args.transfers, args.runs, build=not args.keep))
    if args.sqlite:
        with tempfile.TemporaryDirectory() as tmp:
            print("SQLite")
            medians.append(bench(f"sqlite:///{tmp}/bench.db", args.transfers, args.runs))
    return 0 if all(m < TARGET_S for m in medians) else 1


if __name__ == "__main__":
    sys.exit(main())
