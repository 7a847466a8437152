"""Tracker pages: workspaces, projects, a project's board and its filtered issue list.

The issue page is in ``tracker_issue``, an organization's people in
``tracker_members``, a project's settings in ``tracker_settings``; what they share
is in ``tracker_common``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from urllib.parse import parse_qsl, urlencode

from flask import Response, redirect, request, url_for
from flask_babel import format_date
from flask_babel import gettext as _
from flask_jwt_extended import current_user
from markupsafe import Markup, escape
from marshmallow import ValidationError
from werkzeug.datastructures import MultiDict

from blueprints.pages import live
from blueprints.pages.common import (
    after_change,
    page_csrf_token,
    page_login_required,
    refused,
    render_fragment,
    render_page,
    wants_fragment,
)
from blueprints.pages.messages import domain_errors, schema_errors, status_name
from blueprints.pages.tracker_common import (
    PRIORITY_ORDER,
    PRIORITY_TEXT,
    TYPE_TEXT,
    TrackerPagesBlueprint,
    error_fragment,
    issue_form_data,
    load_project,
)
from blueprints.pages.tracker_issue import custom_field_changes, issue_block
from blueprints.pages.tracker_search import mode_choices
from models.tracker import ISSUE_TYPES
from schemas.tracker.collab import OrganizationCreate
from schemas.tracker.issues import BulkUpdate, IssueCreate, IssueListQuery, IssueUpdate
from schemas.tracker.tenancy import ProjectCreate, WorkspaceCreate
from services.errors import DomainError
from services.tracker import (
    accounts,
    custom_fields,
    issue_board,
    issue_reads,
    issues,
    organizations,
    workspaces,
)
from services.tracker.access import READ, WRITE, project_access, workspace_access
from services.tracker.first_steps import pending_first_steps
from services.tracker.issue_board import CardRow
from services.tracker.issues import IssueView
from services.tracker.workspaces import ProjectView

blp = TrackerPagesBlueprint("tracker_pages", __name__)

# A board shows at most this many cards; past it, a note sends people to the list.
BOARD_MAX_CARDS = 2000
LIST_PAGE_SIZES = (25, 50, 100)


# --- workspaces and projects ------------------------------------------------------------


def _index_context(
    form: dict | None = None,
    errors: dict | None = None,
    org_form: dict | None = None,
    org_errors: dict | None = None,
) -> dict:
    mine = workspaces.list_workspaces(current_user)
    orgs = accounts.my_organizations(current_user)
    by_org = {org.id: {"org": org, "workspaces": []} for org in orgs}
    for workspace in mine:
        by_org[workspace.organization_id]["workspaces"].append(workspace)
    manageable = [org for org in orgs if org.role in ("owner", "admin") and not org.suspended]
    return {
        "groups": list(by_org.values()),
        "first_steps": pending_first_steps(orgs),
        "invitations": organizations.my_invitations(current_user),
        "manageable": manageable,
        "form": form or {},
        "errors": errors or {},
        "org_form": org_form or {},
        "org_errors": org_errors or {},
    }


@blp.route("/")
@page_login_required()
def index():
    return render_page("tracker/index.html", **_index_context())


@blp.route("/workspaces", methods=["POST"])
@page_login_required()
def create_workspace():
    form = {key: request.form.get(key, "").strip() for key in ("organization_id", "name", "slug")}
    data = {k: v for k, v in form.items() if v}
    try:
        loaded = WorkspaceCreate().load(data)
        workspace = workspaces.create_workspace(
            current_user, loaded["organization_id"], loaded["name"], loaded.get("slug")
        )
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc, inline_not_found=True)
        return render_page(
            "tracker/index.html",
            "workspace_form",
            status=refusal.status,
            **_index_context(form, refusal.errors),
        )
    return after_change("tracker_pages.workspace", slug=workspace.slug)


@blp.route("/organizations", methods=["POST"])
@page_login_required()
def create_organization():
    """Start an organization (as its owner, with a default workspace) and go to that workspace."""
    form = {"name": request.form.get("name", "").strip()}
    try:
        created = organizations.create_organization(current_user, OrganizationCreate().load(form)["name"])
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc, inline_not_found=True)
        return render_page(
            "tracker/index.html",
            "organization_form",
            status=refusal.status,
            **_index_context(org_form=form, org_errors=refusal.errors),
        )
    return after_change("tracker_pages.workspace", slug=created.workspace.slug)


def _workspace_context(slug: str, form: dict | None = None, errors: dict | None = None) -> dict:
    workspace, access = workspace_access(current_user, slug, READ)
    return {
        "workspace": workspace,
        "access": access,
        "projects": workspaces.list_projects(current_user, slug),
        "counts": workspaces.issue_counts(current_user, slug),
        "can_manage": access.role in ("owner", "admin"),
        "form": form or {},
        "errors": errors or {},
    }


@blp.route("/w/<slug>")
@page_login_required()
def workspace(slug: str):
    return render_page("tracker/workspace.html", **_workspace_context(slug))


@blp.route("/w/<slug>/projects", methods=["POST"])
@page_login_required()
def create_project(slug: str):
    form = {
        "name": request.form.get("name", "").strip(),
        "key": request.form.get("key", "").strip().upper(),
        "description": request.form.get("description", "").strip(),
    }
    data = {k: v for k, v in form.items() if v or k != "description"}
    try:
        project = workspaces.create_project(current_user, slug, ProjectCreate().load(data))
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc)
        return render_page(
            "tracker/workspace.html",
            "project_form",
            status=refusal.status,
            **_workspace_context(slug, form, refusal.errors),
        )
    return after_change("tracker_pages.board", slug=slug, project_id=project.id)


# --- board ---------------------------------------------------------------------------------


@dataclass
class CardKit:
    """Everything a board card shows besides its row, prepared once per request and escaped
    here: the card template prints these as they are (``templates/tracker/_card.html``)."""

    issues_url: Markup
    writable: bool
    csrf: Markup
    priority: dict[str, Markup]
    status_options: dict[uuid.UUID, Markup]
    # "Status de WEB-1" around the card's key.
    status_label: tuple[Markup, Markup]
    priority_title: Markup
    due_title: Markup
    children_title: Markup
    move: Markup
    # Due dates as ``dd/MM``, each distinct date formatted once.
    due: dict[date, Markup]


def card_kit(page: ProjectView, slug: str, cards: Iterable[CardRow]) -> CardKit:
    option = Markup('<option value="{}"{}>{}</option>')
    names = [(s.id, status_name(s.name)) for s in page.statuses]
    status_options = {
        current: Markup("").join(
            option.format(status_id, Markup(" selected") if status_id == current else "", name)
            for status_id, name in names
        )
        for current, _name in names
    }
    before, _key, after = _("Status de %(key)s", key="{key}").partition("{key}")
    days = {card.due_date for card in cards if card.due_date is not None}
    return CardKit(
        issues_url=escape(url_for("tracker_pages.issue_list", slug=slug, project_id=page.project.id)),
        writable=page.writable,
        csrf=escape(page_csrf_token()),
        priority={name: escape(str(text)) for name, text in PRIORITY_TEXT.items()},
        status_options=status_options,
        status_label=(escape(before), escape(after)),
        priority_title=escape(_("Prioridade")),
        due_title=escape(_("Prazo")),
        children_title=escape(_("Subtarefas")),
        move=escape(_("Mover")),
        due={day: escape(format_date(day, "dd/MM")) for day in days},
    )


def board_context(slug: str, project_id: uuid.UUID) -> dict:
    version = live.stamp()  # before the reads: what changes while they run is sent again
    page = load_project(slug, project_id)
    q = request.args.get("q", "").strip()[:200]
    mine = request.args.get("mine") == "1"
    filters: dict = {"q": q}
    if mine:
        filters["assignee_id"] = current_user.id
    found = issue_board.board_cards(current_user, slug, project_id, filters, BOARD_MAX_CARDS)
    columns: dict[uuid.UUID, list[CardRow]] = {status.id: [] for status in page.statuses}
    for card in found.cards:
        columns.setdefault(card.status_id, []).append(card)
    return {
        "page": page,
        "project": page.project,
        "slug": slug,
        "columns": columns,
        "q": q,
        "mine": mine,
        "truncated": found.truncated,
        "total": len(found.cards),
        "kit": card_kit(page, slug, found.cards),
        "issues_url": url_for("tracker_pages.issue_list", slug=slug, project_id=project_id),
        # The live updates' version: the moment, and the count that shows a deleted issue.
        "live_version": f"{version}.{page.project.issue_count}",
    }


@blp.route("/w/<slug>/p/<uuid:project_id>/board")
@page_login_required()
def board(slug: str, project_id: uuid.UUID):
    return render_page("tracker/board.html", "board_columns", **board_context(slug, project_id))


def _board_untouched(caller: live.Caller, slug: str, project_id: uuid.UUID) -> bool:
    """The poll's quiet case in one statement (``live.quiet_poll``)."""
    held, _dot, count = request.args.get("since", "").partition(".")
    moment = live.changed_after(held)
    return moment is not None and issue_board.board_quiet(caller, slug, project_id, moment, count)


@blp.route("/w/<slug>/p/<uuid:project_id>/board/changes")
@live.quiet_poll(_board_untouched)
@page_login_required()
def board_changes(slug: str, project_id: uuid.UUID):
    """Live updates of an open board (``blueprints.pages.live``): 204 while no issue of the
    project changed since the board's version (``since``) and none was deleted; otherwise the
    columns as the board shows them (its ``q`` and ``mine``), with the new version."""
    if not wants_fragment():
        return redirect(url_for("tracker_pages.board", slug=slug, project_id=project_id))
    held, _dot, count = request.args.get("since", "").partition(".")
    issue_count, changed = issue_board.board_changed(current_user, slug, project_id, live.changed_after(held))
    if not changed and count == str(issue_count):
        return live.unchanged()
    context = board_context(slug, project_id)
    return live.no_store(render_page("tracker/board.html", "board_columns", **context))


def card_response(page: ProjectView, slug: str, issue: IssueView, status: int = 200) -> Response:
    card = issue_board.card_of(issue)
    return render_fragment("tracker/card.html", status=status, card=card, kit=card_kit(page, slug, [card]))


@blp.route("/w/<slug>/p/<uuid:project_id>/issues/<key>/move", methods=["POST"])
@page_login_required()
def move_issue(slug: str, project_id: uuid.UUID, key: str):
    """Move a card: to another status (dropped on a column, or the card's status select) and/or
    to its place in the column (``before_id``: the card now below it, ``after_id``: above it)."""
    fields = ("status_id", "before_id", "after_id")
    data = {name: request.form[name].strip() for name in fields if request.form.get(name, "").strip()}
    try:
        if not data:
            raise ValidationError({"status_id": ["Missing data for required field."]})
        changes = IssueUpdate().load(data)
        issue = issues.update_issue(current_user, slug, project_id, key, changes)
    except ValidationError:
        return error_fragment(_("Escolha um status válido."), 422)
    except DomainError as exc:
        refusal = refused(exc)
        return error_fragment(refusal.message, refusal.status)
    if not wants_fragment():
        return redirect(url_for("tracker_pages.board", slug=slug, project_id=project_id), code=303)
    return card_response(load_project(slug, project_id), slug, issue)


@blp.route("/w/<slug>/p/<uuid:project_id>/issues", methods=["POST"])
@page_login_required()
def create_issue(slug: str, project_id: uuid.UUID):
    """Quick create: a card at the top of a board column, a sub-issue, or a new issue page."""
    source = request.form.get("source", "")
    fields = ("title", "status_id", "parent_id", "priority", "type", "description")
    data = {k: v for k, v in issue_form_data(request.form, fields).items() if v is not None}
    render_error = _create_error_renderer(slug, project_id, source, request.form.get("title", ""))
    try:
        if "custom_fields_present" in request.form:
            data["custom_fields"] = custom_field_changes(slug, project_id)
        issue = issues.create_issue(current_user, slug, project_id, IssueCreate().load(data))
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc)
        return render_error(refusal.errors, refusal.status)
    if wants_fragment() and source == "board":
        return card_response(load_project(slug, project_id), slug, issue, 201)
    if wants_fragment() and source == "children" and issue.parent_id is not None:
        parent = issues.issue_in_project(current_user, slug, project_id, issue.parent_id)
        return issue_block(slug, project_id, parent.key, "issue_children")
    return after_change("issue_pages.issue", slug=slug, project_id=project_id, key=issue.key)


def _create_error_renderer(
    slug: str, project_id: uuid.UUID, source: str, title: str
) -> Callable[[dict, int], Response]:
    def render(errors: dict, status: int) -> Response:
        message = errors.get("title") or errors.get("_form") or next(iter(errors.values()))
        if wants_fragment():
            response = error_fragment(message, status)
            # The error shows under the form that was sent, not in the column or list it targets.
            response.headers["HX-Retarget"] = "find .form-error"
            response.headers["HX-Reswap"] = "innerHTML"
            return response
        return render_page(
            "tracker/new_issue.html",
            status=status,
            **new_issue_context(slug, project_id, {"title": title}, errors, request.form),
        )

    return render


def new_issue_context(slug: str, project_id: uuid.UUID, form: dict, errors: dict, sent=None) -> dict:
    page = load_project(slug, project_id)
    field_defs = custom_fields.fields_of(page.project, page.access.organization)
    # What was typed in the custom fields, shown again when the form is refused.
    typed = {
        field.slug: (
            sent.getlist(f"cf.{field.slug}") if field.type == "multi_select" else sent.get(f"cf.{field.slug}")
        )
        for field in field_defs
        if sent is not None
    }
    return {
        "page": page,
        "project": page.project,
        "slug": slug,
        "form": form,
        "errors": errors,
        "field_defs": field_defs,
        "typed_fields": typed,
    }


@blp.route("/w/<slug>/p/<uuid:project_id>/issues/new")
@page_login_required()
def new_issue(slug: str, project_id: uuid.UUID):
    # A viewer is told at once (403) rather than after filling in the form.
    project_access(current_user, slug, project_id, WRITE)
    return render_page("tracker/new_issue.html", **new_issue_context(slug, project_id, {}, {}))


# --- list --------------------------------------------------------------------------------------

LIST_MULTI = ("status_id", "priority", "type", "label_id", "custom_field")
LIST_SINGLE = ("assignee_id", "parent_id", "q", "order_by", "order", "page", "per_page")


def list_args(source=None) -> dict:
    """The query string (or ``source``) as the API's list query reads it (repeated keys are lists)."""
    source = request.args if source is None else source
    args: dict = {}
    for name in LIST_MULTI:
        values = [v for v in source.getlist(name) if v.strip()]
        if values:
            args[name] = values
    for name in LIST_SINGLE:
        value = source.get(name, "").strip()
        if value:
            args[name] = value
    return args


def _list_page(slug: str, project_id: uuid.UUID, raw: dict, *, status: int = 200, **extra) -> Response:
    page = load_project(slug, project_id)
    errors: dict = {}
    result = None
    try:
        filters = IssueListQuery().load(raw)
    except ValidationError as exc:
        errors = schema_errors(exc)
        filters = {"order_by": "created_at", "order": "desc", "page": 1, "per_page": 50}
    else:
        try:
            result = issue_reads.list_issue_rows(current_user, slug, project_id, filters)
        except DomainError as exc:
            if exc.status == 404:
                raise
            errors = domain_errors(exc)
    members = organizations.list_members(current_user, page.access.organization.id)
    field_defs = custom_fields.fields_of(page.project, page.access.organization)
    # Extra columns, chosen per view in the address: cols=slug1,slug2 (or cols repeated).
    wanted = {slug for value in request.args.getlist("cols") for slug in value.split(",") if slug.strip()}
    columns = [field for field in field_defs if field.slug in wanted]
    labels = workspaces.list_labels(current_user, slug, project_id)
    parent = issues.issue_in_project(current_user, slug, project_id, filters.get("parent_id"))
    base_args = {k: v for k, v in raw.items() if k != "page"}
    if columns:
        base_args["cols"] = ",".join(field.slug for field in columns)
    options = {
        "status": [(str(s.id), status_name(s.name)) for s in page.statuses],
        "priority": [(p, str(PRIORITY_TEXT[p])) for p in PRIORITY_ORDER],
        "type": [(t, str(TYPE_TEXT[t])) for t in ISSUE_TYPES],
        "label": [(str(label.id), label.name) for label in labels],
        "cols": [(field.slug, field.name) for field in field_defs],
    }
    context = {
        "page": page,
        "project": page.project,
        "slug": slug,
        "filters": filters,
        "raw": raw,
        "base_args": base_args,
        "result": result,
        "errors": errors,
        "members": members,
        "labels": labels,
        "parent": parent,
        "options": options,
        "columns": columns,
        "field_defs": field_defs,
        "page_sizes": LIST_PAGE_SIZES,
        "issues_url": url_for("tracker_pages.issue_list", slug=slug, project_id=project_id),
        "list_query": urlencode(raw, doseq=True),
        "bulk": {"done": None, "error": None, "form": {}},
        "search_modes": mode_choices(page.access.organization),
        **extra,
    }
    return render_page("tracker/list.html", "issue_results", status=400 if errors else status, **context)


@blp.route("/w/<slug>/p/<uuid:project_id>/issues")
@page_login_required()
def issue_list(slug: str, project_id: uuid.UUID):
    return _list_page(slug, project_id, list_args())


BULK_FIELDS = ("status_id", "assignee_id", "priority", "add_label_ids", "remove_label_ids")
NO_ASSIGNEE = "none"


def _bulk_changes(form) -> dict:
    """The bulk form's choices as the API's ``changes``: an empty select changes nothing;
    ``none`` as the assignee unassigns."""
    changes: dict = {}
    for name in ("status_id", "priority"):
        if form.get(name, "").strip():
            changes[name] = form[name].strip()
    assignee = form.get("assignee_id", "").strip()
    if assignee:
        changes["assignee_id"] = None if assignee == NO_ASSIGNEE else assignee
    for name in ("add_label_ids", "remove_label_ids"):
        values = [v.strip() for v in form.getlist(name) if v.strip()]
        if values:
            changes[name] = values
    return changes


@blp.route("/w/<slug>/p/<uuid:project_id>/bulk-edit", methods=["POST"])
@page_login_required()
def bulk_edit(slug: str, project_id: uuid.UUID):
    """Change the selected issues of the list at once; the list comes back as it was filtered."""
    raw = list_args(MultiDict(parse_qsl(request.form.get("list_query", ""), keep_blank_values=False)))
    chosen = {name: request.form.get(name, "") for name in ("status_id", "assignee_id", "priority")}
    chosen["add_label_ids"] = request.form.getlist("add_label_ids")
    chosen["remove_label_ids"] = request.form.getlist("remove_label_ids")
    keys = [key.strip() for key in request.form.getlist("keys") if key.strip()]
    if not keys:
        bulk = {"done": None, "error": _("Selecione pelo menos uma tarefa."), "form": chosen, "picked": []}
        return _list_page(slug, project_id, raw, status=422, bulk=bulk)
    try:
        body = BulkUpdate().load({"keys": keys, "changes": _bulk_changes(request.form)})
        updated = issues.bulk_update(current_user, slug, project_id, body["keys"], body["changes"])
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc, inline_not_found=True)
        bulk = {"done": None, "error": refusal.message, "form": chosen, "picked": keys}
        return _list_page(slug, project_id, raw, status=refusal.status, bulk=bulk)
    if not wants_fragment():
        target = url_for("tracker_pages.issue_list", slug=slug, project_id=project_id)
        query = urlencode(raw, doseq=True)
        return redirect(f"{target}?{query}" if query else target, code=303)
    return _list_page(slug, project_id, raw, bulk={"done": updated, "error": None, "form": {}})
