"""Files attached to issues: the row names the stored object; the bytes live in the storage
(``services.storage``: a local directory or an S3 bucket).

The row hangs off its issue (``ON DELETE CASCADE``): deleting an issue or a project takes
the rows with it, and the services deleting them remove the stored objects once the
deletion commits. ``organization_id`` is kept for the storage layout and the sweep.
"""

from __future__ import annotations

import uuid

from sqlalchemy import BigInteger, ForeignKey, Index, String, Uuid
from sqlalchemy.orm import Mapped, mapped_column, relationship

from extensions import db
from models.base import CreatedAt, UUIDPrimaryKey

MAX_FILENAME_LENGTH = 255


class Attachment(UUIDPrimaryKey, CreatedAt, db.Model):
    """One uploaded file: its sanitised name, the type sniffed from its bytes, its size, and
    the keys of its object (and of its thumbnail, for images) in the storage."""

    __tablename__ = "attachments"
    __table_args__ = (
        # An issue's files, oldest first; the project's, when the project goes.
        Index("ix_attachments_issue_id_created_at", "issue_id", "created_at", "id"),
        Index("ix_attachments_project_id", "project_id"),
        Index("ix_attachments_created_by_id", "created_by_id"),
    )

    issue_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("issues.id", ondelete="CASCADE"))
    project_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("projects.id", ondelete="CASCADE"))
    organization_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.id", ondelete="CASCADE")
    )
    created_by_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    filename: Mapped[str] = mapped_column(String(MAX_FILENAME_LENGTH))
    content_type: Mapped[str] = mapped_column(String(100))
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    storage_key: Mapped[str] = mapped_column(String(200), unique=True)
    thumbnail_key: Mapped[str | None] = mapped_column(String(200), nullable=True)

    created_by = relationship("User", lazy="joined")

    @property
    def has_thumbnail(self) -> bool:
        return self.thumbnail_key is not None

    @property
    def stored_keys(self) -> list[str]:
        return [key for key in (self.storage_key, self.thumbnail_key) if key]
