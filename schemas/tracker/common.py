"""Field validators and paging shapes shared by the tracker's schemas."""

from __future__ import annotations

from marshmallow import validate

from schemas.common import QuerySchema
from schemas.fields import Integer, Text

COLOR = validate.Regexp(r"^#[0-9a-fA-F]{6}\Z", error="Must be a hex colour like #1a2b3c")
SLUG = validate.Regexp(
    r"^[a-z0-9]+(?:-[a-z0-9]+)*\Z", error="Lowercase letters, digits and single hyphens only"
)
MAX_INT = 2_147_483_647
MARKDOWN_MAX = 100_000


def name_field(max_length: int = 200, **kwargs) -> Text:
    return Text(min_length=1, max_length=max_length, **kwargs)


def markdown_field(**kwargs) -> Text:
    """Multi-line Markdown, kept as sent (leading indentation is meaningful there)."""
    return Text(max_length=MARKDOWN_MAX, multiline=True, strip=False, **kwargs)


def slug_field(**kwargs) -> Text:
    return Text(min_length=2, max_length=80, validate=SLUG, **kwargs)


def color_field(**kwargs) -> Text:
    return Text(max_length=7, validate=COLOR, **kwargs)


class PageQuery(QuerySchema):
    page = Integer(load_default=1, minimum=1, maximum=10_000_000)
    per_page = Integer(
        load_default=50,
        minimum=1,
        maximum=1000,
        metadata={"description": "Default 50; values from 101 to 1000 are clamped to 100."},
    )
