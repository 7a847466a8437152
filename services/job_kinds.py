"""Every kind of background job, each registered with ``services.jobs`` by the module whose
work it runs:

- ``lote``: a week's batch, partitioned (``services.stock.partitions``);
- ``importacao``: a CSV import started from the pages (``services.stock.import_job``);
- ``email``: one outgoing message (``services.mail``);
- ``notificacoes``: the tracker's notification e-mails (``services.tracker.notification_mail``);
- ``avisos_estoque``: remanejamento's notifications, e-mail and Web Push
  (``services.stock.notification_delivery``); ``resumo_semanal``: its weekly summary
  (``services.stock.digest``); ``operacoes``: a batch's issues in the tracker's operations
  project (``services.stock.operations``);
- ``webhooks``: the tracker's due webhook deliveries (``services.tracker.webhook_delivery``);
- ``busca``: an organization's search vectors after its writes (``services.tracker.search_index``);
- ``call``: any service function, by dotted name (``services.jobs.enqueue_call``).

A service asking for its own kind has imported the module that registers it. What reads or
runs jobs of any kind (``services.job_access``, ``flask worker``) imports this module, which
imports them all: a new kind's module joins ``REGISTERING``.
"""

from __future__ import annotations

from services import jobs, mail
from services.stock import digest, import_job, notification_delivery, operations, partitions
from services.tracker import notification_mail, search_index, webhook_delivery

# The modules that register a kind when imported (``services.jobs`` registers ``call``).
REGISTERING = (
    partitions,
    import_job,
    mail,
    notification_mail,
    webhook_delivery,
    notification_delivery,
    digest,
    operations,
    search_index,
)


def kind(name: str) -> jobs.JobKind | None:
    """The kind named ``name``, or None when no module registers it."""
    return jobs.KINDS.get(name)
