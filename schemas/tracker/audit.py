"""The audit log's query and entries."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields, post_load

from models.tracker_audit import AUDIT_ACTIONS
from schemas.fields import choice
from schemas.tracker.common import PageQuery
from services.tracker.audit import AuditFilter


class AuditLogQuery(PageQuery):
    actor_id = fields.UUID(metadata={"description": "Only what this person did"})
    action = choice(AUDIT_ACTIONS, metadata={"description": "Only this action"})
    since = fields.DateTime(
        metadata={"description": "From this moment on (inclusive); without an offset it is UTC"}
    )
    until = fields.DateTime(
        metadata={"description": "Before this moment (exclusive); without an offset it is UTC"}
    )
    format = choice(
        ("json", "csv"),
        load_default="json",
        metadata={"description": "`csv`: every match (newest first, up to 100,000) as a CSV download"},
    )

    @post_load
    def to_filter(self, data: dict, **_kwargs) -> AuditFilter:
        return AuditFilter(**data)


class AuditActor(ma.Schema):
    id = fields.UUID(allow_none=True, metadata={"description": "null once the account is gone"})
    name = fields.String(allow_none=True, metadata={"description": "Their name when it happened"})


class AuditTarget(ma.Schema):
    type = fields.String(
        required=True,
        metadata={
            "enum": ["organization", "member", "invitation", "workspace", "project", "status", "label"]
        },
    )
    id = fields.String(allow_none=True)
    name = fields.String(allow_none=True, metadata={"description": "Its name (or address) when it happened"})


class AuditEvent(ma.Schema):
    id = fields.Integer(required=True)
    action = fields.String(required=True, metadata={"enum": list(AUDIT_ACTIONS)})
    actor = fields.Nested(
        AuditActor,
        allow_none=True,
        metadata={"description": "Who did it; null for the platform's operator (CLI)"},
    )
    target = fields.Nested(AuditTarget, required=True)
    details = fields.Raw(
        allow_none=True,
        metadata={
            "description": "What changed: `old` and `new` values, and context such as the `project` key"
        },
    )
    created_at = fields.DateTime(required=True)


class AuditLogPage(ma.Schema):
    events = fields.List(fields.Nested(AuditEvent), required=True)
    total = fields.Integer(required=True)
    page = fields.Integer(required=True)
    per_page = fields.Integer(required=True)
