"""The issue page: inline editing, sub-issues, relations, labels, a sanitised Markdown description."""

from __future__ import annotations

import re
import uuid

from flask import Response, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_jwt_extended import current_user
from marshmallow import ValidationError

from blueprints.pages.common import page_login_required, render_page
from blueprints.pages.tracker import blp, issue_form_data, load_project, to_page
from blueprints.pages.tracker_markdown import render_markdown
from blueprints.pages.tracker_text import domain_errors, schema_errors
from extensions import db, htmx
from models.tracker import MANAGER_ROLES, RELATION_TYPES, Issue
from schemas.tracker.issues import IssueWrite
from schemas.tracker.tenancy import LabelCreate
from services.errors import DomainError, NotFoundError
from services.tracker import issues, organizations, relations, workspaces

RELATION_TEXT = {
    "blocks": _l("bloqueia"),
    "is_blocked_by": _l("é bloqueada por"),
    "relates_to": _l("relaciona-se com"),
    "duplicates": _l("duplica"),
}
_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9]{1,9})-(\d{1,10})\s*$")
# Which block of the page each kind of edit answers with.
PARTS = {"title": "issue_title", "description": "issue_description", "fields": "issue_fields"}
EDIT_FIELDS = (
    "title",
    "description",
    "type",
    "priority",
    "status_id",
    "assignee_id",
    "start_date",
    "due_date",
    "estimate",
)


def issue_context(slug: str, project_id: uuid.UUID, issue: Issue, **extra) -> dict:
    page = load_project(slug, project_id)
    context = {
        "page": page,
        "project": page.project,
        "slug": slug,
        "issue": issue,
        "description_html": render_markdown(issue.description),
        "members": organizations.list_members(current_user, page.access.organization.id),
        "labels": workspaces.list_labels(current_user, slug, project_id),
        "relation_types": RELATION_TYPES,
        "RELATION_TEXT": RELATION_TEXT,
        "parent": db.session.get(Issue, issue.parent_id) if issue.parent_id else None,
        "issue_url": url_for("tracker_pages.issue", slug=slug, project_id=project_id, key=issue.key),
        "can_manage": page.access.role in MANAGER_ROLES,
        "errors": {},
        "saved": None,
        "form": {},
    }
    context.update(extra)
    return context


def issue_block(slug: str, project_id: uuid.UUID, key: str, block: str) -> Response:
    """Re-read the issue (with relations and children) and answer with one block of its page."""
    issue = issues.get_issue(current_user, slug, project_id, key)
    return render_page("tracker/issue.html", block, **issue_context(slug, project_id, issue))


@blp.route("/w/<slug>/p/<uuid:project_id>/issues/<key>")
@page_login_required()
def issue(slug: str, project_id: uuid.UUID, key: str):
    found = issues.get_issue(current_user, slug, project_id, key)
    return render_page("tracker/issue.html", **issue_context(slug, project_id, found))


def _parent_change(slug: str, project_id: uuid.UUID, text: str) -> str | None:
    """The id of a parent named by key in this project; empty clears it."""
    if not text.strip():
        return None
    try:
        parent, _access = issues.find_issue(current_user, slug, project_id, text.strip().upper())
    except NotFoundError:
        raise ValidationError({"parent_id": ["No such parent issue"]}) from None
    return str(parent.id)


@blp.route("/w/<slug>/p/<uuid:project_id>/issues/<key>", methods=["POST"])
@page_login_required()
def update_issue(slug: str, project_id: uuid.UUID, key: str):
    """Change the fields a form sent; answers with the block that form lives in."""
    block = PARTS.get(request.form.get("part", ""), "issue_fields")
    try:
        changes = issue_form_data(request.form, EDIT_FIELDS)
        if "labels_present" in request.form:
            changes["label_ids"] = request.form.getlist("label_ids")
        if "parent_key" in request.form:
            changes["parent_id"] = _parent_change(slug, project_id, request.form.get("parent_key", ""))
        updated = issues.update_issue(current_user, slug, project_id, key, IssueWrite().load(changes))
    except ValidationError as exc:
        errors, status = schema_errors(exc), 422
    except DomainError as exc:
        db.session.rollback()
        if exc.status == 404:
            raise
        errors, status = domain_errors(exc), exc.status
    else:
        if not _is_htmx():
            return to_page("tracker_pages.issue", slug=slug, project_id=project_id, key=updated.key)
        return render_page(
            "tracker/issue.html", block, **issue_context(slug, project_id, updated, saved=block)
        )
    current = issues.get_issue(current_user, slug, project_id, key)
    return render_page(
        "tracker/issue.html",
        block,
        status=status,
        **issue_context(slug, project_id, current, errors=errors, form=request.form.to_dict()),
    )


def _is_htmx() -> bool:
    return bool(htmx)


def _related_issue_id(slug: str, text: str) -> uuid.UUID:
    """An issue of this workspace named by its key (``WEB-12``), in any of its projects."""
    match = _KEY.match(text or "")
    if match is None:
        raise ValidationError({"related_key": ["Not a valid key"]})
    prefix = match.group(1).upper()
    for project in workspaces.list_projects(current_user, slug):
        if project.key == prefix:
            try:
                found, _access = issues.find_issue(
                    current_user, slug, project.id, f"{prefix}-{match.group(2)}"
                )
            except NotFoundError:
                break
            return found.id
    raise ValidationError({"related_key": ["No such issue in this workspace"]})


@blp.route("/w/<slug>/p/<uuid:project_id>/issues/<key>/relations", methods=["POST"])
@page_login_required()
def add_relation(slug: str, project_id: uuid.UUID, key: str):
    form = {"type": request.form.get("type", ""), "related_key": request.form.get("related_key", "").strip()}
    try:
        if form["type"] not in RELATION_TYPES:
            raise ValidationError({"type": ["Must be one of the relation types"]})
        related_id = _related_issue_id(slug, form["related_key"])
        relations.create_relation(current_user, slug, project_id, key, form["type"], related_id)
    except ValidationError as exc:
        errors, status = schema_errors(exc), 422
        if "related_key" in errors:
            errors["related_key"] = _("Issue não encontrada neste workspace (use a chave, ex.: WEB-12).")
    except DomainError as exc:
        db.session.rollback()
        if exc.status == 404:
            raise
        errors, status = domain_errors(exc), exc.status
    else:
        if not _is_htmx():
            return to_page("tracker_pages.issue", slug=slug, project_id=project_id, key=key)
        return issue_block(slug, project_id, key, "issue_relations")
    current = issues.get_issue(current_user, slug, project_id, key)
    return render_page(
        "tracker/issue.html",
        "issue_relations",
        status=status,
        **issue_context(slug, project_id, current, errors=errors, form=form),
    )


@blp.route("/w/<slug>/p/<uuid:project_id>/issues/<key>/relations/<uuid:relation_id>/delete", methods=["POST"])
@page_login_required()
def delete_relation(slug: str, project_id: uuid.UUID, key: str, relation_id: uuid.UUID):
    relations.delete_relation(current_user, slug, project_id, key, relation_id)
    if not _is_htmx():
        return to_page("tracker_pages.issue", slug=slug, project_id=project_id, key=key)
    return issue_block(slug, project_id, key, "issue_relations")


@blp.route("/w/<slug>/p/<uuid:project_id>/issues/<key>/delete", methods=["POST"])
@page_login_required()
def delete_issue(slug: str, project_id: uuid.UUID, key: str):
    issues.delete_issue(current_user, slug, project_id, key)
    return to_page("tracker_pages.board", slug=slug, project_id=project_id)


@blp.route("/w/<slug>/p/<uuid:project_id>/labels", methods=["POST"])
@page_login_required()
def create_label(slug: str, project_id: uuid.UUID):
    """A new project label (owners and admins), from an issue's details panel."""
    key = request.form.get("issue_key", "")
    form = {"name": request.form.get("name", "").strip(), "color": request.form.get("color", "").strip()}
    try:
        workspaces.create_label(current_user, slug, project_id, LabelCreate().load(form))
    except ValidationError as exc:
        errors, status = schema_errors(exc), 422
    except DomainError as exc:
        db.session.rollback()
        if exc.status == 404:
            raise
        errors, status = domain_errors(exc), exc.status
    else:
        if not _is_htmx():
            return to_page("tracker_pages.issue", slug=slug, project_id=project_id, key=key)
        return issue_block(slug, project_id, key, "issue_fields")
    current = issues.get_issue(current_user, slug, project_id, key)
    label_errors = {f"label_{name}": message for name, message in errors.items()}
    return render_page(
        "tracker/issue.html",
        "issue_fields",
        status=status,
        **issue_context(slug, project_id, current, errors=label_errors, form={"label": form}),
    )
