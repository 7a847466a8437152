"""Server-side render time of the batch page with 2,000 recommendations.

Usage::

    .venv/bin/python benchmarks/render_pages.py [--recs 2000] [--runs 30] [--postgres URL | --no-postgres]

Builds, on a fresh database, a network of one CD, 40 stores and 60 products,
one batch holding ``--recs`` recommendations (every priority, status and
origin type, some vetoed) and a planner, signs the planner in and renders,
in-process through the WSGI app (no network, no browser), each of:

- the full batch page (``GET /lotes/<id>``), the default order, first page;
- the table alone, as htmx asks for it after a filter or sort change
  (``HX-Request``, sorted by product name: the most expensive sort);
- one decision in place (``POST .../aprovar``: the row plus the totals and
  flow out of band), alternating approve and refuse on pending rows.

Each is timed in ``--rounds`` rounds of ``--runs`` requests after a warm-up;
min/median/max of the rounds' medians are printed, wall-clock and CPU time of
the benchmark process (the work of one request without the wait for a busy
CPU; on PostgreSQL it leaves out the database server's own share), with the
load average. The target is a median CPU time under 100 ms for the full page. The PostgreSQL database (default ``giro_bench_pages``, create it
with ``createdb -h 127.0.0.1 -U postgres giro_bench_pages``) has its ``public``
schema dropped and recreated.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import tempfile
import uuid
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.rounds import in_rounds, load_average  # noqa: E402

DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/giro_bench_pages"
PASSWORD = "bench-password-123"
TARGET_MS = 100.0  # median CPU time of the full page


def _reset_postgres(url: str) -> None:
    from sqlalchemy import create_engine, text

    from config import normalize_database_url

    engine = create_engine(normalize_database_url(url), isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()


def _build(n_recs: int, seed: int = 7, *, all_pending: bool = False) -> tuple[str, str]:
    """Network, batch and planner; returns (batch id, planner e-mail). ``all_pending``: every
    recommendation pending and not vetoed (for timing a decision on all of them)."""
    from sqlalchemy import insert

    from extensions import db
    from models.stock import Loja, Produto
    from models.stock_batches import PRIORIDADE_RANK, PRIORIDADES, Lote, Recomendacao
    from services import auth as auth_service
    from services.stock.batches import iso_week

    rng = random.Random(seed)
    cd = Loja(codigo="CD01", nome="CD Cajamar", cidade="Cajamar", lat=-23.36, lng=-46.88, is_cd=True)
    stores = [
        Loja(codigo=f"S{i:03d}", nome=f"Loja {i:03d}", cidade="São Paulo", lat=-23.5, lng=-46.6)
        for i in range(40)
    ]
    sizes = [str(s) for s in range(34, 44)]
    produtos = [
        Produto(
            sku=f"BENCH-{p:04d}",
            nome=f"Tênis Modelo {p:03d}",
            marca=f"Marca {p % 6}",
            categoria="Tênis",
            colecao="Verão 2026",
            cor=rng.choice(["Preto", "Branco", "Azul"]),
            tamanhos=sizes,
        )
        for p in range(60)
    ]
    db.session.add_all([cd, *stores, *produtos])
    db.session.flush()
    on = date(2026, 11, 18)
    semana, inicio, fim = iso_week(on)
    lote = Lote(semana=semana, inicio=inicio, fim=fim, data=on, geracoes=1)
    db.session.add(lote)
    db.session.flush()
    statuses = ["pendente"] * 6 + ["aprovada", "aprovada", "executada", "recusada"]
    rows = []
    for position in range(n_recs):
        origem = cd if rng.random() < 0.6 else rng.choice(stores)
        destino = rng.choice([s for s in stores if s is not origem])
        produto = rng.choice(produtos)
        prioridade = rng.choice(PRIORIDADES)
        status = "pendente" if all_pending else rng.choice(statuses)
        vetado = not all_pending and status in ("pendente", "aprovada") and rng.random() < 0.05
        rows.append(
            {
                "id": uuid.uuid4(),
                "lote_id": lote.id,
                "produto_id": produto.id,
                "tamanho": rng.choice(sizes),
                "cor": produto.cor,
                "origem_id": origem.id,
                "destino_id": destino.id,
                "tipo_origem": "cd" if origem.is_cd else "loja",
                "quantidade": rng.randint(3, 15),
                "estoque_destino": rng.randint(0, 3),
                "venda_media_destino": round(rng.uniform(0.3, 3.0), 3),
                "estoque_origem": rng.randint(10, 80),
                "venda_media_origem": round(rng.uniform(0.0, 0.5), 3),
                "distancia_km": round(rng.uniform(5, 900), 1),
                "justificativa": f"{destino.nome} vende bem e está quase sem estoque; {origem.nome} tem sobra.",
                "prioridade": prioridade,
                "prioridade_rank": PRIORIDADE_RANK[prioridade],
                "score": rng.randint(10, 99),
                "posicao": position,
                "dias_ate_ruptura": rng.randint(0, 20),
                "em_campanha": rng.random() < 0.1,
                "data": on,
                "status": status,
                "vetado": vetado,
                "motivo_veto": "Loja em reforma" if vetado else None,
            }
        )
    db.session.execute(insert(Recomendacao), rows)
    user = auth_service.create_user(
        email="planner@bench.test", password=PASSWORD, name="Paula Planejadora", papel="planejador"
    )
    db.session.commit()
    return str(lote.id), user.email


def bench_batch_page(url: str, n_recs: int, runs: int, rounds: int) -> float:
    """Times the batch page on the database at ``url``; returns the full page's median CPU in ms."""
    import flask_migrate

    from app import create_app
    from models.stock_batches import Recomendacao

    app = create_app(
        {"SQLALCHEMY_DATABASE_URI": url, "ARGON2_TIME_COST": 1, "ARGON2_MEMORY_COST": 1024, "SMTP_HOST": None}
    )
    with app.app_context():
        flask_migrate.upgrade(revision="heads")
        lote_id, email = _build(n_recs)
        from sqlalchemy import select

        from extensions import db

        pending = list(
            db.session.scalars(
                select(Recomendacao.id).where(
                    Recomendacao.status == "pendente", Recomendacao.vetado.is_(False)
                )
            )
        )
        db.session.remove()
    client = app.test_client()
    login = client.post("/login", data={"email": email, "senha": PASSWORD})
    assert login.status_code == 302, login.status_code
    csrf = client.get_cookie("csrf_access_token").value
    page = f"/lotes/{lote_id}"
    size = len(client.get(page).get_data())
    print(f"  batch page: {n_recs} recommendations, first page of 50 rows, {size / 1024:.0f} KiB of HTML")
    cpu = in_rounds("GET /lotes/<id> (full page)", lambda: client.get(page), runs, rounds)
    in_rounds(
        "GET table only (htmx, sorted by product)",
        lambda: client.get(f"{page}?ordem=produto&dir=asc", headers={"HX-Request": "true"}),
        runs,
        rounds,
    )
    ids = itertools.cycle(pending)
    actions = itertools.cycle(["aprovar", "recusar"])
    in_rounds(
        "POST approve/refuse in place (row + totals)",
        lambda: client.post(
            f"{page}/recomendacoes/{next(ids)}/{next(actions)}",
            data={"motivoRecusa": "loja_recusa"},  # the page asks a refusal's reason
            headers={"HX-Request": "true", "X-CSRF-TOKEN": csrf},
        ),
        runs,
        rounds,
    )
    verdict = "OK" if cpu < TARGET_MS else "OVER TARGET"
    print(f"  full page median CPU {cpu:.1f} ms vs target {TARGET_MS:.0f} ms: {verdict}")
    return cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recs", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    print(load_average())
    medians = []
    with tempfile.TemporaryDirectory() as tmp:
        print("SQLite")
        medians.append(bench_batch_page(f"sqlite:///{tmp}/bench.db", args.recs, args.runs, args.rounds))
    if not args.no_postgres:
        print("PostgreSQL")
        try:
            _reset_postgres(args.postgres)
        except Exception as exc:  # a missing server is reported, not a crash
            print(f"  skipped: {exc.__class__.__name__}: {exc}".splitlines()[0])
        else:
            medians.append(bench_batch_page(args.postgres, args.recs, args.runs, args.rounds))
    print(load_average())
    return 0 if all(m < TARGET_MS for m in medians) else 1


if __name__ == "__main__":
    sys.exit(main())
