"""The what-if of the rules page on the demo network: the engine run with edited rules,
nothing saved, compared with the current batch. Target: under 3 s.

    PYTHONPATH=. .venv/bin/python benchmarks/whatif.py [--runs 7] [--database-url URL]

Without ``--database-url`` it builds the demo network (``flask demo load``'s defaults and
its first batch) in a temporary SQLite file. With a URL, that database must already hold
the demo (its admin account is used). Prints the median and maximum over the runs; exits
non-zero when the median is over the target.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 3.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--database-url")
    args = parser.parse_args()

    import flask_migrate

    from app import create_app
    from extensions import db
    from services import auth
    from services.clock import today
    from services.stock import demo, generation, rules, whatif

    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'whatif.db'}"
        app = create_app({"SQLALCHEMY_DATABASE_URI": url, "ARGON2_TIME_COST": 1, "ARGON2_MEMORY_COST": 1024})
        with app.app_context():
            if args.database_url is None:
                flask_migrate.upgrade(revision="heads")
                demo.load(
                    n_stores=demo.DEFAULT_STORES, n_products=demo.DEFAULT_PRODUCTS, seed=demo.DEFAULT_SEED
                )
                generation.generate(today())
                db.session.commit()
            admin = auth.find_user_by_email("admin@demo.giro.com.br")
            current = rules.get_rules()
            body = rules.NovasRegras(**{f.column: getattr(current, f.column) for f in rules.RULE_FIELDS})
            body = dataclasses.replace(body, qtd_minima=5)
            times = []
            for _ in range(args.runs):
                started = time.perf_counter()
                result = whatif.simulate(body, admin)
                times.append(time.perf_counter() - started)
                db.session.rollback()
            db.engine.dispose()
    median = statistics.median(times)
    print(
        f"what-if, demo network: median {median:.2f} s, max {max(times):.2f} s over {args.runs} runs; "
        f"{result['simulado']['recomendacoes']:,} simulated against {result['atual']['recomendacoes']:,} "
        f"current recommendations (target < {TARGET_SECONDS:.0f} s)"
    )
    return 0 if median < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
