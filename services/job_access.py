"""Who may read a job: whoever asked for it, platform superadmins, and for some kinds a stock role.

Anything else is 404, never 403: a job id says nothing to someone who may not read it.
"""

from __future__ import annotations

import uuid

from sqlalchemy import select

from extensions import db
from models.auth import User
from models.jobs import Job
from services import auth as auth_service
from services import job_kinds
from services.errors import NotFoundError
from services.stock.access import has_stock_access


def get_job(job_id: uuid.UUID, actor: User, service: str) -> Job:
    """A job the actor may read, seen from ``service``'s API (``stock`` or ``tracker``)."""
    job = db.session.get(Job, job_id)
    if job is None or not _may_read(actor, job, service):
        raise NotFoundError("Job not found", reason="job_not_found")
    return job


def _may_read(actor: User, job: Job, service: str) -> bool:
    spec = job_kinds.kind(job.kind)
    if spec is None:
        return False
    if service == "stock" and not has_stock_access(actor):
        return False
    if job.requested_by_id == actor.id:
        return True
    if auth_service.is_superadmin(actor):
        return True
    return spec.service == service == "stock" and actor.papel in spec.stock_readers


def recent_jobs(actor: User, kinds: tuple[str, ...], limit: int = 10) -> list[Job]:
    """The actor's own latest jobs of these kinds, newest first (the pages' list)."""
    return list(
        db.session.scalars(
            select(Job)
            .where(Job.requested_by_id == actor.id, Job.kind.in_(kinds))
            .order_by(Job.created_at.desc())
            .limit(limit)
        )
    )
