"""Issues of a project and the relations between issues."""

from __future__ import annotations

from functools import partial

from flask_jwt_extended import current_user

from blueprints.common import auth_required
from blueprints.parsing import Blueprint
from blueprints.responses import json_response
from blueprints.tracker.docs import error_responses
from schemas.fast import RowDumper
from schemas.tracker.issues import (
    BulkResult,
    BulkUpdate,
    Issue,
    IssueCreate,
    IssueDetail,
    IssueListQuery,
    IssuePage,
    IssueUpdate,
    Relation,
    RelationCreate,
)
from services.tracker import issue_reads, issues, relations

blp = Blueprint(
    "tracker_issues",
    __name__,
    url_prefix="/workspaces/<slug>/projects/<uuid:project_id>/issues",
    description="Issues and relations",
)


bulk_blp = Blueprint(
    "tracker_bulk_edit",
    __name__,
    url_prefix="/workspaces/<slug>/projects/<uuid:project_id>",
    description="Many issues changed at once",
)

_errors = partial(error_responses, blp)

# The hot reads skip flask-smorest's dump: the schemas' generated dumpers shape the rows once.
_page_dump = RowDumper(IssuePage).dump
_detail_dump = RowDumper(IssueDetail).dump
_issue_dump = RowDumper(Issue).dump


@blp.route("", methods=["POST"])
@auth_required()
@blp.arguments(IssueCreate, error_status_code=400)
@blp.response(201, Issue)
@_errors(400, 402, 403, 404)
def create_issue(body, slug, project_id):
    """Create an issue; only `title` is required.

    Defaults: the project's first status of category `todo`, `type=task`,
    `priority=none`. The key is `<PROJECT KEY>-<N>`, numbered per project and
    never reused. `status_id` and `label_ids` must belong to the project,
    `assignee_id` must be a member of the organization, `parent_id` must be
    an issue of the same project, and `start_date` may not follow `due_date`
    (400 with `details`). Members, admins and owners create; viewers get 403.
    `custom_fields` sets the project's custom fields by slug (or id), each
    checked against its type (400 with `details` naming `custom_fields.<slug>`);
    every `required` field must be given. 402 when the plan lacks
    `custom_fields` and the body sets any.
    """
    return json_response(_issue_dump(issues.create_issue(current_user, slug, project_id, body)), 201)


@blp.route("", methods=["GET"])
@auth_required()
@blp.arguments(IssueListQuery, location="query", error_status_code=400)
@blp.response(200, IssuePage)
@_errors(400, 402, 403, 404)
def list_issues(query, slug, project_id):
    """List issues, filtered and sorted, one page at a time.

    `status_id`, `priority`, `type` and `label_id` may be repeated (any of
    the values matches; `label_id`: issues carrying any of the labels).
    `q` searches titles, case-insensitively. `order_by` is `created_at`
    (default), `updated_at`, `priority` (by urgency: `urgent` first when
    descending), `due_date` (issues without one last) or `rank` (board order); `order`
    defaults to `desc` (`asc` for `rank`); ties are broken by creation, newest
    first when descending (by number for `rank`).
    `per_page` defaults to 50 and is clamped to 100; `total` counts every match,
    exactly (from indexes or counters kept on write, never an estimate).
    `custom_field=<slug>:<value>` filters by a custom field (repeatable, all
    must hold; a multi_select matches when it holds the option); 402 when the plan
    lacks `custom_fields`. A URL past 4 KiB (e.g. hundreds of repeated ids) is 414.
    """
    return json_response(_page_dump(issue_reads.list_issue_rows(current_user, slug, project_id, query)))


@blp.route("/<key>", methods=["GET"])
@auth_required()
@blp.response(200, IssueDetail)
@_errors(403, 404)
def get_issue(slug, project_id, key):
    """One issue by key, with its `relations` and `children` (sub-issues, by number)."""
    return json_response(_detail_dump(issue_reads.get_issue_row(current_user, slug, project_id, key)))


@blp.route("/<key>", methods=["PATCH"])
@auth_required()
@blp.arguments(IssueUpdate, error_status_code=400)
@blp.response(200, IssueDetail)
@_errors(400, 402, 403, 404)
def update_issue(body, slug, project_id, key):
    """Change any subset of the create fields; `null` clears an optional one.

    `label_ids` replaces the whole set. The references and dates are checked
    as on create (400 with `details`), and a `parent_id` that is the issue
    itself or one of its descendants is refused (400). Growing the text past
    the plan's storage answers 402.

    Board order: `before_id` puts the issue right above that issue of the
    project, `after_id` right below it (both: between them; `after_id` must then
    come first), or `rank` sets the position itself. Ranks are integers, smaller
    first, project-wide (a column shows its issues in that order); new issues
    go to the top. Moves are serialised per project, so two people dropping
    cards at once both land where they dropped them. Neighbours outside the
    project, the issue itself, or `rank` together with a neighbour are 400.

    `custom_fields` changes only the fields
    it names (`null` clears one); each change is a history entry
    `custom_fields.<slug>`.
    """
    return json_response(_detail_dump(issues.update_issue(current_user, slug, project_id, key, body)))


@blp.route("/<key>", methods=["DELETE"])
@auth_required()
@blp.response(204)
@_errors(403, 404)
def delete_issue(slug, project_id, key):
    """Delete the issue and its whole sub-tree of sub-issues, with their relations."""
    issues.delete_issue(current_user, slug, project_id, key)


@blp.route("/<key>/relations", methods=["POST"])
@auth_required()
@blp.arguments(RelationCreate, error_status_code=400)
@blp.response(201, Relation)
@_errors(400, 403, 404, 409)
def create_relation(body, slug, project_id, key):
    """Relate this issue to another issue of the organization; the inverse is created too
    (`blocks` / `is_blocked_by`, `relates_to`, `duplicates`).

    400 when `related_issue_id` names no issue of the organization; 409 for a
    relation to itself, for a second relation between the same two issues (in
    either direction), and for a `blocks` chain that would loop.
    Answers `{id, type, issue: {id, key, title}}`; `id` is what DELETE takes.
    """
    return relations.create_relation(
        current_user, slug, project_id, key, body["type"], body["related_issue_id"]
    )


@blp.route("/<key>/relations/<uuid:relation_id>", methods=["DELETE"])
@auth_required()
@blp.response(204)
@_errors(403, 404)
def delete_relation(slug, project_id, key, relation_id):
    """Delete a relation of this issue and its inverse."""
    relations.delete_relation(current_user, slug, project_id, key, relation_id)


@bulk_blp.route("/bulk-edit", methods=["POST"])
@auth_required()
@bulk_blp.arguments(BulkUpdate, error_status_code=400)
@bulk_blp.response(200, BulkResult)
@error_responses(bulk_blp, 400, 403, 404)
def bulk_update(body, slug, project_id):
    """Change many issues of the project at once: `{keys: ["WEB-1", ...], changes: {...}}`.

    `changes` takes `status_id`, `assignee_id` (`null` unassigns), `priority`,
    `add_label_ids` and `remove_label_ids`; at least one. Every issue gets the
    same changes in one transaction: an unknown key (400 naming it), a status
    or label of another project, or an assignee outside the organization
    refuses the whole edit and nothing changes. Each issue's history records
    its own changes, and assignees and followers are notified as for a single
    edit. Answers `{updated}`: the issues that actually changed. Members, admins
    and owners; viewers get 403.

    The path is `…/projects/{project_id}/bulk-edit` rather than `…/issues/bulk`,
    which would also read as the issue whose key is `bulk`.
    """
    return {"updated": issues.bulk_update(current_user, slug, project_id, body["keys"], body["changes"])}
