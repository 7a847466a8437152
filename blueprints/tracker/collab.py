"""Working together on issues: comments, history, watching, and each person's notifications."""

from __future__ import annotations

from functools import partial

from flask_jwt_extended import current_user

from blueprints.common import auth_required
from blueprints.parsing import Blueprint
from blueprints.tracker.docs import error_responses
from schemas.tracker.collab import (
    ActivityPage,
    Comment,
    CommentPage,
    CommentWrite,
    MarkRead,
    NotificationPage,
    NotificationPreferences,
    NotificationQuery,
)
from schemas.tracker.common import PageQuery
from services.tracker import collaboration, comments, notifications

blp = Blueprint(
    "tracker_collaboration",
    __name__,
    url_prefix="/workspaces/<slug>/projects/<uuid:project_id>/issues/<key>",
    description="Comments, activity history and watching of an issue",
)
notifications_blp = Blueprint(
    "tracker_notifications", __name__, url_prefix="/notifications", description="My notifications"
)

_errors = partial(error_responses, blp)


@blp.route("/comments", methods=["GET"])
@auth_required()
@blp.arguments(PageQuery, location="query", error_status_code=400)
@blp.response(200, CommentPage)
@_errors(400, 403, 404)
def list_comments(query, slug, project_id, key):
    """The issue's comments, oldest first. `per_page` defaults to 50 and is clamped to 100.

    `body` is Markdown as written; pages render it as they render descriptions
    (no raw HTML, sanitised). `edited` is true once the author changed it;
    `author` is null once the account is gone. `mentions` lists the members
    its `@address` mentions named (`{id, name}`, by current name, each once).
    """
    return comments.list_comments(current_user, slug, project_id, key, query["page"], query["per_page"])


@blp.route("/comments", methods=["POST"])
@auth_required()
@blp.arguments(CommentWrite, error_status_code=400)
@blp.response(201, Comment)
@_errors(400, 402, 403, 404)
def create_comment(body, slug, project_id, key):
    """Comment on the issue (members, admins and owners; viewers get 403).

    `@address` mentions a member of the organization by e-mail address
    (`@ana@loja.com.br`; not inside code, at most 50 per comment): they get a
    `mentioned` notification. The address is resolved once, now: the comment's
    `mentions` (`[{id, name}]`) keep naming that member after they change
    address; an address of no member stays plain text and is not in
    `mentions`. The issue's creator, assignee and watchers get
    `commented`; nobody is notified of their own comment. The text counts toward
    the organization's storage: past the plan's limit, 402 `PLAN_LIMIT_REACHED`.
    """
    return comments.create_comment(current_user, slug, project_id, key, body["body"])


@blp.route("/comments/<uuid:comment_id>", methods=["PATCH"])
@auth_required()
@blp.arguments(CommentWrite, error_status_code=400)
@blp.response(200, Comment)
@_errors(400, 402, 403, 404)
def update_comment(body, slug, project_id, key, comment_id):
    """Edit my comment (only its author may; 403 otherwise); it is marked `edited`.

    People it newly mentions are notified: members whose addresses are new to the
    text and were not already in its `mentions` (an address kept from the old text
    keeps naming the same member, even one who changed address since, and tells
    nobody again). Sending the same text changes nothing.
    Growing it past the plan's storage answers 402.
    """
    return comments.update_comment(current_user, slug, project_id, key, comment_id, body["body"])


@blp.route("/comments/<uuid:comment_id>", methods=["DELETE"])
@auth_required()
@blp.response(204)
@_errors(403, 404)
def delete_comment(slug, project_id, key, comment_id):
    """Delete a comment: its author, or an owner or admin of the organization (403 otherwise).
    Its bytes no longer count toward storage; the history keeps that a comment was deleted,
    not its text."""
    comments.delete_comment(current_user, slug, project_id, key, comment_id)


@blp.route("/activity", methods=["GET"])
@auth_required()
@blp.arguments(PageQuery, location="query", error_status_code=400)
@blp.response(200, ActivityPage)
@_errors(400, 403, 404)
def list_activity(query, slug, project_id, key):
    """The issue's history, oldest first, each entry written with the change that made it.

    `kind`: `created`; `updated` (one entry per field changed: `field` is
    `title`, `description`, `type`, `priority`, `assignee`, `parent`,
    `start_date`, `due_date`, `estimate` or `labels`, with `old` and `new`);
    `status_changed` (`old`/`new`: `{id, name, category}`);
    `relation_added`/`relation_removed` (`field`: the relation type from this
    issue's side, `new`/`old`: the other issue `{id, key, title}`);
    `sub_issue_added`/`sub_issue_removed` (the sub-issue `{id, key, title}`);
    `comment_added`/`comment_edited`/`comment_deleted` (`{id}` of the comment);
    `attachment_added`/`attachment_deleted` (`new`/`old`: the file `{id, filename}`).
    People are `{id, name}`, labels a list of `{id, name}`, dates ISO strings:
    snapshots taken at the time, so a later rename does not rewrite history.
    `per_page` defaults to 50 and is clamped to 100.
    """
    return collaboration.list_activity(current_user, slug, project_id, key, query["page"], query["per_page"])


@blp.route("/watch", methods=["POST"])
@auth_required()
@blp.response(204)
@_errors(403, 404)
def watch(slug, project_id, key):
    """Watch the issue: be notified of its comments and status changes. Any member, viewers
    included; watching twice is the same as once."""
    collaboration.watch(current_user, slug, project_id, key)


@blp.route("/watch", methods=["DELETE"])
@auth_required()
@blp.response(204)
@_errors(403, 404)
def unwatch(slug, project_id, key):
    """Stop watching (not watching already is fine). The issue's creator and assignee are
    still notified: that comes with their part in the issue, not with watching."""
    collaboration.unwatch(current_user, slug, project_id, key)


@notifications_blp.route("", methods=["GET"])
@auth_required()
@notifications_blp.arguments(NotificationQuery, location="query", error_status_code=400)
@notifications_blp.response(200, NotificationPage)
@error_responses(notifications_blp, 400)
def list_notifications(query):
    """My notifications from every organization I belong to, newest first.

    `kind`: `assigned` (an issue was given to me), `mentioned` (a comment
    @mentions me), `commented` and `status_changed` (on an issue I created, am
    assigned to or watch). Never for my own actions. `unread=true` lists only
    the unread ones; `unread` in the answer counts them whatever the filter.
    Leaving an organization removes its notifications. `per_page` defaults to 50
    and is clamped to 100.
    """
    return notifications.list_notifications(current_user, query["unread"], query["page"], query["per_page"])


@notifications_blp.route("/read", methods=["POST"])
@auth_required()
@notifications_blp.arguments(MarkRead, error_status_code=400)
@notifications_blp.response(204)
@error_responses(notifications_blp, 400)
def mark_read(body):
    """Mark `{ids: [...]}` (at most 500) or `{all: true}` read; exactly one of the two.
    Ids that are not of my notifications are ignored, and marking twice is harmless.
    A notification read before its e-mail goes out is not e-mailed."""
    notifications.mark_read(current_user, body.get("ids"), body.get("everything", False))


@notifications_blp.route("/preferences", methods=["GET"])
@auth_required()
@notifications_blp.response(200, NotificationPreferences)
def get_preferences():
    """Whether my notifications are also e-mailed."""
    return {"email": current_user.notif_email}


@notifications_blp.route("/preferences", methods=["PATCH"])
@auth_required()
@notifications_blp.arguments(NotificationPreferences, error_status_code=400)
@notifications_blp.response(200, NotificationPreferences)
@error_responses(notifications_blp, 400)
def update_preferences(body):
    """Turn the e-mailing of my notifications on or off. E-mails are batched: one message per
    person each time the sender runs (`flask tracker send-notifications`, from cron), only for
    notifications still unread then, and only to a proven address. The same setting as the
    profile page's “Avisos por e-mail”."""
    user = notifications.set_email(current_user, body["email"])
    return {"email": user.notif_email}
