"""What the tracker's search over titles, descriptions and comments keeps beside the issues.

- ``issue_vectors``: per issue, its vector (float32 bytes) and its words as
  keyword search reads them (title, description and comments, lower-case and
  without accents); ``revision`` orders the writes, so a process's in-memory
  matrix loads only what changed since it last looked.
- ``search_models``: per organization, the encoder that made its vectors (the
  built-in one's fitted state, or the operator's ONNX model by name) and the
  organization's revision counter.
- ``search_pending``: issues whose text changed since their vector was made; the
  ``busca`` job drains them.

Every row hangs off its issue or organization (``ON DELETE CASCADE``): a deleted
issue's vector goes with it.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, LargeBinary, String, Text, Uuid, text
from sqlalchemy.orm import Mapped, mapped_column

from extensions import db
from models.base import UTCDateTime, utcnow

# The stored words as lexemes, without parser or stemming: exactly the words ``LIKE`` would
# read (a function of migration 0039's, declared expensive so that the planner reads its index).
WORD_LEXEMES = "issue_word_lexemes(words)"


class IssueVector(db.Model):
    __tablename__ = "issue_vectors"
    __table_args__ = (
        # A process catching up reads the organization's rows written after a revision.
        Index("ix_issue_vectors_organization_revision", "organization_id", "revision"),
        # Keyword search on PostgreSQL: the stored words as lexemes, with prefix queries
        # (``services.tracker.semantic.LEXEMES``, the same expression); SQLite reads ``LIKE``.
        Index("ix_issue_vectors_words_lexemes", text(WORD_LEXEMES), postgresql_using="gin").ddl_if(
            dialect="postgresql"
        ),
    )

    issue_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("issues.id", ondelete="CASCADE"), primary_key=True
    )
    organization_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.id", ondelete="CASCADE")
    )
    project_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("projects.id", ondelete="CASCADE"))
    model_version: Mapped[int] = mapped_column(Integer)
    revision: Mapped[int] = mapped_column(BigInteger)
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    words: Mapped[str] = mapped_column(Text, default="")
    embedded_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class SearchModel(db.Model):
    __tablename__ = "search_models"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True
    )
    encoder: Mapped[str] = mapped_column(String(200))  # "lsa" or "onnx:<model directory name>"
    version: Mapped[int] = mapped_column(Integer, default=1)  # bumped by each refit
    dims: Mapped[int] = mapped_column(Integer)
    # Read only when a process loads the fit (megabytes at scale), not with every search.
    state: Mapped[bytes] = mapped_column(LargeBinary, deferred=True)
    documents: Mapped[int] = mapped_column(Integer, default=0)  # issues it was fitted on
    revision: Mapped[int] = mapped_column(BigInteger, default=0)
    fitted_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class SearchPending(db.Model):
    __tablename__ = "search_pending"
    __table_args__ = (Index("ix_search_pending_organization_id", "organization_id"),)

    issue_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("issues.id", ondelete="CASCADE"), primary_key=True
    )
    organization_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.id", ondelete="CASCADE")
    )
    queued_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
