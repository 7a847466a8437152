"""Issue bodies and the list query."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields, validate

from models.tracker import ISSUE_TYPES, PRIORITIES, RELATION_TYPES
from schemas.common import TrackerSchema
from schemas.tracker.common import MAX_INT, PageQuery, Text
from schemas.tracker.tenancy import Label

ORDER_BY = ("created_at", "updated_at", "priority", "due_date")


class IssueWrite(TrackerSchema):
    """Every editable field; on PATCH any subset, and ``null`` clears an optional one."""

    title = Text(validate=validate.Length(min=1, max=500))
    description = Text(allow_none=True, validate=validate.Length(max=100_000))
    type = fields.String(validate=validate.OneOf(ISSUE_TYPES))
    priority = fields.String(validate=validate.OneOf(PRIORITIES))
    status_id = fields.UUID()
    assignee_id = fields.UUID(allow_none=True)
    label_ids = fields.List(fields.UUID(), validate=validate.Length(max=50))
    parent_id = fields.UUID(allow_none=True)
    start_date = fields.Date(allow_none=True)
    due_date = fields.Date(allow_none=True)
    estimate = fields.Integer(allow_none=True, validate=validate.Range(min=0, max=MAX_INT))


class IssueCreate(IssueWrite):
    title = Text(required=True, validate=validate.Length(min=1, max=500))


class IssueListQuery(PageQuery):
    status_id = fields.List(fields.UUID(), metadata={"description": "Repeatable: any of these statuses"})
    priority = fields.List(
        fields.String(validate=validate.OneOf(PRIORITIES)), metadata={"description": "Repeatable"}
    )
    type = fields.List(
        fields.String(validate=validate.OneOf(ISSUE_TYPES)), metadata={"description": "Repeatable"}
    )
    assignee_id = fields.UUID()
    label_id = fields.List(
        fields.UUID(), metadata={"description": "Repeatable: issues carrying any of these labels"}
    )
    parent_id = fields.UUID()
    q = Text(
        validate=validate.Length(max=200),
        metadata={
            "description": (
                "Title search: every word of q must occur inside some word of the title, "
                "ignoring case and accents, in any order ('calcado check' finds 'Checkout do Calçado'). "
                "total stays exact."
            )
        },
    )
    order_by = fields.String(load_default="created_at", validate=validate.OneOf(ORDER_BY))
    order = fields.String(load_default="desc", validate=validate.OneOf(("asc", "desc")))


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
    created_by = fields.Nested(Creator, allow_none=True)
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)


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
    type = fields.String(required=True, validate=validate.OneOf(RELATION_TYPES))
    related_issue_id = fields.UUID(required=True)
