"""The operations pages of remanejamento: start a batch generation or a CSV import, and follow
a job's progress live (htmx polls the job's block every second until it is done or failed).

Same services as the API (``services.stock.partitions``, ``services.stock.import_job``,
``services.jobs``): the roles are theirs; the page only offers what they would accept.
"""

from __future__ import annotations

import uuid
from datetime import date

from flask import Blueprint, request
from flask_babel import gettext as _
from flask_jwt_extended import current_user

from blueprints.pages.common import after_change, page_login_required, refused, render_page
from services import job_access
from services.clock import today
from services.errors import DomainError
from services.stock import import_job, importer, partitions

blp = Blueprint("jobs_pages", __name__)

PAGE_KINDS = (partitions.KIND, import_job.KIND)
IMPORT_LABELS = {
    "stores": "Lojas e CDs",
    "products": "Produtos",
    "stock": "Estoque",
    "sales": "Vendas",
    "campaigns": "Campanhas",
}


def _list(error: str | None = None, status: int = 200):
    return render_page(
        "jobs/tarefas.html",
        status=status,
        items=job_access.recent_jobs(current_user, PAGE_KINDS),
        import_kinds=[(k, IMPORT_LABELS.get(k, k)) for k in importer.KINDS],
        today=today(),
        error=error,
    )


@blp.route("/remanejamento/tarefas")
@page_login_required(stock=True)
def tarefas():
    return _list()


@blp.route("/remanejamento/tarefas/gerar-lote", methods=["POST"])
@page_login_required(stock=True)
def gerar_lote():
    raw = request.form.get("data", "").strip()
    try:
        on = date.fromisoformat(raw) if raw else today()
    except ValueError:
        return _list(_("Data inválida: use o calendário."), 422)
    try:
        job, _created = partitions.request_generation(on, actor=current_user)
    except DomainError as exc:
        refusal = refused(exc)
        return _list(refusal.message, refusal.status)
    return after_change("jobs_pages.tarefa", job_id=job.id)


@blp.route("/remanejamento/tarefas/importar", methods=["POST"])
@page_login_required(stock=True)
def importar():
    tipo = request.form.get("tipo", "")
    upload = request.files.get("arquivo")
    if tipo not in importer.KINDS:
        return _list(_("Escolha o tipo de arquivo."), 422)
    if upload is None or not upload.filename:
        return _list(_("Escolha um arquivo CSV."), 422)
    try:
        job, _created = import_job.request_import(tipo, upload.stream, upload.filename, actor=current_user)
    except DomainError as exc:
        refusal = refused(exc)
        return _list(refusal.message, refusal.status)
    return after_change("jobs_pages.tarefa", job_id=job.id)


@blp.route("/remanejamento/tarefas/<uuid:job_id>")
@page_login_required(stock=True)
def tarefa(job_id: uuid.UUID):
    job = job_access.get_job(job_id, current_user, "stock")
    return render_page("jobs/tarefa.html", "job_status", job=job)
