"""Issue bodies and the list query."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields

from models.tracker import ISSUE_TYPES, PRIORITIES, RELATION_TYPES
from schemas.common import TrackerSchema
from schemas.fields import Integer, List, Text, choice
from schemas.tracker.common import MAX_INT, PageQuery, markdown_field
from schemas.tracker.custom_fields import values_field
from schemas.tracker.tenancy import Label
from services.tracker.issues import MAX_BULK
from services.tracker.ranking import RANK_LIMIT

ORDER_BY = ("created_at", "updated_at", "priority", "due_date", "rank")
MAX_LABELS = 50
MAX_FILTER_VALUES = 50  # repeated values of one list filter


class IssueWrite(TrackerSchema):
    """Every editable field; on PATCH any subset, and ``null`` clears an optional one."""

    title = Text(min_length=1, max_length=500)
    description = markdown_field(allow_none=True)
    type = choice(ISSUE_TYPES)
    priority = choice(PRIORITIES)
    status_id = fields.UUID()
    assignee_id = fields.UUID(allow_none=True)
    label_ids = List(fields.UUID(), max_items=MAX_LABELS)
    parent_id = fields.UUID(allow_none=True)
    start_date = fields.Date(allow_none=True)
    due_date = fields.Date(allow_none=True)
    estimate = Integer(allow_none=True, minimum=0, maximum=MAX_INT)
    custom_fields = values_field()


class IssueCreate(IssueWrite):
    title = Text(required=True, min_length=1, max_length=500)


class IssueUpdate(IssueWrite):
    """PATCH: the editable fields and the issue's place on the board."""

    rank = Integer(
        minimum=-RANK_LIMIT,
        maximum=RANK_LIMIT,
        metadata={"description": "An explicit board position (smaller first); not with before_id/after_id"},
    )
    before_id = fields.UUID(
        metadata={"description": "Put the issue right before (above) this issue of the project"}
    )
    after_id = fields.UUID(
        metadata={"description": "Put the issue right after (below) this issue of the project"}
    )


class BulkChanges(TrackerSchema):
    status_id = fields.UUID()
    assignee_id = fields.UUID(allow_none=True, metadata={"description": "null unassigns"})
    priority = choice(PRIORITIES)
    add_label_ids = List(fields.UUID(), max_items=MAX_LABELS, metadata={"description": "Labels to add"})
    remove_label_ids = List(
        fields.UUID(), max_items=MAX_LABELS, metadata={"description": "Labels to take off"}
    )


class BulkUpdate(TrackerSchema):
    keys = List(
        Text(min_length=1, max_length=30),
        required=True,
        min_items=1,
        max_items=MAX_BULK,
        metadata={"description": "Issue keys of this project (`WEB-12`), at most 100"},
    )
    changes = fields.Nested(BulkChanges, required=True)


class BulkResult(ma.Schema):
    updated = fields.Integer(
        required=True,
        metadata={"description": "Issues that changed (those already as asked are not counted)"},
    )


class IssueListQuery(PageQuery):
    status_id = List(
        fields.UUID(),
        max_items=MAX_FILTER_VALUES,
        metadata={"description": "Repeatable: any of these statuses"},
    )
    priority = List(choice(PRIORITIES), max_items=MAX_FILTER_VALUES, metadata={"description": "Repeatable"})
    type = List(choice(ISSUE_TYPES), max_items=MAX_FILTER_VALUES, metadata={"description": "Repeatable"})
    assignee_id = fields.UUID()
    label_id = List(
        fields.UUID(),
        max_items=MAX_FILTER_VALUES,
        metadata={"description": "Repeatable: issues carrying any of these labels"},
    )
    parent_id = fields.UUID()
    q = Text(
        max_length=200,
        metadata={
            "description": (
                "Title search: every word of q must occur inside some word of the title, "
                "ignoring case and accents, in any order ('calcado check' finds 'Checkout do Calçado'). "
                "total stays exact."
            )
        },
    )
    custom_field = List(
        Text(max_length=300),
        max_items=MAX_FILTER_VALUES,
        metadata={
            "description": (
                "Repeatable `<slug>:<value>`; every term must hold. Text matches the whole value "
                "exactly, number and date (`YYYY-MM-DD`) by equality, select by its option; a "
                "multi_select matches when it holds the option. An unknown slug or a bad value is "
                "400; 402 when the plan lacks `custom_fields`."
            )
        },
    )
    order_by = choice(ORDER_BY, load_default="created_at")
    order = choice(
        ("asc", "desc"),
        metadata={"description": "Default `desc`, except `asc` for `order_by=rank` (top of the board first)"},
    )


class StatusRef(ma.Schema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    color = fields.String(required=True)
    category = fields.String(required=True)


class Assignee(ma.Schema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    avatar_url = fields.String(allow_none=True)


class Creator(ma.Schema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)


class IssueRef(ma.Schema):
    id = fields.UUID(required=True)
    key = fields.String(required=True)
    title = fields.String(required=True)


class Issue(ma.Schema):
    id = fields.UUID(required=True)
    key = fields.String(required=True)
    project_id = fields.UUID(required=True)
    title = fields.String(required=True)
    description = fields.String(allow_none=True)
    type = fields.String(required=True, metadata={"enum": list(ISSUE_TYPES)})
    priority = fields.String(required=True, attribute="priority_name", metadata={"enum": list(PRIORITIES)})
    status = fields.Nested(StatusRef, required=True)
    assignee = fields.Nested(Assignee, allow_none=True)
    labels = fields.List(fields.Nested(Label), required=True)
    parent_id = fields.UUID(allow_none=True)
    children_count = fields.Integer(required=True)
    start_date = fields.Date(allow_none=True)
    due_date = fields.Date(allow_none=True)
    estimate = fields.Integer(allow_none=True)
    rank = fields.Integer(
        required=True, metadata={"description": "Board position within the project, smaller first"}
    )
    created_by = fields.Nested(Creator, allow_none=True)
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)
    custom_fields = fields.Dict(
        required=True,
        metadata={"description": "Every custom field of the project by slug, `null` when unset"},
    )


class Relation(ma.Schema):
    id = fields.UUID(required=True, metadata={"description": "What DELETE .../relations/{relation_id} takes"})
    type = fields.String(required=True, metadata={"enum": list(RELATION_TYPES)})
    issue = fields.Nested(IssueRef, required=True, attribute="related_issue")


class IssueDetail(Issue):
    relations = fields.List(fields.Nested(Relation), required=True)
    children = fields.List(fields.Nested(IssueRef), required=True)


class IssuePage(ma.Schema):
    issues = fields.List(fields.Nested(Issue), required=True)
    total = fields.Integer(required=True)
    page = fields.Integer(required=True)
    per_page = fields.Integer(required=True)


class RelationCreate(TrackerSchema):
    type = choice(RELATION_TYPES, required=True)
    related_issue_id = fields.UUID(required=True)
