"""Custom fields: a project's own issue fields and the values issues give them.

A value is stored in the typed column its field's type reads (``text_value``
for text, select and each option of a multi-select, ``number_value``,
``date_value``), so the list filter compares like with like on both engines. A
multi-select value is one row per chosen option: "carries this option" is an
equality test, no JSON function needed.
"""

from __future__ import annotations

import uuid
from datetime import date

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Date,
    Double,
    ForeignKey,
    Index,
    SmallInteger,
    String,
    UniqueConstraint,
    Uuid,
)
from sqlalchemy.orm import Mapped, mapped_column

from extensions import db
from models.base import CreatedAt, UUIDPrimaryKey

CUSTOM_FIELD_TYPES = ("text", "number", "date", "select", "multi_select")
SELECT_TYPES = ("select", "multi_select")
# The history names a change ``custom_fields.<slug>`` in a 40-character column.
MAX_SLUG_LENGTH = 26


class CustomField(UUIDPrimaryKey, CreatedAt, db.Model):
    __tablename__ = "custom_fields"
    __table_args__ = (
        UniqueConstraint("project_id", "slug", name="uq_custom_fields_project_id_slug"),
        CheckConstraint("type IN ('text', 'number', 'date', 'select', 'multi_select')", name="type_valid"),
    )

    project_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(100))
    slug: Mapped[str] = mapped_column(String(MAX_SLUG_LENGTH))
    type: Mapped[str] = mapped_column(String(20))
    # The choices of a select or multi-select, in the order they are offered; [] otherwise.
    options: Mapped[list[str]] = mapped_column(JSON)
    required: Mapped[bool] = mapped_column(Boolean, default=False)
    position: Mapped[int] = mapped_column(SmallInteger, default=0)


class CustomFieldValue(UUIDPrimaryKey, db.Model):
    __tablename__ = "custom_field_values"
    __table_args__ = (
        # A page of issues reads its values by issue.
        Index("ix_custom_field_values_issue_id", "issue_id", "field_id"),
        # The list filter: the issues whose field holds a value.
        Index("ix_custom_field_values_field_text", "field_id", "text_value"),
        Index("ix_custom_field_values_field_number", "field_id", "number_value"),
        Index("ix_custom_field_values_field_date", "field_id", "date_value"),
    )

    issue_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("issues.id", ondelete="CASCADE"))
    field_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("custom_fields.id", ondelete="CASCADE"))
    text_value: Mapped[str | None] = mapped_column(String(2000), nullable=True)
    number_value: Mapped[float | None] = mapped_column(Double, nullable=True)
    date_value: Mapped[date | None] = mapped_column(Date, nullable=True)
