"""What the tracker's page blueprints share: their mount point, their error page, the
labels their templates show, a project page's frame and issue form fields.

Every view calls the same ``services.tracker`` functions as the REST API, so
tenant isolation and roles are exactly the API's: a workspace of another
organization answers 404, a viewer's change answers 403. Pages live under
``{TRACKER_PREFIX}`` (``/tracker`` when the tracker is mounted at the root),
never under its API base.
"""

from __future__ import annotations

import uuid

from flask import Blueprint, Response
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_jwt_extended import current_user

from blueprints.pages.common import refused, render_fragment, wants_fragment
from models.tracker import ISSUE_TYPES, PRIORITIES
from services.errors import DomainError
from services.tracker import workspaces
from services.tracker.workspaces import ProjectView

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
    "rank": _l("Ordem do quadro"),
}
# Urgent first, as people scan a board.
PRIORITY_ORDER = tuple(reversed(PRIORITIES))


class TrackerPagesBlueprint(Blueprint):
    """Mounted under the configured tracker prefix, read when the app registers it; a
    service's refusal that nothing handled in place is its error page."""

    def __init__(self, name: str, import_name: str):
        super().__init__(name, import_name)
        self.register_error_handler(DomainError, tenant_error)
        self.context_processor(tracker_labels)

    def register(self, app, options):
        prefix = app.config.get("TRACKER_PREFIX") or "/tracker"
        super().register(app, {**options, "url_prefix": prefix})


def tracker_labels() -> dict:
    return {
        "PRIORITY_TEXT": PRIORITY_TEXT,
        "TYPE_TEXT": TYPE_TEXT,
        "ROLE_TEXT": ROLE_TEXT,
        "ORDER_TEXT": ORDER_TEXT,
        "PRIORITY_ORDER": PRIORITY_ORDER,
        "ISSUE_TYPES": ISSUE_TYPES,
    }


def tenant_error(exc: DomainError) -> Response:
    """A tenant's page never hints that it exists: 404 for non-members, 403 when suspended."""
    refusal = refused(exc, inline_not_found=True)
    status = refusal.status
    message = _("Página não encontrada.") if status == 404 else refusal.message
    if wants_fragment():
        return error_fragment(message, status)
    return render_fragment("errors/error.html", status=status, message=message)


def error_fragment(message: str, status: int) -> Response:
    return render_fragment("tracker/_error.html", status=status, message=message)


def load_project(slug: str, project_id: uuid.UUID) -> ProjectView:
    """The project a page is about, with what its frame shows (404 for non-members)."""
    return workspaces.open_project(current_user, slug, project_id)


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
