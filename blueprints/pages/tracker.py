"""Tracker pages: workspaces, projects, a project's board and its filtered issue list.

Every view calls the same ``services.tracker`` functions as the REST API, so
tenant isolation and roles are exactly the API's: a workspace of another
organization answers 404, a viewer's change answers 403. Pages live under
``{TRACKER_PREFIX}`` (``/tracker`` when the tracker is mounted at the root),
never under its API base. The issue page is in ``tracker_issue``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from flask import Blueprint, Response, make_response, redirect, render_template, request, url_for
from flask_babel import format_date
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_jwt_extended import current_user
from markupsafe import Markup
from marshmallow import ValidationError
from sqlalchemy import func, select

from blueprints.pages.common import page_csrf_token, page_login_required, render_page
from blueprints.pages.tracker_text import domain_errors, domain_message, schema_errors, status_name
from extensions import db, htmx
from models.tracker import ISSUE_TYPES, PRIORITIES, Issue, Project, Status, Workspace
from schemas.tracker.issues import IssueCreate, IssueListQuery, IssueWrite
from schemas.tracker.tenancy import ProjectCreate, WorkspaceCreate
from services import auth as auth_service
from services.errors import DomainError
from services.tracker import accounts, issues, organizations, workspaces
from services.tracker.access import READ, WRITE, WRITER_ROLES, Access, project_access, workspace_access


class TrackerPagesBlueprint(Blueprint):
    """Mounted under the configured tracker prefix, read when the app registers it."""

    def register(self, app, options):
        prefix = app.config.get("TRACKER_PREFIX") or "/tracker"
        super().register(app, {**options, "url_prefix": prefix})


blp = TrackerPagesBlueprint("tracker_pages", __name__)
# The API's guard against SQLite write races (a no-op on PostgreSQL): two quick edits
# from one page must queue, not fail.

PRIORITY_TEXT = {
    "urgent": _l("Urgente"),
    "high": _l("Alta"),
    "medium": _l("Média"),
    "low": _l("Baixa"),
    "none": _l("Sem prioridade"),
}
TYPE_TEXT = {
    "task": _l("Tarefa"),
    "bug": _l("Bug"),
    "story": _l("História"),
    "epic": _l("Épico"),
    "subtask": _l("Subtarefa"),
}
ROLE_TEXT = {
    "owner": _l("Proprietário"),
    "admin": _l("Administrador"),
    "member": _l("Membro"),
    "viewer": _l("Leitor"),
}
ORDER_TEXT = {
    "created_at": _l("Criação"),
    "updated_at": _l("Atualização"),
    "priority": _l("Prioridade"),
    "due_date": _l("Prazo"),
}
# Urgent first, as people scan a board.
PRIORITY_ORDER = tuple(reversed(PRIORITIES))
BOARD_PAGE = 100
BOARD_MAX_PAGES = 20
LIST_PAGE_SIZES = (25, 50, 100)


blp.add_app_template_filter(status_name, "status_name")


@blp.app_context_processor
def tracker_context() -> dict:
    """What the shared layout needs to show the Tracker and Admin links."""
    return {"is_superadmin": auth_service.is_superadmin}


@blp.context_processor
def tracker_labels() -> dict:
    return {
        "PRIORITY_TEXT": PRIORITY_TEXT,
        "TYPE_TEXT": TYPE_TEXT,
        "ROLE_TEXT": ROLE_TEXT,
        "ORDER_TEXT": ORDER_TEXT,
        "PRIORITY_ORDER": PRIORITY_ORDER,
        "ISSUE_TYPES": ISSUE_TYPES,
    }


@blp.errorhandler(DomainError)
def tenant_error(exc: DomainError):
    """A tenant's page never hints that it exists: 404 for non-members, 403 when suspended."""
    db.session.rollback()
    status = exc.status
    message = _("Página não encontrada.") if status == 404 else domain_message(exc)
    if htmx:
        body = render_template("tracker/_error.html", message=message)
    else:
        body = render_template("errors/error.html", status=status, message=message)
    response = make_response(body, status)
    response.headers.add("Vary", "HX-Request")
    return response


def to_page(endpoint: str, **values) -> Response:
    """After a change: htmx follows ``HX-Redirect``, a plain form gets a 303."""
    target = url_for(endpoint, **values)
    if htmx:
        response = make_response("", 200)
        response.headers["HX-Redirect"] = target
        return response
    return redirect(target, code=303)


def can_write(access: Access) -> bool:
    return access.role in WRITER_ROLES


@dataclass
class ProjectPage:
    """What every project page shows around its content."""

    project: Project
    workspace: Workspace
    access: Access
    statuses: list[Status]

    @property
    def writable(self) -> bool:
        return can_write(self.access)


def load_project(slug: str, project_id: uuid.UUID) -> ProjectPage:
    project, access = project_access(current_user, slug, project_id, READ)
    statuses = workspaces.list_statuses(current_user, slug, project_id)
    # Already in the session: the access check loaded it.
    workspace = db.session.get(Workspace, project.workspace_id)
    return ProjectPage(project=project, workspace=workspace, access=access, statuses=statuses)


def open_counts(project_ids: list[uuid.UUID]) -> dict[uuid.UUID, tuple[int, int]]:
    """``{project id: (open issues, all issues)}``; open means neither done nor cancelled."""
    if not project_ids:
        return {}
    rows = db.session.execute(
        select(Issue.project_id, Status.category, func.count())
        .join(Status, Status.id == Issue.status_id)
        .where(Issue.project_id.in_(project_ids))
        .group_by(Issue.project_id, Status.category)
    ).all()
    counts: dict[uuid.UUID, list[int]] = {pid: [0, 0] for pid in project_ids}
    for project_id, category, count in rows:
        counts[project_id][1] += count
        if category not in ("done", "cancelled"):
            counts[project_id][0] += count
    return {pid: (c[0], c[1]) for pid, c in counts.items()}


# --- workspaces and projects ------------------------------------------------------------


def _index_context(form: dict | None = None, errors: dict | None = None) -> dict:
    mine = workspaces.list_workspaces(current_user)
    orgs = accounts.my_organizations(current_user)
    by_org = {org["id"]: {"org": org, "workspaces": []} for org in orgs}
    for workspace in mine:
        by_org[workspace.organization_id]["workspaces"].append(workspace)
    manageable = [org for org in orgs if org["role"] in ("owner", "admin") and not org["suspended"]]
    return {
        "groups": list(by_org.values()),
        "invitations": organizations.my_invitations(current_user),
        "manageable": manageable,
        "form": form or {},
        "errors": errors or {},
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
    except ValidationError as exc:
        return render_page(
            "tracker/index.html", "workspace_form", status=422, **_index_context(form, schema_errors(exc))
        )
    except DomainError as exc:
        db.session.rollback()
        return render_page(
            "tracker/index.html",
            "workspace_form",
            status=exc.status,
            **_index_context(form, domain_errors(exc)),
        )
    return to_page("tracker_pages.workspace", slug=workspace.slug)


def _workspace_context(slug: str, form: dict | None = None, errors: dict | None = None) -> dict:
    workspace, access = workspace_access(current_user, slug, READ)
    projects = workspaces.list_projects(current_user, slug)
    return {
        "workspace": workspace,
        "access": access,
        "projects": projects,
        "counts": open_counts([p.id for p in projects]),
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
    except ValidationError as exc:
        return render_page(
            "tracker/workspace.html",
            "project_form",
            status=422,
            **_workspace_context(slug, form, schema_errors(exc)),
        )
    except DomainError as exc:
        db.session.rollback()
        if exc.status == 404:
            raise
        return render_page(
            "tracker/workspace.html",
            "project_form",
            status=exc.status,
            **_workspace_context(slug, form, domain_errors(exc)),
        )
    return to_page("tracker_pages.board", slug=slug, project_id=project.id)


# --- board ---------------------------------------------------------------------------------


def all_issues(slug: str, project_id: uuid.UUID, filters: dict) -> tuple[list[Issue], bool]:
    """Every matching issue through the service's pages; True when the board cap cut some off."""
    found: list[Issue] = []
    for page in range(1, BOARD_MAX_PAGES + 1):
        result = issues.list_issues(
            current_user, slug, project_id, {**filters, "page": page, "per_page": BOARD_PAGE}
        )
        found.extend(result.issues)
        if len(found) >= result.total:
            return found, False
    return found, True


@dataclass
class CardKit:
    """Everything a board card shows besides the issue, prepared once per request."""

    issues_url: str
    writable: bool
    csrf: str
    priority: dict[str, str]
    status_options: dict[uuid.UUID, Markup]
    status_label: str
    priority_title: str
    due_title: str
    children_title: str
    move: str
    _due_cache: dict[date, str] = field(default_factory=dict)

    def due(self, day: date) -> str:
        """The due date as ``dd/MM``, formatted once per distinct date."""
        if day not in self._due_cache:
            self._due_cache[day] = format_date(day, "dd/MM")
        return self._due_cache[day]


def card_kit(page: ProjectPage, slug: str) -> CardKit:
    option = Markup('<option value="{}"{}>{}</option>')
    status_options = {
        current.id: Markup("").join(
            option.format(s.id, Markup(" selected") if s.id == current.id else "", status_name(s.name))
            for s in page.statuses
        )
        for current in page.statuses
    }
    return CardKit(
        issues_url=url_for("tracker_pages.issue_list", slug=slug, project_id=page.project.id),
        writable=page.writable,
        csrf=page_csrf_token(),
        priority={name: str(text) for name, text in PRIORITY_TEXT.items()},
        status_options=status_options,
        status_label=_("Status de %(key)s", key="{key}"),
        priority_title=_("Prioridade"),
        due_title=_("Prazo"),
        children_title=_("Sub-issues"),
        move=_("Mover"),
    )


def board_context(slug: str, project_id: uuid.UUID) -> dict:
    page = load_project(slug, project_id)
    q = request.args.get("q", "").strip()[:200]
    mine = request.args.get("mine") == "1"
    filters = {"q": q, "order_by": "priority", "order": "desc"}
    if mine:
        filters["assignee_id"] = current_user.id
    found, truncated = all_issues(slug, project_id, filters)
    columns: dict[uuid.UUID, list[Issue]] = {status.id: [] for status in page.statuses}
    for issue in found:
        columns.setdefault(issue.status_id, []).append(issue)
    return {
        "page": page,
        "project": page.project,
        "slug": slug,
        "columns": columns,
        "q": q,
        "mine": mine,
        "truncated": truncated,
        "total": len(found),
        "kit": card_kit(page, slug),
        "issues_url": url_for("tracker_pages.issue_list", slug=slug, project_id=project_id),
    }


@blp.route("/w/<slug>/p/<uuid:project_id>/board")
@page_login_required()
def board(slug: str, project_id: uuid.UUID):
    return render_page("tracker/board.html", "board_columns", **board_context(slug, project_id))


def card_response(page: ProjectPage, slug: str, issue: Issue, status: int = 200) -> Response:
    body = render_template("tracker/card.html", issue=issue, kit=card_kit(page, slug))
    response = make_response(body, status)
    response.headers.add("Vary", "HX-Request")
    return response


def error_fragment(message: str, status: int) -> Response:
    response = make_response(render_template("tracker/_error.html", message=message), status)
    response.headers.add("Vary", "HX-Request")
    return response


@blp.route("/w/<slug>/p/<uuid:project_id>/issues/<key>/move", methods=["POST"])
@page_login_required()
def move_issue(slug: str, project_id: uuid.UUID, key: str):
    """Change an issue's status (a card dropped on a column, or the card's status select)."""
    try:
        changes = IssueWrite().load({"status_id": request.form.get("status_id", "")})
        issue = issues.update_issue(current_user, slug, project_id, key, changes)
    except ValidationError:
        return error_fragment(_("Escolha um status válido."), 422)
    except DomainError as exc:
        db.session.rollback()
        if exc.status == 404:
            raise
        return error_fragment(domain_message(exc), exc.status)
    if not htmx:
        return redirect(url_for("tracker_pages.board", slug=slug, project_id=project_id), code=303)
    return card_response(load_project(slug, project_id), slug, issue)


def issue_form_data(form, fields: tuple[str, ...]) -> dict:
    """The named form fields as the API would receive them: empty optional ones become null."""
    data: dict = {}
    for name in fields:
        if name not in form:
            continue
        value = form.get(name, "")
        if name != "description":
            value = value.strip()
        if value == "" and name not in ("title",):
            value = None
        data[name] = value
    return data


@blp.route("/w/<slug>/p/<uuid:project_id>/issues", methods=["POST"])
@page_login_required()
def create_issue(slug: str, project_id: uuid.UUID):
    """Quick create: a card at the top of a board column, a sub-issue, or a new issue page."""
    source = request.form.get("source", "")
    fields = ("title", "status_id", "parent_id", "priority", "type", "description")
    data = {k: v for k, v in issue_form_data(request.form, fields).items() if v is not None}
    render_error = _create_error_renderer(slug, project_id, source, request.form.get("title", ""))
    try:
        issue = issues.create_issue(current_user, slug, project_id, IssueCreate().load(data))
    except ValidationError as exc:
        return render_error(schema_errors(exc), 422)
    except DomainError as exc:
        db.session.rollback()
        if exc.status == 404:
            raise
        return render_error(domain_errors(exc), exc.status)
    if htmx and source == "board":
        return card_response(load_project(slug, project_id), slug, issue, 201)
    if htmx and source == "children" and issue.parent_id is not None:
        # Imported here: the issue page module builds on this one.
        from blueprints.pages.tracker_issue import issue_block

        parent = db.session.get(Issue, issue.parent_id)
        return issue_block(slug, project_id, parent.key, "issue_children")
    return to_page("tracker_pages.issue", slug=slug, project_id=project_id, key=issue.key)


def _create_error_renderer(
    slug: str, project_id: uuid.UUID, source: str, title: str
) -> Callable[[dict, int], Response]:
    def render(errors: dict, status: int) -> Response:
        message = errors.get("title") or errors.get("_form") or next(iter(errors.values()))
        if htmx:
            response = error_fragment(message, status)
            # The error shows under the form that was sent, not in the column or list it targets.
            response.headers["HX-Retarget"] = "find .form-error"
            response.headers["HX-Reswap"] = "innerHTML"
            return response
        return render_page(
            "tracker/new_issue.html",
            status=status,
            **new_issue_context(slug, project_id, {"title": title}, errors),
        )

    return render


def new_issue_context(slug: str, project_id: uuid.UUID, form: dict, errors: dict) -> dict:
    page = load_project(slug, project_id)
    return {"page": page, "project": page.project, "slug": slug, "form": form, "errors": errors}


@blp.route("/w/<slug>/p/<uuid:project_id>/issues/new")
@page_login_required()
def new_issue(slug: str, project_id: uuid.UUID):
    # A viewer is told at once (403) rather than after filling in the form.
    project_access(current_user, slug, project_id, WRITE)
    return render_page("tracker/new_issue.html", **new_issue_context(slug, project_id, {}, {}))


# --- list --------------------------------------------------------------------------------------

LIST_MULTI = ("status_id", "priority", "type", "label_id")
LIST_SINGLE = ("assignee_id", "parent_id", "q", "order_by", "order", "page", "per_page")


def list_args() -> dict:
    """The query string as the API's list query reads it (repeated keys are lists)."""
    args: dict = {}
    for name in LIST_MULTI:
        values = [v for v in request.args.getlist(name) if v.strip()]
        if values:
            args[name] = values
    for name in LIST_SINGLE:
        value = request.args.get(name, "").strip()
        if value:
            args[name] = value
    return args


@blp.route("/w/<slug>/p/<uuid:project_id>/issues")
@page_login_required()
def issue_list(slug: str, project_id: uuid.UUID):
    page = load_project(slug, project_id)
    raw = list_args()
    errors: dict = {}
    result = None
    try:
        filters = IssueListQuery().load(raw)
    except ValidationError as exc:
        errors = schema_errors(exc)
        filters = {"order_by": "created_at", "order": "desc", "page": 1, "per_page": 50}
    else:
        result = issues.list_issues(current_user, slug, project_id, filters)
    members = organizations.list_members(current_user, page.access.organization.id)
    labels = workspaces.list_labels(current_user, slug, project_id)
    parent = None
    if filters.get("parent_id"):
        parent = db.session.get(Issue, filters["parent_id"])
        if parent is not None and parent.project_id != project_id:
            parent = None
    base_args = {k: v for k, v in raw.items() if k != "page"}
    options = {
        "status": [(str(s.id), status_name(s.name)) for s in page.statuses],
        "priority": [(p, str(PRIORITY_TEXT[p])) for p in PRIORITY_ORDER],
        "type": [(t, str(TYPE_TEXT[t])) for t in ISSUE_TYPES],
        "label": [(str(label.id), label.name) for label in labels],
    }
    return render_page(
        "tracker/list.html",
        "issue_results",
        status=400 if errors else 200,
        page=page,
        project=page.project,
        slug=slug,
        filters=filters,
        raw=raw,
        base_args=base_args,
        result=result,
        errors=errors,
        members=members,
        labels=labels,
        parent=parent,
        options=options,
        page_sizes=LIST_PAGE_SIZES,
        issues_url=url_for("tracker_pages.issue_list", slug=slug, project_id=project_id),
    )
