"""Working together from the pages: an issue's comments and timeline, watching it, and the
inbox of notifications with its e-mail preference.

Every view calls the services the REST API calls (``services.tracker.comments``,
``collaboration``, ``notifications``), so who may comment, edit, delete or read is
decided there: another organization's issue is 404, a viewer's comment 403.
"""

from __future__ import annotations

import uuid

from flask import request, url_for
from flask_jwt_extended import current_user
from marshmallow import ValidationError

from blueprints.pages.common import (
    after_change,
    page_login_required,
    refused,
    render_fragment,
    render_page,
    wants_fragment,
)
from blueprints.pages.tracker_common import TrackerPagesBlueprint
from blueprints.pages.tracker_issue import issue_block, timeline_context
from schemas.tracker.collab import CommentWrite, MarkRead, NotificationQuery
from services.errors import DomainError
from services.tracker import collaboration, comments, notifications

blp = TrackerPagesBlueprint("collab_pages", __name__)

ISSUE = "/w/<slug>/p/<uuid:project_id>/issues/<key>"
INBOX_PAGE = 50


def _back_to_issue(slug: str, project_id: uuid.UUID, key: str, anchor: str):
    """A plain form's answer: the issue page again, at the part that changed."""
    response = after_change("issue_pages.issue", slug=slug, project_id=project_id, key=key)
    if response.location:
        response.location += f"#{anchor}"
    return response


def _timeline_changed(slug: str, project_id: uuid.UUID, key: str):
    if not wants_fragment():
        return _back_to_issue(slug, project_id, key, "issue-timeline")
    return issue_block(slug, project_id, key, "issue_timeline")


# --- comments and the timeline ----------------------------------------------------------------


@blp.route(f"{ISSUE}/comments", methods=["POST"])
@page_login_required()
def create_comment(slug: str, project_id: uuid.UUID, key: str):
    form = {"body": request.form.get("body", "")}
    try:
        body = CommentWrite().load(form)["body"]
        comments.create_comment(current_user, slug, project_id, key, body)
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc)
        errors = {"comment_" + name: message for name, message in refusal.errors.items()}
        return issue_block(
            slug, project_id, key, "issue_timeline", status=refusal.status, errors=errors, form=form
        )
    return _timeline_changed(slug, project_id, key)


@blp.route(f"{ISSUE}/comments/<uuid:comment_id>", methods=["POST"])
@page_login_required()
def update_comment(slug: str, project_id: uuid.UUID, key: str, comment_id: uuid.UUID):
    """The author edits their comment; answers with that comment (or its error) only."""
    form = {"body": request.form.get("body", "")}
    try:
        body = CommentWrite().load(form)["body"]
        comment = comments.update_comment(current_user, slug, project_id, key, comment_id, body)
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc)
        comment = comments.get_comment(current_user, slug, project_id, key, comment_id)
        return render_fragment(
            "tracker/_comment_fragment.html",
            status=refusal.status,
            **timeline_context(slug, project_id, key),
            comment=comment,
            comment_error=refusal.message,
            comment_form=form["body"],
        )
    if not wants_fragment():
        return _back_to_issue(slug, project_id, key, f"comment-{comment_id}")
    return render_fragment(
        "tracker/_comment_fragment.html", **timeline_context(slug, project_id, key), comment=comment
    )


@blp.route(f"{ISSUE}/comments/<uuid:comment_id>/delete", methods=["POST"])
@page_login_required()
def delete_comment(slug: str, project_id: uuid.UUID, key: str, comment_id: uuid.UUID):
    try:
        comments.delete_comment(current_user, slug, project_id, key, comment_id)
    except DomainError as exc:
        refusal = refused(exc)
        return issue_block(
            slug,
            project_id,
            key,
            "issue_timeline",
            status=refusal.status,
            errors={"timeline": refusal.message},
        )
    return _timeline_changed(slug, project_id, key)


@blp.route(f"{ISSUE}/timeline")
@page_login_required()
def older_entries(slug: str, project_id: uuid.UUID, key: str):
    """Older timeline entries, asked for by the "show earlier" button, in its place."""
    skip = request.args.get("skip", "0")
    skip_count = int(skip) if skip.isdigit() and len(skip) < 7 else 0
    return render_fragment(
        "tracker/_timeline_older.html", **timeline_context(slug, project_id, key, skip=skip_count)
    )


@blp.route(f"{ISSUE}/watch", methods=["POST"])
@page_login_required()
def watch(slug: str, project_id: uuid.UUID, key: str):
    """Watch (``watch=1``) or stop watching the issue; answers with the button."""
    if request.form.get("watch") == "1":
        collaboration.watch(current_user, slug, project_id, key)
    else:
        collaboration.unwatch(current_user, slug, project_id, key)
    if not wants_fragment():
        return _back_to_issue(slug, project_id, key, "issue-watch")
    return issue_block(slug, project_id, key, "issue_watch")


# --- the inbox ------------------------------------------------------------------------------


def _inbox_context(query: dict, **extra) -> dict:
    found = notifications.list_notifications(current_user, query["unread"], query["page"], INBOX_PAGE)
    pages = max(1, -(-found.total // INBOX_PAGE))
    context = {
        "inbox": found,
        "unread_only": query["unread"],
        "pages": pages,
        "email_on": current_user.notif_email,
        "prefs_saved": False,
        "inbox_url": url_for("collab_pages.inbox"),
        "fragment": wants_fragment(),
    }
    context.update(extra)
    return context


def _inbox_query(values) -> dict:
    raw = {key: values.get(key) for key in ("unread", "page") if values.get(key)}
    if raw.get("unread") in ("1", "on"):
        raw["unread"] = "true"
    return NotificationQuery().load(raw)


@blp.route("/notifications")
@page_login_required()
def inbox():
    try:
        query = _inbox_query(request.args)
    except ValidationError:
        query = NotificationQuery().load({})
        return render_page(
            "tracker/inbox.html", "inbox", status=400, **_inbox_context(query, invalid_filter=True)
        )
    return render_page("tracker/inbox.html", "inbox", **_inbox_context(query))


@blp.route("/notifications/read", methods=["POST"])
@page_login_required()
def mark_read():
    """Mark one notification (``ids``) or all of them (``all``) read; the inbox again."""
    body = {"all": True} if request.form.get("all") else {"ids": request.form.getlist("ids")}
    try:
        query = _inbox_query(request.form)
        data = MarkRead().load(body)
    except ValidationError:
        return render_page(
            "tracker/inbox.html",
            "inbox",
            status=400,
            **_inbox_context(NotificationQuery().load({}), invalid_filter=True),
        )
    notifications.mark_read(current_user, data.get("ids"), data.get("everything", False))
    if not wants_fragment():
        return after_change("collab_pages.inbox", unread=1 if query["unread"] else None, page=query["page"])
    return render_page("tracker/inbox.html", "inbox", **_inbox_context(query))


@blp.route("/notifications/preferences", methods=["POST"])
@page_login_required()
def preferences():
    """Turn the e-mailing of my notifications on or off (the inbox stays either way)."""
    notifications.set_email(current_user, request.form.get("email") == "1")
    return render_page(
        "tracker/inbox.html",
        "inbox_preferences",
        **_inbox_context(NotificationQuery().load({}), prefs_saved=True),
    )
