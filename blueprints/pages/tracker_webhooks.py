"""An organization's webhooks: list, add (the secret shown once), enable or disable, delete,
and each one's last deliveries. Owners and admins only, through the same
``services.tracker.webhooks`` functions as the REST API (anyone else gets its 403 page).
"""

from __future__ import annotations

import uuid

from flask import request
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_jwt_extended import current_user
from marshmallow import ValidationError

from blueprints.pages.common import page_login_required, refused, render_page
from blueprints.pages.tracker_common import TrackerPagesBlueprint
from models.tracker_webhooks import WEBHOOK_EVENTS
from schemas.tracker.webhooks import WebhookCreate
from services.errors import DomainError
from services.tracker import organizations, webhooks

blp = TrackerPagesBlueprint("webhook_pages", __name__)

TEMPLATE = "tracker/webhooks.html"
SHOWN_DELIVERIES = 10
EVENT_TEXT = {
    "issue.created": _l("Tarefa criada"),
    "issue.updated": _l("Tarefa alterada"),
    "issue.deleted": _l("Tarefa excluída"),
    "comment.created": _l("Novo comentário"),
    "attachment.created": _l("Anexo adicionado"),
    "attachment.deleted": _l("Anexo removido"),
}
STATE_TEXT = {
    "pending": (_l("Aguardando nova tentativa"), "warn"),
    "sending": (_l("Enviando"), "info"),
    "delivered": (_l("Entregue"), "ok"),
    "failed": (_l("Falhou"), "danger"),
}


def _context(organization_id: uuid.UUID, **extra) -> dict:
    organization, role = organizations.get_organization(current_user, organization_id)
    hooks = webhooks.list_webhooks(current_user, organization_id)
    return {
        "organization": organization,
        "my_role": role,
        "hooks": hooks,
        "deliveries": {
            hook.id: webhooks.list_deliveries(current_user, organization_id, hook.id, SHOWN_DELIVERIES)
            for hook in hooks
        },
        "EVENTS": WEBHOOK_EVENTS,
        "EVENT_TEXT": EVENT_TEXT,
        "STATE_TEXT": STATE_TEXT,
        "form": {"events": list(WEBHOOK_EVENTS)},
        "errors": {},
        "created": None,
        "list_error": None,
        **extra,
    }


def _list_part(organization_id: uuid.UUID, status: int = 200, **extra):
    return render_page(TEMPLATE, "webhooks", status=status, **_context(organization_id, **extra))


@blp.route("/o/<uuid:organization_id>/webhooks")
@page_login_required()
def webhooks_page(organization_id: uuid.UUID):
    return render_page(TEMPLATE, **_context(organization_id))


@blp.route("/o/<uuid:organization_id>/webhooks", methods=["POST"])
@page_login_required()
def add_webhook(organization_id: uuid.UUID):
    form = {
        "url": request.form.get("url", "").strip(),
        "events": request.form.getlist("events"),
        "secret": request.form.get("secret", ""),
    }
    data = {key: value for key, value in form.items() if value != ""}
    try:
        loaded = WebhookCreate().load(data)
        created = webhooks.create_webhook(
            current_user, organization_id, loaded["url"], loaded["events"], loaded.get("secret")
        )
    except (ValidationError, DomainError) as exc:
        refusal = refused(exc, inline_not_found=True, by_field=True)
        errors = {key.split(".")[0]: text for key, text in refusal.errors.items()}
        if "events" in errors:
            errors["events"] = _("Escolha pelo menos um evento.")
        return _list_part(organization_id, refusal.status, form=form, errors=errors)
    # The secret is shown in this answer only, as the API does.
    return _list_part(organization_id, created={"url": created.url, "secret": created.secret})


@blp.route("/o/<uuid:organization_id>/webhooks/<uuid:webhook_id>/enabled", methods=["POST"])
@page_login_required()
def set_enabled(organization_id: uuid.UUID, webhook_id: uuid.UUID):
    try:
        webhooks.update_webhook(
            current_user, organization_id, webhook_id, {"enabled": request.form.get("enabled") == "1"}
        )
    except DomainError as exc:
        refusal = refused(exc, inline_not_found=True)
        return _list_part(organization_id, refusal.status, list_error=refusal.message)
    return _list_part(organization_id)


@blp.route("/o/<uuid:organization_id>/webhooks/<uuid:webhook_id>/delete", methods=["POST"])
@page_login_required()
def delete_webhook(organization_id: uuid.UUID, webhook_id: uuid.UUID):
    try:
        webhooks.delete_webhook(current_user, organization_id, webhook_id)
    except DomainError as exc:
        refusal = refused(exc, inline_not_found=True)
        return _list_part(organization_id, refusal.status, list_error=refusal.message)
    return _list_part(organization_id)
