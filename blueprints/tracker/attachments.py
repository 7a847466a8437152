"""Files attached to an issue: upload, list, download, thumbnail, delete."""

from __future__ import annotations

from functools import partial

from flask import current_app
from flask_jwt_extended import current_user

from blueprints.common import auth_required
from blueprints.parsing import Blueprint
from blueprints.tracker.docs import error_responses
from blueprints.uploads import declared_file_bytes, download_response, file_upload
from extensions import db
from models.auth import User
from schemas.tracker.attachments import UPLOAD_BODY, Attachment, AttachmentList
from services.tracker import attachments

blp = Blueprint(
    "tracker_attachments",
    __name__,
    url_prefix="/workspaces/<slug>/projects/<uuid:project_id>/issues/<key>/attachments",
    description="Files attached to an issue",
)

_errors = partial(error_responses, blp)


def _binary(content_type: str, description: str) -> dict:
    return {
        "200": {
            "description": description,
            "content": {content_type: {"schema": {"type": "string", "format": "binary"}}},
        }
    }


@blp.route("", methods=["GET"])
@auth_required()
@blp.response(200, AttachmentList)
@_errors(403, 404)
def list_attachments(slug, project_id, key):
    """The issue's files, oldest first (anyone who may read the issue, viewers included)."""
    return {"attachments": attachments.list_attachments(current_user, slug, project_id, key)}


@blp.route("", methods=["POST"])
@auth_required()
@blp.doc(requestBody=UPLOAD_BODY)
@blp.response(201, Attachment)
@_errors(400, 402, 403, 404, 413)
def upload_attachment(slug, project_id, key):
    """Attach a file (`multipart/form-data`, field `file`; members, admins and owners, viewers
    get 403).

    The file is streamed to storage as it arrives. Its type is sniffed from its bytes
    (`content_type`), never taken from the client; its name keeps no path or control
    characters. Images (JPEG, PNG, GIF, WebP, BMP) get a thumbnail. Over the instance's
    `MAX_ATTACHMENT_BYTES` (25 MiB by default): 413 `PAYLOAD_TOO_LARGE`, nothing kept. Its
    bytes count toward the organization's storage: past the plan's `storage_bytes`, 402
    `PLAN_LIMIT_REACHED` with `resource`, `limit`, `current` and `plan`. A body that ends
    before the file does answers 400, nothing kept. The issue's history gets an
    `attachment_added` entry and webhooks an `attachment.created` event.
    """
    user = current_user._get_current_object()
    organization_id = attachments.check_upload(user, slug, project_id, key, declared_file_bytes())
    user_id = user.id
    # No transaction stays open (nor, on SQLite, the write lock held) while the bytes arrive.
    db.session.commit()
    stored = attachments.store(organization_id, file_upload(), current_app.config["MAX_ATTACHMENT_BYTES"])
    return attachments.create(db.session.get(User, user_id), slug, project_id, key, stored)


@blp.route("/<uuid:attachment_id>", methods=["GET"])
@auth_required()
@blp.doc(responses=_binary("*/*", "The file, as an attachment (`Content-Disposition: attachment`)"))
@_errors(403, 404)
def download_attachment(slug, project_id, key, attachment_id):
    """Download the file: `Content-Disposition: attachment` (with RFC 6266 `filename*`), its
    sniffed type, `X-Content-Type-Options: nosniff` and a sandboxing CSP, so that no file
    (HTML, SVG) runs in the site's origin. Other organizations' files are 404."""
    found = attachments.open_download(current_user, slug, project_id, key, attachment_id)
    db.session.commit()  # the bytes stream with no transaction open
    return download_response(found)


@blp.route("/<uuid:attachment_id>/thumbnail", methods=["GET"])
@auth_required()
@blp.doc(responses=_binary("image/png", "A PNG at most 320 × 320"))
@_errors(403, 404)
def attachment_thumbnail(slug, project_id, key, attachment_id):
    """The thumbnail of an image (`has_thumbnail`), made at upload; 404 for other files."""
    found = attachments.open_download(current_user, slug, project_id, key, attachment_id, thumbnail=True)
    db.session.commit()
    return download_response(found, inline_image=True)


@blp.route("/<uuid:attachment_id>", methods=["DELETE"])
@auth_required()
@blp.response(204)
@_errors(403, 404)
def delete_attachment(slug, project_id, key, attachment_id):
    """Delete a file: its uploader, or an owner or admin of the organization (403 otherwise).
    Its bytes no longer count toward storage; the stored file is removed once the deletion
    commits. The issue's history gets an `attachment_deleted` entry and webhooks an
    `attachment.deleted` event."""
    attachments.delete_attachment(current_user, slug, project_id, key, attachment_id)
