"""The issue page: inline editing, sub-issues, relations, labels, attachments (their routes:
``tracker_attachments``), a sanitised Markdown description."""

from __future__ import annotations

import re
import uuid

from flask import Response, current_app, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_jwt_extended import current_user
from marshmallow import ValidationError

from blueprints.pages.common import after_change, page_login_required, refused, render_page, wants_fragment
from blueprints.pages.tracker_common import TrackerPagesBlueprint, issue_form_data, load_project
from blueprints.pages.tracker_markdown import render_markdown
from models.tracker import MANAGER_ROLES, RELATION_TYPES
from schemas.stock.transit import RecebimentoRequest
from schemas.tracker.issues import IssueWrite
from schemas.tracker.tenancy import LabelCreate
from services.errors import DomainError, NotFoundError
from services.stock import decisions, operations, transit
from services.tracker import (
    attachments,
    collaboration,
    custom_fields,
    issues,
    organizations,
    relations,
    semantic,
    workspaces,
)
from services.tracker.issues import IssueView

blp = TrackerPagesBlueprint("issue_pages", __name__)

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


class InvalidField(Exception):
    """A form field the page itself refuses (an issue key that names no issue it may point at)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.message = message


def timeline_context(slug: str, project_id: uuid.UUID, key: str, *, skip: int | None = None) -> dict:
    """What the timeline's parts need: the project frame (who may write, manage) and, when
    ``skip`` is given, the timeline's entries before the ``skip`` newest."""
    page = load_project(slug, project_id)
    context = {
        "page": page,
        "project": page.project,
        "slug": slug,
        "issue_key": key,
        "can_manage": page.access.role in MANAGER_ROLES,
        "RELATION_TEXT": RELATION_TEXT,
    }
    if skip is not None:
        context["timeline"] = collaboration.timeline(current_user, slug, project_id, key, skip=skip)
    return context


def mention_candidates(members) -> list[dict]:
    """Who a comment may @mention (the autocomplete's list): name and address of each member."""
    return [{"name": m.user.name, "email": m.user.email} for m in members]


def issue_context(slug: str, project_id: uuid.UUID, issue: IssueView, **extra) -> dict:
    page = load_project(slug, project_id)
    members = organizations.list_members(current_user, page.access.organization.id)
    context = {
        "page": page,
        "project": page.project,
        "slug": slug,
        "issue": issue,
        "description_html": render_markdown(issue.description),
        "members": members,
        "mentionable": mention_candidates(members),
        "issue_key": issue.key,
        # The issue was just read through the access check: its timeline needs no second one.
        "timeline": collaboration.timeline_of(issue.issue),
        "watching": collaboration.is_watching(current_user, issue.id),
        "labels": workspaces.list_labels(current_user, slug, project_id),
        "relation_types": RELATION_TYPES,
        "RELATION_TEXT": RELATION_TEXT,
        "parent": issues.issue_in_project(current_user, slug, project_id, issue.parent_id),
        "issue_url": url_for("issue_pages.issue", slug=slug, project_id=project_id, key=issue.key),
        "can_manage": page.access.role in MANAGER_ROLES,
        "field_defs": custom_fields.fields_of(page.project, page.access.organization),
        # An operations issue: its transfers, with the stock actions the viewer's role allows.
        "ops_transfers": operations.transfers_of_issue(issue.id, current_user),
        "attachments": attachments.attachments_of(issue.issue),
        "similar": semantic.similar(current_user, slug, issue.issue),
        "max_attachment_bytes": current_app.config["MAX_ATTACHMENT_BYTES"],
        "attachment_error": None,
        "transfer_error": None,
        "errors": {},
        "saved": None,
        "form": {},
    }
    context.update(extra)
    return context


def issue_block(
    slug: str, project_id: uuid.UUID, key: str, block: str, *, status: int = 200, **extra
) -> Response:
    """Re-read the issue (with relations and children) and answer with one block of its page."""
    found = issues.get_issue(current_user, slug, project_id, key)
    return render_page(
        "tracker/issue.html", block, status=status, **issue_context(slug, project_id, found, **extra)
    )


def _changed(slug: str, project_id: uuid.UUID, key: str, block: str) -> Response:
    """After a change on the issue page: its block again (htmx), or the page (a plain form)."""
    if not wants_fragment():
        return after_change("issue_pages.issue", slug=slug, project_id=project_id, key=key)
    return issue_block(slug, project_id, key, block)


@blp.route("/w/<slug>/p/<uuid:project_id>/issues/<key>")
@page_login_required()
def issue(slug: str, project_id: uuid.UUID, key: str):
    found = issues.get_issue(current_user, slug, project_id, key)
    return render_page("tracker/issue.html", **issue_context(slug, project_id, found))


def _form_number(text: str):
    """A number typed in the form (a decimal comma too); text that is none stays text, so the
    service refuses it in the field's own words."""
    try:
        number = float(text.replace(",", "."))
    except ValueError:
        return text
    return int(number) if number.is_integer() and abs(number) < 1e15 else number


def custom_field_changes(slug: str, project_id: uuid.UUID) -> dict:
    """The custom fields the form shows (``cf.<slug>``), as the API's ``custom_fields`` object."""
    page = load_project(slug, project_id)
    values: dict = {}
    for field in custom_fields.fields_of(page.project, page.access.organization):
        name = f"cf.{field.slug}"
        if field.type == "multi_select":
            values[field.slug] = request.form.getlist(name)
            continue
        if name not in request.form:
            continue
        text = request.form.get(name, "").strip()
        if not text:
            values[field.slug] = None
        else:
            values[field.slug] = _form_number(text) if field.type == "number" else text
    return values


def _parent_change(slug: str, project_id: uuid.UUID, text: str) -> str | None:
    """The id of a parent named by key in this project; empty clears it."""
    if not text.strip():
        return None
    try:
        parent, _access = issues.find_issue(current_user, slug, project_id, text.strip().upper())
    except NotFoundError:
        raise InvalidField("parent_id", _("Tarefa pai não encontrada neste projeto.")) from None
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
        if "custom_fields_present" in request.form:
            changes["custom_fields"] = custom_field_changes(slug, project_id)
        updated = issues.update_issue(current_user, slug, project_id, key, IssueWrite().load(changes))
    except InvalidField as exc:
        errors, status = {exc.field: exc.message}, 422
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc)
        errors, status = refusal.errors, refusal.status
    else:
        if not wants_fragment():
            return after_change("issue_pages.issue", slug=slug, project_id=project_id, key=updated.key)
        return render_page(
            "tracker/issue.html", block, **issue_context(slug, project_id, updated, saved=block)
        )
    return issue_block(
        slug, project_id, key, block, status=status, errors=errors, form=request.form.to_dict()
    )


def _related_issue_id(slug: str, text: str) -> uuid.UUID:
    """An issue of this workspace named by its key (``WEB-12``), in any of its projects."""
    match = _KEY.match(text or "")
    if match is not None:
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
    raise InvalidField(
        "related_key", _("Tarefa não encontrada neste espaço de trabalho (use a chave, ex.: WEB-12).")
    )


@blp.route("/w/<slug>/p/<uuid:project_id>/issues/<key>/relations", methods=["POST"])
@page_login_required()
def add_relation(slug: str, project_id: uuid.UUID, key: str):
    form = {"type": request.form.get("type", ""), "related_key": request.form.get("related_key", "").strip()}
    try:
        if form["type"] not in RELATION_TYPES:
            raise InvalidField("type", _("Escolha uma das opções."))
        related_id = _related_issue_id(slug, form["related_key"])
        relations.create_relation(current_user, slug, project_id, key, form["type"], related_id)
    except InvalidField as exc:
        errors, status = {exc.field: exc.message}, 422
    except DomainError as exc:
        refusal = refused(exc)
        errors, status = refusal.errors, refusal.status
    else:
        return _changed(slug, project_id, key, "issue_relations")
    return issue_block(slug, project_id, key, "issue_relations", status=status, errors=errors, form=form)


@blp.route("/w/<slug>/p/<uuid:project_id>/issues/<key>/relations/<uuid:relation_id>/delete", methods=["POST"])
@page_login_required()
def delete_relation(slug: str, project_id: uuid.UUID, key: str, relation_id: uuid.UUID):
    relations.delete_relation(current_user, slug, project_id, key, relation_id)
    return _changed(slug, project_id, key, "issue_relations")


@blp.route("/w/<slug>/p/<uuid:project_id>/issues/<key>/delete", methods=["POST"])
@page_login_required()
def delete_issue(slug: str, project_id: uuid.UUID, key: str):
    issues.delete_issue(current_user, slug, project_id, key)
    return after_change("tracker_pages.board", slug=slug, project_id=project_id)


@blp.route("/w/<slug>/p/<uuid:project_id>/labels", methods=["POST"])
@page_login_required()
def create_label(slug: str, project_id: uuid.UUID):
    """A new project label (owners and admins), from an issue's details panel."""
    key = request.form.get("issue_key", "")
    form = {"name": request.form.get("name", "").strip(), "color": request.form.get("color", "").strip()}
    try:
        workspaces.create_label(current_user, slug, project_id, LabelCreate().load(form))
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc)
        label_errors = {f"label_{name}": message for name, message in refusal.errors.items()}
        return issue_block(
            slug,
            project_id,
            key,
            "issue_fields",
            status=refusal.status,
            errors=label_errors,
            form={"label": form},
        )
    return _changed(slug, project_id, key, "issue_fields")


@blp.route("/w/<slug>/p/<uuid:project_id>/issues/<key>/transferencias/receber-todas", methods=["POST"])
@page_login_required()
def receive_all(slug: str, project_id: uuid.UUID, key: str):
    """Receive, as shipped, every transfer of the issue the viewer may receive."""
    found = issues.get_issue(current_user, slug, project_id, key)
    try:
        transit.receber_todas(found.id, current_user)
    except DomainError as exc:
        refusal = refused(exc, inline_not_found=True)
        return issue_block(
            slug, project_id, key, "issue_transfers", status=refusal.status, transfer_error=refusal.message
        )
    return after_change("issue_pages.issue", slug=slug, project_id=project_id, key=key)


@blp.route("/w/<slug>/p/<uuid:project_id>/issues/<key>/transferencias/<uuid:rid>/<acao>", methods=["POST"])
@page_login_required()
def transfer_action(slug: str, project_id: uuid.UUID, key: str, rid: uuid.UUID, acao: str):
    """Execute or receive a transfer the operations issue lists: the same service calls, and
    the same permission checks, as the batch and receipt pages."""
    issues.get_issue(current_user, slug, project_id, key)  # the issue must be readable
    try:
        if acao == "executar":
            decisions.executar(rid, current_user)
        elif acao == "receber":
            body = RecebimentoRequest().load(
                {"quantidadeRecebida": request.form.get("quantidadeRecebida", "")}
            )
            transit.receber(rid, current_user, body["quantidade_recebida"])
        else:
            raise NotFoundError("Ação desconhecida")
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc, inline_not_found=True)
        return issue_block(
            slug, project_id, key, "issue_transfers", status=refusal.status, transfer_error=refusal.message
        )
    return after_change("issue_pages.issue", slug=slug, project_id=project_id, key=key)
