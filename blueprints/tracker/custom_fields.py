"""Custom fields of a project (plan feature ``custom_fields``)."""

from __future__ import annotations

from functools import partial

from flask_jwt_extended import current_user

from blueprints.common import auth_required
from blueprints.parsing import Blueprint
from blueprints.tracker.docs import error_responses
from schemas.tracker.custom_fields import CustomField, CustomFieldCreate, CustomFieldList, CustomFieldUpdate
from services.tracker import custom_fields

blp = Blueprint(
    "tracker_custom_fields",
    __name__,
    url_prefix="/workspaces/<slug>/projects/<uuid:project_id>/custom-fields",
    description=(
        "A project's own issue fields: text, number, date, select, multi_select. Issues carry "
        "their values in `custom_fields`, keyed by slug. Plan feature `custom_fields`: without "
        "it these operations answer 402 `PLAN_LIMIT_REACHED` with `details.feature`."
    ),
)

_errors = partial(error_responses, blp)


@blp.route("", methods=["GET"])
@auth_required()
@blp.response(200, CustomFieldList)
@_errors(402, 403, 404)
def list_custom_fields(slug, project_id):
    """The project's custom fields, in the order they were added (every member reads them).

    Plan feature `custom_fields`: 402 without it.
    """
    return {"custom_fields": custom_fields.list_fields(current_user, slug, project_id)}


@blp.route("", methods=["POST"])
@auth_required()
@blp.arguments(CustomFieldCreate, error_status_code=400)
@blp.response(201, CustomField)
@_errors(400, 402, 403, 404, 409)
def create_custom_field(definition, slug, project_id):
    """Add a field (owners and admins).

    The slug is derived from the name (`Cliente afetado` -> `cliente_afetado`,
    at most 26 characters) and is unique in the project: a name giving a taken
    slug is 409. `options` are required for select and multi_select and refused
    for the other types (400). At most 50 fields per project (409). A
    `required` field must be given on issue create and cannot be cleared; issues
    made before it became required are not changed. Plan feature `custom_fields`:
    402 without it.
    """
    return custom_fields.create_field(current_user, slug, project_id, definition)


@blp.route("/<uuid:field_id>", methods=["PATCH"])
@auth_required()
@blp.arguments(CustomFieldUpdate, error_status_code=400)
@blp.response(200, CustomField)
@_errors(400, 402, 403, 404)
def update_custom_field(changes, slug, project_id, field_id):
    """Rename a field, replace its options or change `required` (owners and admins).

    The slug and the type never change. Options taken out of the list are taken
    out of the issues that held them. Plan feature `custom_fields`: 402 without it.
    """
    return custom_fields.update_field(current_user, slug, project_id, field_id, changes)


@blp.route("/<uuid:field_id>", methods=["DELETE"])
@auth_required()
@blp.response(204)
@_errors(402, 403, 404)
def delete_custom_field(slug, project_id, field_id):
    """Delete a field and every value issues gave it (owners and admins).

    Plan feature `custom_fields`: 402 without it.
    """
    custom_fields.delete_field(current_user, slug, project_id, field_id)
