"""Files attached to an issue, from its page: upload (file input, drag and drop, an image
pasted into the comment box; ``static/js/attachments.js`` shows the progress), download,
thumbnail, delete.

Every view calls the services the REST API calls (``services.tracker.attachments``), so who
may upload, read or delete is decided there: another organization's file is 404, a
viewer's upload 403. Downloads carry the same headers as the API's.
"""

from __future__ import annotations

import uuid

from flask import current_app
from flask_jwt_extended import current_user

from blueprints.pages.common import (
    after_change,
    end_transaction,
    page_login_required,
    refused,
    wants_fragment,
)
from blueprints.pages.tracker_common import TrackerPagesBlueprint
from blueprints.pages.tracker_issue import issue_block
from blueprints.uploads import declared_file_bytes, download_response, file_upload
from services.errors import DomainError
from services.tracker import attachments

blp = TrackerPagesBlueprint("attachment_pages", __name__)

ISSUE = "/w/<slug>/p/<uuid:project_id>/issues/<key>"
BLOCK = "issue_attachments"


def _changed(slug: str, project_id: uuid.UUID, key: str):
    if not wants_fragment():
        response = after_change("issue_pages.issue", slug=slug, project_id=project_id, key=key)
        if response.location:
            response.location += "#issue-attachments"
        return response
    return issue_block(slug, project_id, key, BLOCK)


def _refused(exc: DomainError, slug: str, project_id: uuid.UUID, key: str):
    refusal = refused(exc)
    return issue_block(slug, project_id, key, BLOCK, status=refusal.status, attachment_error=refusal.message)


@blp.route(f"{ISSUE}/anexos", methods=["POST"])
@page_login_required()
def upload(slug: str, project_id: uuid.UUID, key: str):
    """Attach one file (field ``file``). As in the API, no transaction stays open while the
    bytes arrive: the checks are committed first, the row written once the file is stored."""
    user = current_user._get_current_object()
    try:
        organization_id = attachments.check_upload(user, slug, project_id, key, declared_file_bytes())
        end_transaction(commit=True)
        limit = current_app.config["MAX_ATTACHMENT_BYTES"]
        stored = attachments.store(organization_id, file_upload(), limit)
        attachments.create(user, slug, project_id, key, stored)
    except DomainError as exc:
        return _refused(exc, slug, project_id, key)
    return _changed(slug, project_id, key)


@blp.route(f"{ISSUE}/anexos/<uuid:attachment_id>")
@page_login_required()
def download(slug: str, project_id: uuid.UUID, key: str, attachment_id: uuid.UUID):
    found = attachments.open_download(current_user, slug, project_id, key, attachment_id)
    end_transaction(commit=False)  # the bytes stream with no transaction open
    return download_response(found)


@blp.route(f"{ISSUE}/anexos/<uuid:attachment_id>/miniatura")
@page_login_required()
def thumbnail(slug: str, project_id: uuid.UUID, key: str, attachment_id: uuid.UUID):
    found = attachments.open_download(current_user, slug, project_id, key, attachment_id, thumbnail=True)
    end_transaction(commit=False)
    return download_response(found, inline_image=True)


@blp.route(f"{ISSUE}/anexos/<uuid:attachment_id>/excluir", methods=["POST"])
@page_login_required()
def delete(slug: str, project_id: uuid.UUID, key: str, attachment_id: uuid.UUID):
    try:
        attachments.delete_attachment(current_user, slug, project_id, key, attachment_id)
    except DomainError as exc:
        return _refused(exc, slug, project_id, key)
    return _changed(slug, project_id, key)
