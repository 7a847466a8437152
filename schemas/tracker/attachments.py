"""Files attached to issues (the upload itself is ``multipart/form-data``, see the route)."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields

from schemas.tracker.collab import Person


class Attachment(ma.Schema):
    id = fields.UUID(required=True)
    filename = fields.String(
        required=True,
        metadata={"description": "The uploaded file's name, without path, control characters, at most 255"},
    )
    content_type = fields.String(
        required=True,
        metadata={"description": "Sniffed from the file's bytes, never taken from the client"},
    )
    size_bytes = fields.Integer(required=True)
    has_thumbnail = fields.Boolean(
        required=True, metadata={"description": "An image whose thumbnail `…/thumbnail` serves"}
    )
    created_by = fields.Nested(
        Person, allow_none=True, metadata={"description": "Who uploaded it; null once the account is gone"}
    )
    created_at = fields.DateTime(required=True)


class AttachmentList(ma.Schema):
    attachments = fields.List(fields.Nested(Attachment), required=True)


# The upload's body, documented as OpenAPI has it (webargs does not read files).
UPLOAD_BODY = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["file"],
                "properties": {
                    "file": {
                        "type": "string",
                        "format": "binary",
                        "description": "The file; at most the instance's MAX_ATTACHMENT_BYTES (25 MiB by default)",
                    }
                },
            }
        }
    },
}
