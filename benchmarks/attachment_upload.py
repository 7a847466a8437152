"""A large attachment through a real HTTP server: the worker's memory stays flat.

Serves the app (SQLite in a temporary directory, files in a temporary directory) on a
loopback port, sends one file of ``--megabytes`` as ``multipart/form-data`` from a separate
process over a plain socket (the body written a chunk at a time), and prints the server
process's peak RSS before and after, the time, and the throughput.

    .venv/bin/python benchmarks/attachment_upload.py --megabytes 1024
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CLIENT = r"""
import http.client, sys
host, port, path, token, size = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
boundary = "giro-bench"
head = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="grande.bin"\r\n'
        'Content-Type: application/octet-stream\r\n\r\n').encode()
tail = f"\r\n--{boundary}--\r\n".encode()
conn = http.client.HTTPConnection(host, port, timeout=600)
conn.putrequest("POST", path)
conn.putheader("Authorization", "Bearer " + token)
conn.putheader("Content-Type", "multipart/form-data; boundary=" + boundary)
conn.putheader("Content-Length", str(len(head) + size + len(tail)))
conn.endheaders()
conn.send(head)
chunk = bytes(range(256)) * 4096
sent = 0
while sent < size:
    piece = chunk[: min(len(chunk), size - sent)]
    conn.send(piece)
    sent += len(piece)
conn.send(tail)
response = conn.getresponse()
print(response.status, response.read()[:300].decode())
"""


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=1024)
    args = parser.parse_args()
    size = args.megabytes * 1024 * 1024
    work = Path(tempfile.mkdtemp(prefix="giro-upload-"))
    os.environ.setdefault("ARGON2_TIME_COST", "1")
    os.environ.setdefault("ARGON2_MEMORY_COST", "1024")

    import flask_migrate
    from werkzeug.serving import make_server

    from app import create_app

    app = create_app(
        {
            "SQLALCHEMY_DATABASE_URI": f"sqlite:///{work / 'giro.db'}",
            "STORAGE_URL": (work / "files").as_uri(),
            "MAX_ATTACHMENT_BYTES": size + 1,
            "RATELIMIT_STORAGE_URI": "memory://",
            "MAIL_VIA_JOBS": False,
        }
    )
    with app.app_context():
        flask_migrate.upgrade()
    client = app.test_client()
    api = "/tracker/api/v1"
    registered = client.post(
        f"{api}/auth/register",
        json={"name": "Bench", "email": "bench@giro.test", "password": "bench-pass-42"},
    ).get_json()
    headers = {"Authorization": f"Bearer {registered['access_token']}"}
    slug = client.get(f"{api}/workspaces", headers=headers).get_json()["workspaces"][0]["slug"]
    project = client.post(
        f"{api}/workspaces/{slug}/projects", json={"name": "Bench", "key": "BEN"}, headers=headers
    ).get_json()
    issue = client.post(
        f"{api}/workspaces/{slug}/projects/{project['id']}/issues",
        json={"title": "Arquivo grande"},
        headers=headers,
    ).get_json()
    from services.transactions import writer

    with app.app_context(), writer():
        from extensions import db
        from models.tracker import Organization

        organization = db.session.scalars(db.select(Organization)).one()
        organization.plan_limits = {**organization.plan_limits, "storage_bytes": 10 * size}
        db.session.commit()

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    path = f"{api}/workspaces/{slug}/projects/{project['id']}/issues/{issue['key']}/attachments"
    before = _peak_mb()
    started = time.perf_counter()
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            CLIENT,
            "127.0.0.1",
            str(server.server_port),
            path,
            registered["access_token"],
            str(size),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    elapsed = time.perf_counter() - started
    server.shutdown()
    stored = sum(f.stat().st_size for f in (work / "files").rglob("*") if f.is_file())
    print(f"answer: {result.stdout.strip()[:120]}")
    print(
        f"file: {args.megabytes} MiB, stored {stored / 1024 / 1024:.0f} MiB, {elapsed:.1f} s ({args.megabytes / elapsed:.0f} MiB/s)"
    )
    print(f"server peak RSS: {before:.0f} MB before the upload, {_peak_mb():.0f} MB after")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
