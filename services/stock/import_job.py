"""A CSV file uploaded from the pages, imported by a background job (kind ``importacao``).

The upload goes to the spool directory and the job imports it with the same validation as
the command line (``importer``); the file is removed once the job ends, whatever its outcome.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path
from typing import IO, Any

from models.auth import User
from models.jobs import Job
from services import jobs
from services.errors import DomainError
from services.stock import importer
from services.stock.access import ensure_stock_access

KIND = "importacao"


def request_import(tipo: str, upload: IO[bytes], filename: str, *, actor: User) -> tuple[Job, bool]:
    """Queue the import of an uploaded CSV file (``upload``: a binary file object). Flushes.

    Only a stock admin imports. The file goes to the spool directory; the same file
    asked for again while its import is queued or running finds that job (its lock
    key is the file's digest), and the importer itself replaces rather than adds,
    so a retried import never doubles rows."""
    ensure_stock_access(actor, "admin")
    if tipo not in importer.KINDS:
        raise ValueError(f"unknown import kind {tipo!r}")
    folder = Path(jobs.spool_root()) / "uploads"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{uuid.uuid4().hex}.csv"
    digest = hashlib.sha256()
    with open(path, "wb") as out:
        for chunk in iter(lambda: upload.read(1 << 20), b""):
            digest.update(chunk)
            out.write(chunk)
    job, created = jobs.enqueue(
        KIND,
        {"tipo": tipo, "arquivo": str(path), "nome": filename[:200]},
        actor=actor,
        lock_key=f"importacao:{tipo}:{digest.hexdigest()}",
    )
    if not created:
        path.unlink(missing_ok=True)
    return job, created


def discard_upload(job: Job) -> None:
    if job.params.get("arquivo"):
        Path(job.params["arquivo"]).unlink(missing_ok=True)


@jobs.job_kind(KIND, service="stock", stock_readers=("admin",), after_finish=discard_upload)
def run_import(context: jobs.JobContext) -> dict[str, Any]:
    requester = context.requester()
    if requester is not None:
        ensure_stock_access(requester, "admin")
    path = Path(context.params["arquivo"])
    size = max(os.path.getsize(path), 1)
    read = 0

    def progress(step: int) -> None:
        nonlocal read
        read += step
        context.progress(0.9 * read / size, f"{read / (1 << 20):.1f} de {size / (1 << 20):.1f} MiB lidos")

    context.progress(0.0, "lendo o arquivo")
    try:
        summary = importer.import_file(context.params["tipo"], path, progress=progress)
    except importer.ImportRejected as exc:
        # The job's error is one text: a line per bad line of the file.
        found = [f"linha {e.line}: {e.reason}" for e in exc.errors]
        if exc.more:
            found.append(f"… e mais {exc.more} linha(s) com erro")
        raise DomainError(
            "Arquivo recusado, nada foi importado:\n" + "\n".join(found), reason="import_rejected"
        ) from None
    context.progress(0.95, "gravando")
    return {
        "tipo": summary.kind,
        "linhas": summary.rows,
        "inseridas": summary.inserted,
        "atualizadas": summary.updated,
        "inalteradas": summary.unchanged,
        "removidas": summary.removed,
        "segundos": round(summary.seconds, 3),
        "resumo": summary.describe(),
    }
