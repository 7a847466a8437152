"""Every kind of background job, registered with ``services.jobs`` when imported.

Each wraps an existing service function; none re-implements the work:

- ``lote``: a week's batch, partitioned (``services.stock.partitions``);
- ``importacao``: a CSV import started from the pages (``services.stock.importer``);
- ``email``: one outgoing message (``services.mail.send_mail``);
- ``notificacoes``: the tracker's notification e-mails (``services.tracker.notification_mail``);
- ``webhooks``: the tracker's due webhook deliveries (``services.tracker.webhooks``);
- ``call``: any service function, by dotted name (``services.jobs.enqueue_call``).
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path
from typing import Any

from services import jobs
from services.stock import partitions  # noqa: F401  (registers the ``lote`` kind)

IMPORT_KIND = "importacao"


# --------------------------------------------------------------------------- CSV imports


def request_import(tipo: str, upload, filename: str, *, actor) -> tuple[Any, bool]:
    """Queue the import of an uploaded CSV file (``upload``: a binary file object). Flushes.

    Only a stock admin imports. The file goes to the spool directory; the same file
    asked for again while its import is queued or running finds that job (its lock
    key is the file's digest), and the importer itself replaces rather than adds,
    so a retried import never doubles rows."""
    from services.stock import importer
    from services.stock.access import ensure_stock_access

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
        IMPORT_KIND,
        {"tipo": tipo, "arquivo": str(path), "nome": filename[:200]},
        actor=actor,
        lock_key=f"importacao:{tipo}:{digest.hexdigest()}",
    )
    if not created:
        path.unlink(missing_ok=True)
    return job, created


def discard_upload(job) -> None:
    if job.params.get("arquivo"):
        Path(job.params["arquivo"]).unlink(missing_ok=True)


@jobs.job_kind(IMPORT_KIND, service="stock", stock_readers=("admin",), after_finish=discard_upload)
def run_import(context: jobs.JobContext) -> dict[str, Any]:
    from services.errors import DomainError
    from services.stock import importer
    from services.stock.access import ensure_stock_access

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
    result = {
        "tipo": summary.kind,
        "linhas": summary.rows,
        "inseridas": summary.inserted,
        "atualizadas": summary.updated,
        "inalteradas": summary.unchanged,
        "removidas": summary.removed,
        "segundos": round(summary.seconds, 3),
        "resumo": summary.describe(),
    }
    return result


# --------------------------------------------------------------------------- e-mail


@jobs.job_kind("email", service="tracker", sensitive=True)
def run_email(context: jobs.JobContext) -> dict[str, Any]:
    from services.mail import send_mail

    send_mail(context.params["to"], context.params["subject"], context.params["body"])
    return {"enviado": True}


@jobs.job_kind("notificacoes", service="tracker")
def run_notifications(context: jobs.JobContext) -> dict[str, Any]:
    from services.tracker import notification_mail

    context.progress(0.1, "enviando notificações")
    report = notification_mail.send_pending()
    return {
        "mensagens": report.messages,
        "enviadas": report.sent,
        "ignoradas": report.skipped,
        "a_repetir": report.retried,
        "falharam": report.failed,
    }


@jobs.job_kind("webhooks", service="tracker")
def run_webhooks(context: jobs.JobContext) -> dict[str, Any]:
    from services.tracker import webhook_delivery

    context.progress(0.1, "entregando webhooks")
    report = webhook_delivery.deliver_due()
    return {
        "entregues": report.delivered,
        "a_repetir": report.retried,
        "falharam": report.failed,
        "desativados": report.disabled,
    }


def request_notifications(*, actor=None):
    """Queue a run of the notification e-mails; one at a time (a run claims its own rows anyway)."""
    return jobs.enqueue("notificacoes", {}, actor=actor, lock_key="notificacoes")


def webhooks_tick() -> str:
    """What the scheduler runs every minute: a recorded pass over the due webhook deliveries."""
    from extensions import db

    job, _ = jobs.enqueue("webhooks", {}, actor=None, lock_key="webhooks:tick")
    db.session.commit()
    return str(job.id)


def notifications_tick() -> str:
    """What the scheduler runs every five minutes: the notification e-mails (one run at a time)."""
    from extensions import db

    job, _ = request_notifications()
    db.session.commit()
    return str(job.id)
