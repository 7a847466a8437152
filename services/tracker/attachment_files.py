"""The stored files of attachments whose rows a deletion is about to take (an issue's
sub-tree, a project): their bytes, and their objects removed once that deletion commits."""

from __future__ import annotations

import uuid

from sqlalchemy import func, select

from extensions import db
from models.tracker_attachments import Attachment
from services import storage


def release(*, issue_ids: list[uuid.UUID] | None = None, project_id: uuid.UUID | None = None) -> int:
    """Schedule the removal of the objects of the attachments of ``issue_ids`` (or of the
    project) after commit; answers their bytes, which the caller frees from the counter."""
    where = (
        Attachment.issue_id.in_(issue_ids or [])
        if project_id is None
        else Attachment.project_id == project_id
    )
    rows = db.session.execute(
        select(Attachment.size_bytes, Attachment.storage_key, Attachment.thumbnail_key).where(where)
    )
    freed = 0
    keys: list[str] = []
    for size, stored_key, thumbnail_key in rows:
        freed += size
        keys += [key for key in (stored_key, thumbnail_key) if key]
    if keys:
        storage.remove_after_commit(keys)
    return freed


def storage_expression():
    """The bytes of every attached file (the admin statistics' storage used)."""
    return func.coalesce(func.sum(Attachment.size_bytes), 0)
