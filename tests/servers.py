"""Real server processes for the tests that need them: gunicorn serving the app, stopped with
their whole process group."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(process: subprocess.Popen, sig=signal.SIGTERM) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def start_gunicorn(env: dict, port: int, workers: int = 1, log: Path | None = None) -> subprocess.Popen:
    """``gunicorn "app:create_app()"`` on loopback, once its ``/health`` answers. It counts rate
    limits as deployed (Redis, or the database), not in the suite's memory."""
    env = {name: value for name, value in env.items() if name != "RATELIMIT_STORAGE_URI"}
    output = open(log, "wb") if log is not None else subprocess.DEVNULL  # noqa: SIM115 (the child keeps it)
    process = subprocess.Popen(
        [
            str(ROOT / ".venv/bin/gunicorn"),
            "app:create_app()",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
        ],
        cwd=ROOT,
        env=env,
        stdout=output,
        stderr=output,
        start_new_session=True,
    )
    if log is not None:
        output.close()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with contextlib.suppress(requests.RequestException):
            if requests.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return process
        time.sleep(0.2)
    stop(process)
    raise AssertionError(f"server on {port} did not start")
