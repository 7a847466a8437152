"""Base schemas: how each dialect treats fields it does not know."""

from __future__ import annotations

import marshmallow as ma


class StockSchema(ma.Schema):
    """Remanejamento bodies ignore unknown fields, as the FastAPI contract does."""

    class Meta:
        unknown = ma.EXCLUDE


class TrackerSchema(ma.Schema):
    """Tracker bodies reject unknown fields, so a typo in a PATCH is not silently dropped."""

    class Meta:
        unknown = ma.RAISE


class QuerySchema(ma.Schema):
    """Query strings tolerate extra parameters (cache busters, tracking)."""

    class Meta:
        unknown = ma.EXCLUDE


class StockErrorItem(ma.Schema):
    loc = ma.fields.List(ma.fields.Raw(), required=True)
    msg = ma.fields.String(required=True)
    type = ma.fields.String(required=True)


class StockValidationError(ma.Schema):
    detail = ma.fields.List(ma.fields.Nested(StockErrorItem), required=True)


# gunicorn refuses a request line or header past its limits before any path is read, so
# its answer (security.answer_gunicorn_refusals_in_json) carries both dialects' members.
_REFUSED_UNREAD = (
    "On a request refused before its path was read (a request line or header past the server's limits)"
)


class StockError(ma.Schema):
    detail = ma.fields.String(required=True)
    error = ma.fields.String(metadata={"description": f"{_REFUSED_UNREAD}: the tracker dialect's code"})
    message = ma.fields.String(metadata={"description": f"{_REFUSED_UNREAD}: the tracker dialect's message"})


class TrackerError(ma.Schema):
    error = ma.fields.String(required=True, metadata={"description": "Machine-readable code"})
    message = ma.fields.String(required=True)
    # A list of bad fields on VALIDATION_ERROR; an object naming the feature when a plan lacks one.
    details = ma.fields.Raw(
        metadata={
            "description": "On VALIDATION_ERROR: each bad field, `[{field, message}]`. On "
            "PLAN_LIMIT_REACHED for a feature the plan lacks: `{feature, plan, available_in}`",
            "oneOf": [
                {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
                    },
                },
                {
                    "type": "object",
                    "properties": {
                        "feature": {"type": "string"},
                        "plan": {"type": "string"},
                        "available_in": {"type": "array", "items": {"type": "string"}},
                    },
                },
            ],
        }
    )
    field = ma.fields.String(
        metadata={"description": "On CONFLICT, when one field's value is the cause (`email`, `slug`, ...)"}
    )
    request_id = ma.fields.String(
        metadata={
            "description": "On INTERNAL_ERROR: the request's id (also in `X-Request-ID`), to find its log"
        }
    )
    resource = ma.fields.String(
        metadata={
            "description": "On PLAN_LIMIT_REACHED: the limit reached (`members`, `projects`, `issues`, "
            "`storage_bytes`)"
        }
    )
    limit = ma.fields.Integer(metadata={"description": "On PLAN_LIMIT_REACHED: what the plan allows"})
    current = ma.fields.Integer(metadata={"description": "On PLAN_LIMIT_REACHED: what is used now"})
    plan = ma.fields.String(metadata={"description": "On PLAN_LIMIT_REACHED: the organization's plan"})
    detail = ma.fields.String(
        metadata={"description": f"{_REFUSED_UNREAD}: the remanejamento dialect's text"}
    )
