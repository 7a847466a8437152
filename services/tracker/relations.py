"""Relations between issues, stored in both directions.

Each relation is two rows sharing a ``pair_id``: the one on the issue it was
created from and its inverse on the related issue. Two issues have at most
one relation between them (409 otherwise), an issue is never related to
itself (409), and ``blocks`` edges never form a cycle (409). The related issue
may be in another project of the same organization.
"""

from __future__ import annotations

import uuid

from sqlalchemy import delete, or_, select

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import INVERSE_RELATION, Issue, IssueRelation
from services import unique
from services.errors import ConflictError, FieldError, NotFoundError, ValidationFailed
from services.tracker import activity
from services.tracker.access import WRITE
from services.tracker.issues import find_issue


def _blocks_path(start: uuid.UUID, goal: uuid.UUID) -> bool:
    """True when ``start`` already blocks ``goal``, directly or through other issues."""
    frontier = {start}
    seen: set[uuid.UUID] = set()
    while frontier:
        if goal in frontier:
            return True
        seen |= frontier
        frontier = (
            set(
                db.session.scalars(
                    select(IssueRelation.related_issue_id).where(
                        IssueRelation.issue_id.in_(frontier), IssueRelation.type == "blocks"
                    )
                )
            )
            - seen
        )
    return False


def create_relation(
    user: User, slug: str, project_id: uuid.UUID, key: str, relation_type: str, related_issue_id: uuid.UUID
) -> IssueRelation:
    issue, access = find_issue(user, slug, project_id, key, WRITE)
    related = db.session.get(Issue, related_issue_id)
    if related is None or related.organization_id != access.organization.id:
        raise ValidationFailed(
            [
                FieldError(
                    ("body", "related_issue_id"),
                    "No such issue in this organization",
                    reason="related_issue_not_found",
                )
            ]
        )
    if related.id == issue.id:
        raise ConflictError("An issue cannot be related to itself", reason="self_relation")
    existing = db.session.scalar(
        select(IssueRelation.id).where(
            or_(
                (IssueRelation.issue_id == issue.id) & (IssueRelation.related_issue_id == related.id),
                (IssueRelation.issue_id == related.id) & (IssueRelation.related_issue_id == issue.id),
            )
        )
    )
    if existing is not None:
        raise unique.conflict("uq_issue_relations_issue_id_related")
    if relation_type in ("blocks", "is_blocked_by"):
        blocker, blocked = (issue.id, related.id) if relation_type == "blocks" else (related.id, issue.id)
        if _blocks_path(blocked, blocker):
            raise ConflictError("This would create a cycle of blocking issues", reason="blocking_cycle")
    pair_id = uuid.uuid4()
    relation = IssueRelation(
        issue_id=issue.id, related_issue_id=related.id, type=relation_type, pair_id=pair_id
    )
    inverse = IssueRelation(
        issue_id=related.id, related_issue_id=issue.id, type=INVERSE_RELATION[relation_type], pair_id=pair_id
    )
    # Both rows are inserted lower issue id first, from either side: two requests relating
    # the same issues from both ends then queue on the first row instead of deadlocking,
    # and the unique key refuses the later one (409).
    with unique.or_conflict():
        db.session.add_all(sorted([relation, inverse], key=lambda row: row.issue_id))
    now = utcnow()
    for row, other in ((relation, related), (inverse, issue)):
        activity.record(
            row.issue_id, user.id, "relation_added", field=row.type, new=activity.issue_ref(other), at=now
        )
    return relation


def delete_relation(user: User, slug: str, project_id: uuid.UUID, key: str, relation_id: uuid.UUID) -> None:
    """Delete a relation of this issue together with its inverse."""
    # Share-locked: the history written on it below cannot race its deletion.
    issue, _ = find_issue(user, slug, project_id, key, WRITE, lock="share")
    # Locked: of two deletes at once, the second finds it gone (404) and writes no history.
    relation = db.session.scalar(
        select(IssueRelation)
        .where(IssueRelation.id == relation_id)
        .with_for_update(of=IssueRelation)
        .execution_options(populate_existing=True)
    )
    if relation is None or relation.issue_id != issue.id:
        raise NotFoundError("Relation not found", reason="relation_not_found")
    now = utcnow()
    related = relation.related_issue
    sides = [(issue, relation.type, related)]
    if activity.present({related.id}):
        sides.append((related, INVERSE_RELATION[relation.type], issue))
    for subject, kind, other in sides:
        activity.record(
            subject.id, user.id, "relation_removed", field=kind, old=activity.issue_ref(other), at=now
        )
    db.session.execute(
        delete(IssueRelation)
        .where(IssueRelation.pair_id == relation.pair_id)
        .execution_options(synchronize_session=False)
    )
