"""Field validators and paging shapes shared by the tracker's schemas."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields, validate

from schemas.common import QuerySchema

COLOR = validate.Regexp(r"^#[0-9a-fA-F]{6}\Z", error="Must be a hex colour like #1a2b3c")
SLUG = validate.Regexp(
    r"^[a-z0-9]+(?:-[a-z0-9]+)*\Z", error="Lowercase letters, digits and single hyphens only"
)
MAX_INT = 2_147_483_647


def no_nul(value: str) -> None:
    """PostgreSQL text cannot hold NUL characters: refuse them as bad input, not a server error."""
    if "\x00" in value:
        raise ma.ValidationError("Must not contain NUL characters.")


class Text(fields.String):
    """A string field that refuses NUL characters."""

    def __init__(self, *args, validate=None, **kwargs):
        validators = [no_nul]
        if validate is not None:
            validators.extend(validate if isinstance(validate, list | tuple) else [validate])
        super().__init__(*args, validate=validators, **kwargs)


def name_field(max_length: int = 200, **kwargs) -> fields.String:
    return Text(validate=validate.Length(min=1, max=max_length), **kwargs)


class PageQuery(QuerySchema):
    page = fields.Integer(load_default=1, validate=validate.Range(min=1, max=10_000_000))
    per_page = fields.Integer(
        load_default=50,
        validate=validate.Range(min=1),
        metadata={"description": "Default 50; values above 100 are clamped to 100."},
    )


class PageInfo(ma.Schema):
    total = fields.Integer(required=True)
    page = fields.Integer(required=True)
    per_page = fields.Integer(required=True)
