"""Production gunicorn settings: ``gunicorn -c deploy/gunicorn.conf.py "app:create_app()"``.

One of these per app host, behind the load balancer (docs/operations.md, "Production layout").
Environment (see ``deploy/giro.env.example``): ``GIRO_BIND`` (default 0.0.0.0:8000),
``GIRO_WEB_WORKERS`` (default 2 x cores + 1), ``PROMETHEUS_MULTIPROC_DIR`` (default
/run/giro/prometheus, emptied at start).
"""

import multiprocessing
import os
import shutil
from pathlib import Path

bind = os.environ.get("GIRO_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GIRO_WEB_WORKERS", 2 * multiprocessing.cpu_count() + 1))
# Requests are short; long work goes to the job workers. A stuck request is killed.
timeout = 60
graceful_timeout = 30
keepalive = 5  # behind a load balancer that keeps connections open
# The app logs every request as JSON (request id, user, duration): no access log here.
accesslog = None
errorlog = "-"

# The same request limits as the development config (see ../gunicorn.conf.py).
limit_request_line = 8190
limit_request_fields = 100
limit_request_field_size = 16384


def on_starting(_server):
    import security

    security.answer_gunicorn_refusals_in_json()
    # Set in the master before it forks the workers (they import the app after the fork).
    folder = Path(os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", "/run/giro/prometheus"))
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)


def child_exit(_server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
