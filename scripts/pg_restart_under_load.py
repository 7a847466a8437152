"""PostgreSQL restarted under load: the app's pools reconnect (pool_pre_ping), no worker restarts.

    .venv/bin/python scripts/pg_restart_under_load.py [--seconds 30] [--clients 4]

Builds a private, throw-away PostgreSQL cluster under /tmp (initdb on its own port, run as
the ``postgres`` system user when started as root), migrates it, loads a small demo network,
serves the app on it with gunicorn (2 workers), sends requests from several threads (the
health check, a signed-in API read and a page) and, half way, restarts the cluster
(``pg_ctl restart -m fast``). It prints how many requests failed during the restart and after
it, and whether gunicorn's worker processes are the ones it started with. Never touches the
shared PostgreSQL; not part of the test suite.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def _run(cmd: list[str], **kwargs) -> None:
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kwargs)


def _children(pid: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(stat.parent.name))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args(argv)

    base = Path(tempfile.mkdtemp(prefix="giro-pg-restart-"))
    data = base / "data"
    pg_port, app_port = _free_port(), _free_port()
    if os.geteuid() == 0:
        shutil.chown(base, "postgres")
    server = None
    try:
        _run(_as_postgres([str(BIN / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]))
        pg_ctl = _as_postgres(
            [
                str(BIN / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(base / "pg.log"),
                "-w",
                "-o",
                f"-p {pg_port} -k {base}",
            ]
        )
        _run([*pg_ctl, "start"])
        url = f"postgresql://postgres@127.0.0.1:{pg_port}/postgres"
        env = {**os.environ, "DATABASE_URL": url, "LOG_FORMAT": "text", "LOG_REQUESTS": "false"}
        env.pop("REDIS_URL", None)
        flask = [str(ROOT / ".venv/bin/flask"), "--app", "app"]
        _run([*flask, "db", "upgrade"], cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
        _run([*flask, "demo", "load", "--stores", "10", "--products", "20"], cwd=ROOT, env=env)

        server = subprocess.Popen(
            [str(ROOT / ".venv/bin/gunicorn"), "app:create_app()", "-b", f"127.0.0.1:{app_port}", "-w", "2"],
            cwd=ROOT,
            env={**env, "PROMETHEUS_MULTIPROC_DIR": str(base / "prom")},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        app = f"http://127.0.0.1:{app_port}"
        for _ in range(300):
            with contextlib.suppress(requests.RequestException):
                if requests.get(f"{app}/health", timeout=2).status_code == 200:
                    break
            time.sleep(0.2)
        workers_before = _children(server.pid)
        token = requests.post(
            f"{app}/api/v1/auth/login",
            json={"email": "planejador@demo.giro.com.br", "senha": "giro-demo-2026"},
            timeout=10,
        ).json()["accessToken"]

        paths = [("/health", {}), ("/api/v1/remanejamento/lotes", {"Authorization": f"Bearer {token}"})]
        results: list[tuple[float, bool]] = []
        lock = threading.Lock()
        stop = time.monotonic() + args.seconds

        def load(n: int) -> None:
            session = requests.Session()
            i = n
            while time.monotonic() < stop:
                path, headers = paths[i % len(paths)]
                i += 1
                try:
                    ok = session.get(app + path, headers=headers, timeout=10).status_code == 200
                except requests.RequestException:
                    ok = False
                with lock:
                    results.append((time.monotonic(), ok))

        threads = [threading.Thread(target=load, args=(n,)) for n in range(args.clients)]
        for thread in threads:
            thread.start()
        time.sleep(args.seconds / 2)
        restart_start = time.monotonic()
        _run([*pg_ctl, "restart", "-m", "fast"])
        restart_end = time.monotonic()
        for thread in threads:
            thread.join()
        workers_after = _children(server.pid)

        during = [ok for t, ok in results if restart_start <= t <= restart_end + 1.0]
        before = [ok for t, ok in results if t < restart_start]
        after = [ok for t, ok in results if t > restart_end + 1.0]
        print(
            f"PostgreSQL {BIN.parent.name} on port {pg_port}; restart took {restart_end - restart_start:.2f} s"
        )
        print(f"requests: {len(results)} in {args.seconds:.0f} s from {args.clients} clients")
        print(f"  before the restart: {before.count(False)} failed of {len(before)}")
        print(f"  during it (+1 s):   {during.count(False)} failed of {len(during)}")
        print(f"  after it:           {after.count(False)} failed of {len(after)}")
        print(f"gunicorn workers unchanged: {workers_before == workers_after} ({sorted(workers_after)})")
        return 0 if not after.count(False) and workers_before == workers_after else 1
    finally:
        if server is not None and server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
        with contextlib.suppress(subprocess.CalledProcessError):
            _run(
                _as_postgres([str(BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
                stderr=subprocess.DEVNULL,
            )
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
