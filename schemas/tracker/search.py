"""The workspace search's query and answer."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields

from schemas.fields import Integer, Text, choice
from schemas.tracker.common import PageQuery
from schemas.tracker.issues import Issue
from services.tracker.semantic import MODES


class SearchQuery(PageQuery):
    q = Text(required=True, min_length=1, max_length=500, metadata={"description": "What to look for"})
    mode = choice(
        MODES,
        load_default="keyword",
        metadata={"description": "keyword (every plan), semantic or hybrid (plan feature semantic_search)"},
    )
    project_id = fields.UUID(metadata={"description": "Only this project of the workspace"})
    per_page = Integer(
        load_default=20,
        minimum=1,
        maximum=1000,
        metadata={"description": "Default 20; values from 101 to 1000 are clamped to 100."},
    )


class SearchResult(ma.Schema):
    issue = fields.Nested(Issue, required=True)
    score = fields.Float(
        required=True,
        metadata={
            "description": "keyword: BM25; semantic: cosine similarity; hybrid: reciprocal rank fusion"
        },
    )
    highlight = fields.String(
        required=True,
        metadata={
            "description": "The best matching passage as HTML: all text escaped, the matched words "
            "inside <mark>…</mark> (the only tags)"
        },
    )


class SearchPage(ma.Schema):
    results = fields.List(fields.Nested(SearchResult), required=True)
    total = fields.Integer(required=True)
    page = fields.Integer(required=True)
    per_page = fields.Integer(required=True)
    mode = fields.String(required=True, metadata={"enum": list(MODES)})
