"""Custom fields (plan feature ``custom_fields``): a project's own issue fields and their values.

Owners and admins define a project's fields (``MANAGE``, as statuses and
labels); everyone in the organization reads them. Issues carry their values in
a ``custom_fields`` object keyed by the field's slug; on input the field's id is
accepted too. The slug is derived from the name when the field is created and
never changes afterwards (renaming keeps it), since clients and saved list
views name fields by it.

Without the feature, managing fields, writing values and filtering by them
answer 402; reading an issue shows ``custom_fields: {}``.
"""

from __future__ import annotations

import math
import re
import unicodedata
import uuid
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import Uuid, and_, any_, bindparam, delete, exists, func, select
from sqlalchemy.dialects.postgresql import ARRAY

from extensions import db
from models.auth import User
from models.tracker import Issue, Organization, Project
from models.tracker_fields import MAX_SLUG_LENGTH, SELECT_TYPES, CustomField, CustomFieldValue
from schemas.fields import CONTROL
from services import locks, unique
from services.errors import ConflictError, FieldError, NotFoundError, ValidationFailed
from services.rows import DriverRead
from services.tracker import activity, plans
from services.tracker.access import MANAGE, READ, OrganizationBrief, ProjectBrief, project_access

FEATURE = "custom_fields"
MAX_FIELDS_PER_PROJECT = 50
MAX_TEXT_LENGTH = 2000
# Numbers are stored as doubles: beyond this they stop being exact integers.
MAX_NUMBER = 1e15


@dataclass(frozen=True)
class FieldDefinition:
    """A field as created or changed: what the schema loaded."""

    name: str
    type: str
    options: list[str]
    required: bool


def enabled(organization: Organization | OrganizationBrief) -> bool:
    return bool(organization.plan_features.get(FEATURE))


def _ordered(project_id: uuid.UUID):
    return select(CustomField).where(CustomField.project_id == project_id).order_by(CustomField.position)


def fields_of(project: Project, organization: Organization) -> list[CustomField]:
    """The project's fields in order; none when the plan lacks the feature (pages read this)."""
    if not enabled(organization):
        return []
    return list(db.session.scalars(_ordered(project.id)))


def list_fields(user: User, slug: str, project_id: uuid.UUID) -> list[CustomField]:
    project, access = project_access(user, slug, project_id, READ)
    plans.ensure_feature(access.organization, FEATURE)
    return list(db.session.scalars(_ordered(project.id)))


def derive_slug(name: str) -> str:
    """``"Cliente afetado"`` -> ``"cliente_afetado"``: ASCII letters, digits and underscores."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "_", ascii_name.lower()).strip("_")
    return slug[:MAX_SLUG_LENGTH].rstrip("_")


def _check_options(field_type: str, options: list[str] | None) -> list[str]:
    if field_type in SELECT_TYPES:
        if not options:
            raise ValidationFailed(
                [
                    FieldError(
                        ("body", "options"),
                        "A select field needs at least one option",
                        reason="options_required",
                    )
                ]
            )
        if len(set(options)) != len(options):
            raise ValidationFailed(
                [FieldError(("body", "options"), "Options must be distinct", reason="options_repeated")]
            )
        return list(options)
    if options:
        raise ValidationFailed(
            [
                FieldError(
                    ("body", "options"),
                    "Only select and multi_select fields have options",
                    reason="options_unused",
                )
            ]
        )
    return []


def create_field(user: User, slug: str, project_id: uuid.UUID, definition: FieldDefinition) -> CustomField:
    project, access = project_access(user, slug, project_id, MANAGE)
    plans.ensure_feature(access.organization, FEATURE)
    field_slug = derive_slug(definition.name)
    if not field_slug:
        raise ValidationFailed(
            [
                FieldError(
                    ("body", "name"),
                    "The name needs at least one letter or digit",
                    reason="field_name_unusable",
                )
            ]
        )
    options = _check_options(definition.type, definition.options)
    # Lock the project row: two creations at once cannot both pass the count below.
    locks.lock_row(Project, project.id)
    count, last = db.session.execute(
        select(func.count(), func.max(CustomField.position)).where(CustomField.project_id == project.id)
    ).one()
    if db.session.scalar(
        select(exists().where(CustomField.project_id == project.id, CustomField.slug == field_slug))
    ):
        raise unique.conflict("uq_custom_fields_project_id_slug")
    if count >= MAX_FIELDS_PER_PROJECT:
        raise ConflictError(
            f"A project has at most {MAX_FIELDS_PER_PROJECT} custom fields",
            reason="custom_field_limit",
            params={"limit": MAX_FIELDS_PER_PROJECT},
        )
    field = CustomField(
        project_id=project.id,
        name=definition.name,
        slug=field_slug,
        type=definition.type,
        options=options,
        required=definition.required,
        position=(last + 1) if last is not None else 0,
    )
    with unique.or_conflict():
        db.session.add(field)
    return field


def _field_of(project: Project, field_id: uuid.UUID) -> CustomField:
    field = db.session.get(CustomField, field_id)
    if field is None or field.project_id != project.id:
        raise NotFoundError("Custom field not found", reason="custom_field_not_found")
    return field


def update_field(
    user: User, slug: str, project_id: uuid.UUID, field_id: uuid.UUID, changes: dict
) -> CustomField:
    """Name, options and ``required`` change; the slug and the type do not.

    Options taken out of a select are taken out of the issues that held them.
    """
    project, access = project_access(user, slug, project_id, MANAGE)
    plans.ensure_feature(access.organization, FEATURE)
    field = _field_of(project, field_id)
    if "name" in changes:
        field.name = changes["name"]
    if "required" in changes:
        field.required = changes["required"]
    if "options" in changes:
        options = _check_options(field.type, changes["options"])
        removed = set(field.options) - set(options)
        if removed:
            db.session.execute(
                delete(CustomFieldValue)
                .where(CustomFieldValue.field_id == field.id, CustomFieldValue.text_value.in_(removed))
                .execution_options(synchronize_session=False)
            )
        field.options = options
    db.session.flush()
    return field


def delete_field(user: User, slug: str, project_id: uuid.UUID, field_id: uuid.UUID) -> None:
    """The field and every value issues gave it."""
    project, access = project_access(user, slug, project_id, MANAGE)
    plans.ensure_feature(access.organization, FEATURE)
    field = _field_of(project, field_id)
    db.session.execute(
        delete(CustomFieldValue)
        .where(CustomFieldValue.field_id == field.id)
        .execution_options(synchronize_session=False)
    )
    db.session.delete(field)
    db.session.flush()


# -- values -----------------------------------------------------------------


def _value_loc(slug: str) -> tuple[str, ...]:
    return ("body", "custom_fields", slug)


def _invalid(loc: tuple[str, ...], field: CustomField, message: str) -> FieldError:
    """A value of the wrong kind for ``field``, with the reason its type gives."""
    if field.type == "text":
        return FieldError(loc, message, reason="custom_field_text_invalid")
    if field.type == "number":
        return FieldError(loc, message, reason="custom_field_number_invalid")
    if field.type == "date":
        return FieldError(loc, message, reason="custom_field_date_invalid")
    return FieldError(loc, message, reason="custom_field_option_invalid")


def _parse(field: CustomField, raw: Any) -> Any:
    """The value in its stored form (``None`` clears), or a message saying what is wrong."""
    if raw is None:
        return None
    if field.type == "text":
        if not isinstance(raw, str):
            raise ValueError("Must be a string")
        text = raw.strip()
        if CONTROL.search(text):
            raise ValueError("Must not contain control characters or invalid Unicode.")
        if len(text) > MAX_TEXT_LENGTH:
            raise ValueError(f"Longer than maximum length {MAX_TEXT_LENGTH}.")
        return text or None
    if field.type == "number":
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise ValueError("Must be a number")
        if not math.isfinite(raw) or abs(raw) > MAX_NUMBER:
            raise ValueError(f"Must be between -{MAX_NUMBER:.0e} and {MAX_NUMBER:.0e}")
        return float(raw)
    if field.type == "date":
        if not isinstance(raw, str):
            raise ValueError("Must be a date as YYYY-MM-DD")
        return _date(raw)
    if field.type == "select":
        if not isinstance(raw, str):
            raise ValueError("Must be one of the field's options")
        if raw not in field.options:
            raise ValueError(f"{raw!r} is not an option of this field")
        return raw
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise ValueError("Must be a list of the field's options")
    unknown = [item for item in raw if item not in field.options]
    if unknown:
        raise ValueError(f"{unknown[0]!r} is not an option of this field")
    chosen = set(raw)
    # Kept in the field's order, so equal sets compare equal in the history.
    return [option for option in field.options if option in chosen] or None


def _date(text: str) -> date:
    # fromisoformat alone would also take "20260105" and week dates.
    try:
        if len(text) == 10:
            return date.fromisoformat(text)
    except ValueError:
        pass
    raise ValueError("Must be a date as YYYY-MM-DD")


def _rows(issue_id: uuid.UUID, field: CustomField, value: Any) -> list[CustomFieldValue]:
    if value is None:
        return []
    if field.type == "multi_select":
        return [CustomFieldValue(issue_id=issue_id, field_id=field.id, text_value=option) for option in value]
    if field.type == "number":
        return [CustomFieldValue(issue_id=issue_id, field_id=field.id, number_value=value)]
    if field.type == "date":
        return [CustomFieldValue(issue_id=issue_id, field_id=field.id, date_value=value)]
    return [CustomFieldValue(issue_id=issue_id, field_id=field.id, text_value=value)]


def _shown(field: CustomField | Any, rows: list[CustomFieldValue] | list[Any]) -> Any:
    """The value as the API, the pages and the history show it (from the ORM objects, or from
    rows with their ``type``, ``options`` and value columns)."""
    if not rows:
        return None
    if field.type == "multi_select":
        held = {row.text_value for row in rows}
        return [option for option in field.options if option in held]
    row = rows[0]
    if field.type == "number":
        number = row.number_value
        return int(number) if number is not None and number.is_integer() else number
    if field.type == "date":
        return row.date_value.isoformat() if row.date_value else None
    return row.text_value


def write_values(
    issue: Issue,
    organization: Organization,
    raw: dict[str, Any] | None,
    actor_id: uuid.UUID,
    at,
    *,
    creating: bool,
) -> dict[str, dict[str, Any]]:
    """Validate and store the ``custom_fields`` of an issue's create or PATCH body; answers what
    changed on PATCH (``{"custom_fields.<slug>": {"old", "new"}}``, for the webhooks), and on
    create the new issue's values as ``attach`` shows them (no second read of the fields).

    Only the fields named change; ``null`` clears one. On create every required
    field must be given; on PATCH a required field cannot be cleared. Each field
    whose value changes on PATCH gets a history entry ``custom_fields.<slug>``.
    """
    if not raw and not (creating and enabled(organization)):
        return {}
    plans.ensure_feature(organization, FEATURE)
    fields = list(db.session.scalars(_ordered(issue.project_id)))
    parsed = _validated(fields, raw or {}, creating=creating)
    if not parsed:
        return {field.slug: None for field in fields} if creating else {}
    shown: dict[uuid.UUID, Any] = {}
    changed: dict[str, dict[str, Any]] = {}
    current: dict[uuid.UUID, list[CustomFieldValue]] = (
        {} if creating else _stored_rows(issue.id, list(parsed))
    )
    for field_id, (field, stored) in parsed.items():
        old = _shown(field, current.get(field_id, []))
        new_rows = _rows(issue.id, field, stored)
        new = shown[field_id] = _shown(field, new_rows)
        if old == new:
            continue
        for row in current.get(field_id, []):
            db.session.delete(row)
        db.session.add_all(new_rows)
        if not creating:
            activity.record(
                issue.id, actor_id, "updated", field=f"custom_fields.{field.slug}", old=old, new=new, at=at
            )
            changed[f"custom_fields.{field.slug}"] = {"old": old, "new": new}
    db.session.flush()
    if creating:
        return {field.slug: shown.get(field.id) for field in fields}
    return changed


def _validated(
    fields: list[CustomField], raw: dict[str, Any], *, creating: bool
) -> dict[uuid.UUID, tuple[CustomField, Any]]:
    """Each field ``raw`` names (by slug or id), with its value in stored form. Every unknown
    field, bad value and missing required field is refused at once (``ValidationFailed``)."""
    by_key = {field.slug: field for field in fields} | {str(field.id): field for field in fields}
    errors: list[FieldError] = []
    parsed: dict[uuid.UUID, tuple[CustomField, Any]] = {}
    for key, value in raw.items():
        field = by_key.get(key)
        if field is None:
            errors.append(
                FieldError(
                    _value_loc(key), "No such custom field in this project", reason="custom_field_unknown"
                )
            )
            continue
        try:
            stored = _parse(field, value)
        except ValueError as exc:
            errors.append(_invalid(_value_loc(field.slug), field, str(exc)))
            continue
        if stored is None and field.required:
            errors.append(_required(field))
            continue
        parsed[field.id] = (field, stored)
    if creating:
        errors += [_required(field) for field in fields if field.required and field.id not in parsed]
    if errors:
        raise ValidationFailed(errors)
    return parsed


def _required(field: CustomField) -> FieldError:
    return FieldError(_value_loc(field.slug), "This field is required", reason="custom_field_required")


def _stored_rows(issue_id: uuid.UUID, field_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[CustomFieldValue]]:
    """The issue's value rows of these fields, by field."""
    rows: dict[uuid.UUID, list[CustomFieldValue]] = {}
    for row in db.session.scalars(
        select(CustomFieldValue).where(
            CustomFieldValue.issue_id == issue_id, CustomFieldValue.field_id.in_(field_ids)
        )
    ):
        rows.setdefault(row.field_id, []).append(row)
    return rows


def attach(views: list) -> None:
    """Give each issue view its ``custom_fields``: every field of its project by slug, ``None``
    when unset. One query for a whole page (fields joined to the page's values)."""
    if not views:
        return
    organization = db.session.get(Organization, views[0].issue.organization_id)
    shown = values_of(organization, [(view.issue.id, view.issue.project_id) for view in views])
    for view in views:
        view.custom_fields = shown[view.issue.id]


def _fields_and_values(dialect: str):
    """Every field of the projects ``project_ids``, each with its values among ``issue_ids``.

    Plain columns, not ORM objects: a row carries the attributes ``_shown`` reads of a field
    (``type``, ``options``) and of a value. On PostgreSQL the ids go as two arrays: a page's
    50 ids as an ``IN`` list made a new SQL text of 51 parameters each time, which the driver
    parses anew (it caches up to 50).
    """
    if dialect == "postgresql":
        issue_match = CustomFieldValue.issue_id == any_(bindparam("issue_ids", type_=ARRAY(Uuid)))
        project_match = CustomField.project_id == any_(bindparam("project_ids", type_=ARRAY(Uuid)))
    else:
        issue_match = CustomFieldValue.issue_id.in_(bindparam("issue_ids", expanding=True))
        project_match = CustomField.project_id.in_(bindparam("project_ids", expanding=True))
    return (
        select(
            CustomField.id,
            CustomField.project_id,
            CustomField.slug,
            CustomField.type,
            CustomField.options,
            CustomFieldValue.issue_id,
            CustomFieldValue.text_value,
            CustomFieldValue.number_value,
            CustomFieldValue.date_value,
        )
        .outerjoin(CustomFieldValue, and_(CustomFieldValue.field_id == CustomField.id, issue_match))
        .where(project_match)
        .order_by(CustomField.position)
    )


# Built once, at import: every issue read runs it, and building it cost about as much as running it.
_FIELDS_AND_VALUES = {
    dialect: DriverRead(_fields_and_values(dialect)) for dialect in ("postgresql", "sqlite")
}


def values_of(
    organization: Organization | OrganizationBrief | None, issues: list[tuple[uuid.UUID, uuid.UUID]]
) -> dict[uuid.UUID, dict[str, Any]]:
    """``custom_fields`` of each issue, given as ``(issue id, project id)``: every field of its
    project by slug, ``None`` when unset; ``{}`` when the plan lacks the feature. One query."""
    if not issues or organization is None or not enabled(organization):
        return {issue_id: {} for issue_id, _ in issues}
    rows = _FIELDS_AND_VALUES[db.session.get_bind().dialect.name].all(
        {
            "issue_ids": [issue_id for issue_id, _ in issues],
            "project_ids": list({project_id for _, project_id in issues}),
        }
    )
    fields: dict[uuid.UUID, Any] = {}
    held: dict[tuple[uuid.UUID, uuid.UUID], list[Any]] = {}
    for row in rows:
        fields[row.id] = row
        if row.issue_id is not None:
            held.setdefault((row.issue_id, row.id), []).append(row)
    return {
        issue_id: {
            field.slug: _shown(field, held.get((issue_id, field.id), []))
            for field in fields.values()
            if field.project_id == project_id
        }
        for issue_id, project_id in issues
    }


# -- list filter --------------------------------------------------------------


FILTER_LOC = ("query", "custom_field")


def conditions(
    project: Project | ProjectBrief, organization: Organization | OrganizationBrief, terms: list[str] | None
) -> list:
    """``custom_field=<slug>:<value>`` terms as conditions on ``Issue``; every term must hold.

    Text compares the whole value exactly; a number or date is parsed; a select
    compares its option; a multi-select matches when it holds that option (any
    of its values).
    """
    if not terms:
        return []
    plans.ensure_feature(organization, FEATURE)
    fields = {field.slug: field for field in db.session.scalars(_ordered(project.id))}
    found: list = []
    errors: list[FieldError] = []
    for term in terms:
        field_slug, sep, text = term.partition(":")
        field = fields.get(field_slug)
        if not sep or field is None:
            errors.append(
                FieldError(
                    FILTER_LOC,
                    f"{term!r}: expected <slug>:<value> naming a field of this project",
                    reason="custom_field_unknown",
                )
            )
            continue
        try:
            if field.type == "number":
                number = float(text)
                if not math.isfinite(number):
                    raise ValueError
                column, value = CustomFieldValue.number_value, number
            elif field.type == "date":
                column, value = CustomFieldValue.date_value, _date(text)
            else:
                if field.type in SELECT_TYPES and text not in field.options:
                    raise ValueError
                column, value = CustomFieldValue.text_value, text
        except ValueError:
            errors.append(
                _invalid(FILTER_LOC, field, f"{term!r}: not a valid value for a {field.type} field")
            )
            continue
        found.append(
            exists().where(
                CustomFieldValue.issue_id == Issue.id, CustomFieldValue.field_id == field.id, column == value
            )
        )
    if errors:
        raise ValidationFailed(errors)
    return found
