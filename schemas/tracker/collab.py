"""Working together: organizations created by a member, comments, activity, watching, notifications."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import ValidationError, fields, validates_schema

from models.tracker_collab import ACTIVITY_KINDS, NOTIFICATION_KINDS
from schemas.common import TrackerSchema
from schemas.fields import Boolean, List, text_pattern
from schemas.tracker.accounts import MyOrganization
from schemas.tracker.common import PageQuery, markdown_field, name_field
from schemas.tracker.tenancy import Workspace

MAX_READ_IDS = 500


def _not_blank(text: str) -> None:
    if not text.strip():
        raise ValidationError("Must not be blank.")


class OrganizationCreate(TrackerSchema):
    name = name_field(required=True)


class CreatedOrganization(MyOrganization):
    workspace = fields.Nested(Workspace, required=True, metadata={"description": "The default workspace"})


class Person(ma.Schema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)


class CommentWrite(TrackerSchema):
    body = markdown_field(
        required=True,
        validate=_not_blank,
        metadata={
            "pattern": text_pattern(multiline=True, not_blank=True),
            "description": (
                "Markdown, kept as written; not blank (white space alone is refused). `@address` "
                "(`@ana@loja.com.br`) mentions a member of the organization by e-mail address, "
                "except inside code."
            ),
        },
    )


class Comment(ma.Schema):
    id = fields.UUID(required=True)
    body = fields.String(required=True, metadata={"description": "Markdown as written"})
    author = fields.Nested(Person, allow_none=True, metadata={"description": "null once the account is gone"})
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)
    edited = fields.Boolean(required=True, metadata={"description": "The author changed it after posting"})
    mentions = fields.List(
        fields.Nested(Person),
        attribute="mentioned",
        required=True,
        metadata={
            "description": (
                "The members the body's `@address` mentions named when they were written, each once, "
                "by current name; still them after they change address"
            )
        },
    )


class CommentPage(ma.Schema):
    comments = fields.List(fields.Nested(Comment), required=True)
    total = fields.Integer(required=True)
    page = fields.Integer(required=True)
    per_page = fields.Integer(required=True)


class Activity(ma.Schema):
    id = fields.Integer(required=True)
    kind = fields.String(required=True, metadata={"enum": list(ACTIVITY_KINDS)})
    field = fields.String(
        allow_none=True,
        metadata={
            "description": "The field changed (`updated`, `status_changed`) or the relation type (`relation_*`)"
        },
    )
    old = fields.Raw(attribute="old_value", allow_none=True, metadata={"description": "The value before"})
    new = fields.Raw(attribute="new_value", allow_none=True, metadata={"description": "The value after"})
    actor = fields.Nested(Person, allow_none=True)
    created_at = fields.DateTime(required=True)


class ActivityPage(ma.Schema):
    activity = fields.List(fields.Nested(Activity), required=True)
    total = fields.Integer(required=True)
    page = fields.Integer(required=True)
    per_page = fields.Integer(required=True)


class NotificationIssue(ma.Schema):
    id = fields.UUID(required=True)
    key = fields.String(required=True)
    title = fields.String(required=True)
    project_id = fields.UUID(required=True)
    workspace_slug = fields.String(
        required=True, metadata={"description": "With project_id: the issue's path"}
    )


class Notification(ma.Schema):
    id = fields.UUID(required=True)
    kind = fields.String(required=True, metadata={"enum": list(NOTIFICATION_KINDS)})
    issue = fields.Nested(NotificationIssue, required=True)
    actor = fields.Nested(Person, allow_none=True, metadata={"description": "Who acted"})
    read = fields.Boolean(required=True)
    created_at = fields.DateTime(required=True)


class NotificationPage(ma.Schema):
    notifications = fields.List(fields.Nested(Notification), required=True)
    unread = fields.Integer(
        required=True, metadata={"description": "Unread notifications, whatever the filter"}
    )
    total = fields.Integer(required=True)
    page = fields.Integer(required=True)
    per_page = fields.Integer(required=True)


class NotificationQuery(PageQuery):
    unread = Boolean(load_default=False, metadata={"description": "Only the unread ones"})


class MarkRead(TrackerSchema):
    ids = List(
        fields.UUID(),
        max_items=MAX_READ_IDS,
        metadata={"description": "These notifications. Send either `ids` or `all: true`, not both"},
    )
    everything = Boolean(
        data_key="all",
        metadata={
            "description": "`true`: every notification of mine (`false` is refused). Or `ids`, not both"
        },
    )

    @validates_schema
    def _one_of(self, data, **_kwargs) -> None:
        if "ids" in data and "everything" in data:
            raise ValidationError("Send either ids or all, not both.", field_name="all")
        if "ids" not in data and "everything" not in data:
            raise ValidationError("Send ids, or all: true.", field_name="ids")
        if data.get("everything") is False:
            raise ValidationError("Must be true; send ids to mark some.", field_name="all")


class NotificationPreferences(TrackerSchema):
    email = Boolean(
        required=True,
        metadata={"description": "E-mail me my notifications (batched); the app's inbox is always kept"},
    )
