"""gunicorn settings, read from the working directory (``make run``, the README's deploy line).

gunicorn refuses an oversized request line or header field itself, before the app
sees the request. The app refuses anything past its own, lower limits
(``security.py``: a 4 KiB URL, 8 KiB of headers in all) with 414 or 431 in the
dialect of the service; a request line past 8190 bytes (the most gunicorn allows),
a single header field past 16 KiB or more than 100 header fields gets gunicorn's
answer, in JSON with both dialects' members (``security.answer_gunicorn_refusals_in_json``).

Metrics: gunicorn's workers are separate processes, so prometheus-client keeps
their samples in ``PROMETHEUS_MULTIPROC_DIR`` (``instance/prometheus`` of the working directory unless set)
and ``/metrics`` adds them up, whichever worker answers. The directory is emptied
when gunicorn starts, and a worker's live gauges go with it when it exits.
"""

import os
import shutil
from pathlib import Path

limit_request_line = 8190
limit_request_fields = 100
limit_request_field_size = 16384


def on_starting(_server):
    import security

    security.answer_gunicorn_refusals_in_json()
    # Set in the master before it forks the workers (they import the app after the fork).
    folder = Path(
        os.environ.setdefault(
            "PROMETHEUS_MULTIPROC_DIR", os.path.abspath(os.path.join("instance", "prometheus"))
        )
    )
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)


def child_exit(_server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
