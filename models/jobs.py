"""Background jobs: one row per piece of long work, its state and progress.

The queue engine (RQ on Redis, or a thread of the web process without Redis)
only carries the job's id; this row is what the API, the pages and the
metrics read, whichever process runs the work.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, CheckConstraint, ForeignKey, Index, Integer, SmallInteger, String, Text, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from extensions import db
from models.base import CreatedAt, UTCDateTime, UUIDPrimaryKey

JOB_STATES = ("queued", "running", "done", "failed")


class Job(UUIDPrimaryKey, CreatedAt, db.Model):
    __tablename__ = "jobs"
    __table_args__ = (
        CheckConstraint("state IN ('queued', 'running', 'done', 'failed')", name="state_known"),
        CheckConstraint("progress >= 0 AND progress <= 100", name="progress_percent"),
        # Someone's recent jobs (the pages list them newest first).
        Index("ix_jobs_requested_by_id_created_at", "requested_by_id", "created_at"),
        # The metrics count jobs by state.
        Index("ix_jobs_state", "state"),
        # Finished jobs past their retention are pruned.
        Index("ix_jobs_finished_at", "finished_at"),
    )

    kind: Mapped[str] = mapped_column(String(40))
    state: Mapped[str] = mapped_column(String(10), default="queued")
    progress: Mapped[int] = mapped_column(SmallInteger, default=0)
    message: Mapped[str] = mapped_column(String(200), default="")
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Held while the job is queued or running ("lote:2026-W47"): a second request
    # for the same work finds this job instead of starting another. NULL once finished.
    lock_key: Mapped[str | None] = mapped_column(String(120), unique=True, nullable=True)
    requested_by_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # Written with each progress report: a running job silent for long was lost with its worker.
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    @property
    def finished(self) -> bool:
        return self.state in ("done", "failed")
