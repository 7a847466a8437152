"""A project's settings: its statuses (the board's columns), its labels and its custom fields.

Everyone in the organization sees them; owners and admins add, rename, recolour,
reorder and delete them through the same services as the REST API. A status
still used by issues cannot be deleted (the service's 409, shown in place).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from flask import request
from flask_babel import lazy_gettext as _l
from flask_jwt_extended import current_user
from marshmallow import ValidationError

from blueprints.pages.common import page_login_required, refused, render_page
from blueprints.pages.tracker_common import TrackerPagesBlueprint, load_project
from models.tracker import MANAGER_ROLES, STATUS_CATEGORIES
from schemas.tracker.custom_fields import CustomFieldCreate
from schemas.tracker.tenancy import LabelCreate, StatusCreate, StatusUpdate
from services.errors import DomainError
from services.tracker import custom_fields, workspaces

blp = TrackerPagesBlueprint("settings_pages", __name__)

TEMPLATE = "tracker/settings.html"
CATEGORY_TEXT = {
    "backlog": _l("Backlog"),
    "todo": _l("A fazer"),
    "in_progress": _l("Em andamento"),
    "done": _l("Concluída"),
    "cancelled": _l("Cancelada"),
}
FIELD_TYPE_TEXT = {
    "text": _l("Texto"),
    "number": _l("Número"),
    "date": _l("Data"),
    "select": _l("Seleção"),
    "multi_select": _l("Seleção múltipla"),
}


def _context(slug: str, project_id: uuid.UUID, **extra) -> dict:
    page = load_project(slug, project_id)
    return {
        "page": page,
        "project": page.project,
        "slug": slug,
        "active": "settings",
        "manages": page.access.role in MANAGER_ROLES,
        "labels": workspaces.list_labels(current_user, slug, project_id),
        "categories": STATUS_CATEGORIES,
        "CATEGORY_TEXT": CATEGORY_TEXT,
        "status_form": {},
        "status_errors": {},
        "edit_errors": {},
        "editing": None,
        "label_form": {},
        "label_errors": {},
        "custom_fields_enabled": custom_fields.enabled(page.access.organization),
        "custom_fields": custom_fields.fields_of(page.project, page.access.organization),
        "FIELD_TYPE_TEXT": FIELD_TYPE_TEXT,
        "field_form": {},
        "field_errors": {},
        **extra,
    }


def _status_form() -> dict:
    return {name: request.form.get(name, "").strip() for name in ("name", "color", "category")}


def _part(slug: str, project_id: uuid.UUID, block: str, status: int = 200, **extra):
    return render_page(TEMPLATE, block, status=status, **_context(slug, project_id, **extra))


def _refused(slug, project_id, block: str, exc: ValidationError | DomainError, errors_key: str, **extra):
    """The block again, with the service's or the schema's reason in place."""
    refusal = refused(exc, inline_not_found=True, by_field=True)
    return _part(slug, project_id, block, refusal.status, **{errors_key: refusal.errors}, **extra)


def _change(slug, project_id, block: str, save: Callable[[], object], errors_key: str, **extra):
    """Run one change through its service; the block again, refused in place or updated."""
    try:
        save()
    except (ValidationError, DomainError) as exc:
        return _refused(slug, project_id, block, exc, errors_key, **extra)
    return _part(slug, project_id, block)


@blp.route("/w/<slug>/p/<uuid:project_id>/settings")
@page_login_required()
def project_settings(slug: str, project_id: uuid.UUID):
    return render_page(TEMPLATE, **_context(slug, project_id))


@blp.route("/w/<slug>/p/<uuid:project_id>/settings/statuses", methods=["POST"])
@page_login_required()
def add_status(slug: str, project_id: uuid.UUID):
    form = _status_form()
    return _change(
        slug,
        project_id,
        "statuses",
        lambda: workspaces.create_status(current_user, slug, project_id, StatusCreate().load(form)),
        "status_errors",
        status_form=form,
    )


@blp.route("/w/<slug>/p/<uuid:project_id>/settings/statuses/<uuid:status_id>", methods=["POST"])
@page_login_required()
def edit_status(slug: str, project_id: uuid.UUID, status_id: uuid.UUID):
    form = {key: value for key, value in _status_form().items() if key in request.form}
    return _change(
        slug,
        project_id,
        "statuses",
        lambda: workspaces.update_status(
            current_user, slug, project_id, status_id, StatusUpdate().load(form)
        ),
        "edit_errors",
        editing=status_id,
    )


@blp.route("/w/<slug>/p/<uuid:project_id>/settings/statuses/<uuid:status_id>/move", methods=["POST"])
@page_login_required()
def move_status(slug: str, project_id: uuid.UUID, status_id: uuid.UUID):
    step = -1 if request.form.get("direction") == "up" else 1
    workspaces.move_status(current_user, slug, project_id, status_id, step)
    return _part(slug, project_id, "statuses")


@blp.route("/w/<slug>/p/<uuid:project_id>/settings/statuses/<uuid:status_id>/delete", methods=["POST"])
@page_login_required()
def delete_status(slug: str, project_id: uuid.UUID, status_id: uuid.UUID):
    return _change(
        slug,
        project_id,
        "statuses",
        lambda: workspaces.delete_status(current_user, slug, project_id, status_id),
        "edit_errors",
        editing=status_id,
    )


@blp.route("/w/<slug>/p/<uuid:project_id>/settings/labels", methods=["POST"])
@page_login_required()
def add_label(slug: str, project_id: uuid.UUID):
    form = {name: request.form.get(name, "").strip() for name in ("name", "color")}
    return _change(
        slug,
        project_id,
        "labels",
        lambda: workspaces.create_label(current_user, slug, project_id, LabelCreate().load(form)),
        "label_errors",
        label_form=form,
    )


@blp.route("/w/<slug>/p/<uuid:project_id>/settings/labels/<uuid:label_id>/delete", methods=["POST"])
@page_login_required()
def delete_label(slug: str, project_id: uuid.UUID, label_id: uuid.UUID):
    workspaces.delete_label(current_user, slug, project_id, label_id)
    return _part(slug, project_id, "labels")


@blp.route("/w/<slug>/p/<uuid:project_id>/settings/custom-fields", methods=["POST"])
@page_login_required()
def add_custom_field(slug: str, project_id: uuid.UUID):
    """A new custom field; a select's options come as one line, separated by commas."""
    form = {name: request.form.get(name, "").strip() for name in ("name", "type", "options")}
    body: dict = {"name": form["name"], "type": form["type"], "required": "required" in request.form}
    options = [option.strip() for option in form["options"].split(",") if option.strip()]
    if options:
        body["options"] = options
    return _change(
        slug,
        project_id,
        "custom_fields",
        lambda: custom_fields.create_field(current_user, slug, project_id, CustomFieldCreate().load(body)),
        "field_errors",
        field_form=form,
    )


@blp.route("/w/<slug>/p/<uuid:project_id>/settings/custom-fields/<uuid:field_id>/delete", methods=["POST"])
@page_login_required()
def delete_custom_field(slug: str, project_id: uuid.UUID, field_id: uuid.UUID):
    return _change(
        slug,
        project_id,
        "custom_fields",
        lambda: custom_fields.delete_field(current_user, slug, project_id, field_id),
        "field_errors",
    )
