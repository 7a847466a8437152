"""Plans, their assignment to organizations, and the limits they impose.

An organization stores a copy of its plan's limits and features taken when
the plan is assigned, so editing a plan never changes what organizations
already on it may do. Usage is always computed from the data.

Storage is the bytes (UTF-8) of what members write: issue titles and
descriptions, and comments. ``storage_expression`` and
``comment_storage_expression`` compute it from the data (the admin
statistics); the limit checks read the per-project ``storage_bytes`` and
``issue_count`` counters, which the statements writing issues and comments
keep in step (``add_storage``).
"""

from __future__ import annotations

import uuid

from sqlalchemy import LargeBinary, cast, func, select, update
from sqlalchemy.sql.elements import ColumnElement

from extensions import db
from models.tracker import FEATURE_NAMES, LIMIT_NAMES, Issue, Membership, Organization, Plan, Project
from models.tracker_collab import Comment
from services import locks, unique
from services.errors import FieldError, NotFoundError, PlanLimitError, ValidationFailed

DEFAULT_PLAN = "free"


def _byte_length(column) -> ColumnElement:
    """UTF-8 byte length of a text column on PostgreSQL and SQLite."""
    if db.engine.dialect.name == "postgresql":
        return func.coalesce(func.octet_length(column), 0)
    return func.coalesce(func.length(cast(column, LargeBinary)), 0)


def storage_expression() -> ColumnElement:
    return func.coalesce(func.sum(_byte_length(Issue.title) + _byte_length(Issue.description)), 0)


def comment_storage_expression() -> ColumnElement:
    return func.coalesce(func.sum(_byte_length(Comment.body)), 0)


def add_storage(project_id: uuid.UUID, text_bytes: int) -> None:
    """Count ``text_bytes`` more (or fewer, when negative) in the project's storage counter."""
    db.session.execute(
        update(Project)
        .where(Project.id == project_id)
        .values(storage_bytes=Project.storage_bytes + text_bytes)
        .execution_options(synchronize_session=False)
    )


def text_bytes(*texts: str | None) -> int:
    return sum(len(t.encode()) for t in texts if t)


def list_plans() -> list[Plan]:
    return list(db.session.scalars(select(Plan).order_by(Plan.price_brl, Plan.id)))


def get_plan(plan_id: str) -> Plan:
    plan = None if "\x00" in plan_id else db.session.get(Plan, plan_id)
    if plan is None:
        raise NotFoundError("Plan not found", reason="plan_not_found")
    return plan


def create_plan(data: dict) -> Plan:
    if db.session.get(Plan, data["id"]) is not None:
        raise unique.conflict("pk_plans")
    plan = Plan(
        id=data["id"],
        name=data["name"],
        price_brl=data["price_brl"],
        limits={name: data["limits"][name] for name in LIMIT_NAMES},
        features={name: data["features"].get(name, False) for name in FEATURE_NAMES},
    )
    with unique.or_conflict():
        db.session.add(plan)
    return plan


def update_plan(plan_id: str, changes: dict) -> Plan:
    """Change a plan for future assignments; organizations already on it keep their copy."""
    plan = get_plan(plan_id)
    if "name" in changes:
        plan.name = changes["name"]
    if "price_brl" in changes:
        plan.price_brl = changes["price_brl"]
    if "limits" in changes:
        plan.limits = {**plan.limits, **changes["limits"]}
    if "features" in changes:
        plan.features = {**plan.features, **changes["features"]}
    db.session.flush()
    return plan


def assign_plan(organization: Organization, plan_id: str) -> None:
    """Put an organization on a plan, copying the plan's current limits and features."""
    plan = db.session.get(Plan, plan_id)
    if plan is None:
        raise ValidationFailed(
            [FieldError(("body", "plan"), f"Unknown plan {plan_id!r}", reason="unknown_plan")]
        )
    organization.plan_id = plan.id
    organization.plan_limits = dict(plan.limits)
    organization.plan_features = dict(plan.features)


def usage(organization_id: uuid.UUID, resource: str) -> int:
    """Current use of one limited resource, computed from the data."""
    if resource == "members":
        query = (
            select(func.count()).select_from(Membership).where(Membership.organization_id == organization_id)
        )
    elif resource == "projects":
        query = select(func.count()).select_from(Project).where(Project.organization_id == organization_id)
    elif resource == "issues":
        # Per-project counters kept by the statements that write issues: a sum over
        # the organization's projects, not a scan of its issues.
        query = select(func.sum(Project.issue_count)).where(Project.organization_id == organization_id)
    else:
        query = select(func.sum(Project.storage_bytes)).where(Project.organization_id == organization_id)
    return int(db.session.scalar(query) or 0)


def ensure_within_limit(organization: Organization, resource: str, adding: int = 1) -> None:
    """Refuse (402) a creation that would take the organization past its plan limit."""
    ensure_within_limits(organization, {resource: adding})


# Usage the projects' counters hold: read together, in one statement.
_PROJECT_COUNTERS = {"issues": Project.issue_count, "storage_bytes": Project.storage_bytes}


def ensure_within_limits(organization: Organization, adding: dict[str, int]) -> None:
    """``ensure_within_limit`` for several resources at once (checked in the order given),
    under one lock of the organization row."""
    adding = {resource: amount for resource, amount in adding.items() if amount > 0}
    if not adding:
        return
    # Lock the organization row so concurrent creations cannot both squeeze under the limit.
    locks.lock_row(Organization, organization.id)
    counted = [resource for resource in adding if resource in _PROJECT_COUNTERS]
    current: dict[str, int] = {}
    if counted:
        sums = db.session.execute(
            select(*(func.sum(_PROJECT_COUNTERS[resource]) for resource in counted)).where(
                Project.organization_id == organization.id
            )
        ).one()
        current = {resource: int(total or 0) for resource, total in zip(counted, sums, strict=True)}
    for resource, amount in adding.items():
        used = current[resource] if resource in current else usage(organization.id, resource)
        limit = int(organization.plan_limits.get(resource, 0))
        if used + amount > limit:
            raise PlanLimitError(
                f"The {organization.plan_id} plan of this organization allows {limit} {resource.replace('_', ' ')}",
                resource=resource,
                limit=limit,
                current=used,
                plan=organization.plan_id,
                reason="plan_limit_reached",
            )


def plans_with_feature(feature: str) -> list[Plan]:
    """The plans that include ``feature`` today, cheapest first."""
    return [plan for plan in list_plans() if plan.features.get(feature)]


def ensure_feature(organization: Organization, feature: str) -> None:
    """Refuse (402) what the organization's plan does not include; ``details`` names the feature
    and the plans that include it."""
    if organization.plan_features.get(feature):
        return
    offering = plans_with_feature(feature)
    raise PlanLimitError(
        f"The {organization.plan_id} plan of this organization does not include {feature}",
        reason="feature_not_in_plan",
        params={"plans": ", ".join(plan.name for plan in offering) or "-"},
        details={"feature": feature, "plan": organization.plan_id, "available_in": [p.id for p in offering]},
    )
