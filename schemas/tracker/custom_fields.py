"""Custom field definitions and the ``custom_fields`` object of an issue."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from marshmallow import fields, post_load

from models.tracker_fields import CUSTOM_FIELD_TYPES
from schemas.common import TrackerSchema
from schemas.fields import Boolean, List, Text, choice
from schemas.tracker.common import name_field
from services.tracker.custom_fields import (
    MAX_FIELDS_PER_PROJECT,
    MAX_NUMBER,
    MAX_TEXT_LENGTH,
    FieldDefinition,
)

MAX_OPTIONS = 100
OPTION_LENGTH = 100
VALUE_DESCRIPTION = (
    "Keyed by the field's slug (a-z, 0-9 and `_`, at most 64 characters; its id is accepted too "
    "on input; any other key is refused naming it). By type: text a string "
    f"(at most {MAX_TEXT_LENGTH} characters; blank clears), number a JSON number (|n| <= 1e15), "
    "date `YYYY-MM-DD`, select one of the field's options, multi_select a list of them. `null` "
    "clears a value; fields left out keep theirs. Read back with every field of the project, "
    "`null` when unset; `{}` when the organization's plan lacks `custom_fields`."
)


class CustomFieldValues(fields.Dict):
    """The ``custom_fields`` object: at most one entry per field of a project, values checked by
    the service against each field's type."""

    default_error_messages = {"too_many": "Must have at most {max} fields."}

    def __init__(self, **kwargs: Any):
        value_schema = {
            "nullable": True,
            "oneOf": [
                {"type": "string", "maxLength": MAX_TEXT_LENGTH},
                {"type": "number", "minimum": -MAX_NUMBER, "maximum": MAX_NUMBER},
                {
                    "type": "array",
                    "maxItems": MAX_OPTIONS,
                    "items": {"type": "string", "maxLength": OPTION_LENGTH},
                },
            ],
        }
        metadata = {
            "description": VALUE_DESCRIPTION,
            "maxProperties": MAX_FIELDS_PER_PROJECT,
            "additionalProperties": value_schema,
        }
        super().__init__(
            keys=Text(min_length=1, max_length=64),
            values=fields.Raw(allow_none=True),
            metadata=metadata,
            **kwargs,
        )

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, dict) and len(value) > MAX_FIELDS_PER_PROJECT:
            raise self.make_error("too_many", max=MAX_FIELDS_PER_PROJECT)
        return super()._deserialize(value, attr, data, **kwargs)


def values_field(**kwargs: Any) -> CustomFieldValues:
    return CustomFieldValues(**kwargs)


def _options(**kwargs: Any) -> List:
    return List(Text(min_length=1, max_length=OPTION_LENGTH), max_items=MAX_OPTIONS, **kwargs)


class CustomFieldCreate(TrackerSchema):
    name = name_field(100, required=True, metadata={"description": "The slug is derived from it"})
    type = choice(CUSTOM_FIELD_TYPES, required=True)
    options = _options(metadata={"description": "Required (non-empty, distinct) for select and multi_select"})
    required = Boolean(load_default=False)

    @post_load
    def definition(self, data: dict, **_kwargs: Any) -> FieldDefinition:
        return FieldDefinition(
            name=data["name"], type=data["type"], options=data.get("options") or [], required=data["required"]
        )


class CustomFieldUpdate(TrackerSchema):
    name = name_field(100, metadata={"description": "Renaming keeps the slug"})
    options = _options(metadata={"description": "Replaces the list; issues lose an option taken out of it"})
    required = Boolean()


class CustomField(ma.Schema):
    id = fields.UUID(required=True)
    project_id = fields.UUID(required=True)
    name = fields.String(required=True)
    slug = fields.String(
        required=True,
        metadata={"description": "Derived from the name at creation (a-z, 0-9, _); never changes"},
    )
    type = fields.String(required=True, metadata={"enum": list(CUSTOM_FIELD_TYPES)})
    options = fields.List(fields.String(), required=True)
    required = fields.Boolean(required=True)
    position = fields.Integer(required=True)
    created_at = fields.DateTime(required=True)


class CustomFieldList(ma.Schema):
    custom_fields = fields.List(fields.Nested(CustomField), required=True)
