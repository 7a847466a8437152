"""Issues: create, list with filters, read by key, change, delete a sub-tree.

Keys are ``<PROJECT KEY>-<NUMBER>``. Numbers come from a per-project counter
incremented with ``UPDATE ... RETURNING`` inside the creating transaction: the
row lock it takes serialises concurrent creates on PostgreSQL (SQLite's write
lock does the same), and the counter never goes back, so a number is never
reused, even after a delete.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field

from sqlalchemy import delete, or_, select, update
from sqlalchemy.orm import aliased, lazyload

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import PRIORITY_RANK, Issue, IssueRelation, Label, Project, Status
from models.tracker_collab import Comment
from services.errors import FieldError, NotFoundError, ValidationFailed
from services.tracker import (
    activity,
    attachment_files,
    custom_fields,
    issue_counts,
    notifications,
    plans,
    ranking,
    search,
    webhooks,
)
from services.tracker.access import READ, WRITE, Access, is_member, project_access

KEY = re.compile(r"^([A-Za-z][A-Za-z0-9]{1,9})-([1-9][0-9]{0,9})\Z")
MAX_PER_PAGE = 100
MAX_NUMBER = 2_147_483_647  # the number column is a 32-bit integer: no issue has a larger one
Related = aliased(Issue)


@dataclass
class IssueView:
    """An issue as the API and the pages show it: the row, how many sub-issues it has and, for
    a single issue, its relations and its sub-issues. Any other attribute is the issue's own."""

    issue: Issue
    children_count: int
    relations: list[IssueRelation] = field(default_factory=list)
    children: list[Issue] = field(default_factory=list)
    # Filled by ``custom_fields.attach``: the project's fields by slug.
    custom_fields: dict = field(default_factory=dict)

    def __getattr__(self, name: str):
        # Reached only for names the view does not define: the issue's columns and properties.
        if name == "issue":
            raise AttributeError(name)
        return getattr(self.issue, name)


def _field(name: str, message: str, *, reason: str) -> FieldError:
    return FieldError(("body", name), message, reason=reason)


def _referenced(model, *conditions):
    """Rows an issue is about to point at, share-locked (``FOR KEY SHARE``) until commit.

    A concurrent delete of the status, label or parent then waits for this
    transaction, or this one sees the row gone and says so (400), instead of the
    insert failing on its foreign key, or two transactions deadlocking.
    """
    query = select(model).where(*conditions).with_for_update(of=model, read=True, key_share=True)
    return db.session.scalars(query.execution_options(populate_existing=True)).all()


def _validate_references(project: Project, access: Access, data: dict, issue: Issue | None = None) -> dict:
    """Referenced status, labels, assignee and parent must belong where the issue lives.
    Answers the status found (``{"status_id": Status}``) when one was given."""
    errors: list[FieldError] = []
    loaded: dict = {}
    status_id = data.get("status_id")
    if status_id is not None:
        status = next(iter(_referenced(Status, Status.id == status_id)), None)
        if status is None or status.project_id != project.id:
            errors.append(
                _field("status_id", "No such status in this project", reason="status_not_in_project")
            )
        else:
            loaded["status_id"] = status
    assignee_id = data.get("assignee_id")
    if assignee_id is not None and not is_member(access.organization.id, assignee_id):
        errors.append(
            _field(
                "assignee_id",
                "The assignee must be a member of the organization",
                reason="assignee_not_member",
            )
        )
    label_ids = data.get("label_ids")
    if label_ids:
        found = {
            label.id
            for label in _referenced(Label, Label.id.in_(set(label_ids)), Label.project_id == project.id)
        }
        if found != set(label_ids):
            errors.append(
                _field("label_ids", "Every label must belong to this project", reason="label_not_in_project")
            )
    parent_id = data.get("parent_id")
    if parent_id is not None:
        parent = next(iter(_referenced(Issue, Issue.id == parent_id)), None)
        if parent is None or parent.project_id != project.id:
            errors.append(
                _field(
                    "parent_id",
                    "The parent must be an issue of the same project",
                    reason="parent_not_in_project",
                )
            )
        elif issue is not None and _would_cycle(issue.id, parent_id):
            errors.append(
                _field("parent_id", "An issue cannot be a descendant of itself", reason="parent_cycle")
            )
    start = data.get("start_date", issue.start_date if issue else None)
    due = data.get("due_date", issue.due_date if issue else None)
    if start is not None and due is not None and start > due:
        errors.append(
            _field("due_date", "The due date cannot be before the start date", reason="due_before_start")
        )
    if errors:
        raise ValidationFailed(errors)
    return loaded


def _would_cycle(issue_id: uuid.UUID, new_parent_id: uuid.UUID) -> bool:
    """True when ``new_parent_id`` is the issue itself or one of its descendants."""
    current: uuid.UUID | None = new_parent_id
    seen: set[uuid.UUID] = set()
    while current is not None and current not in seen:
        if current == issue_id:
            return True
        seen.add(current)
        current = db.session.scalar(select(Issue.parent_id).where(Issue.id == current))
    return False


def _default_status(project: Project) -> Status:
    """The first ``todo`` status by position (docs/tracker.md); the first status if none is ``todo``."""
    query = (
        select(Status)
        .where(Status.project_id == project.id)
        .order_by(Status.position, Status.name)
        .with_for_update(of=Status, read=True, key_share=True)
    )
    status = db.session.scalar(query.where(Status.category == "todo").limit(1))
    status = status or db.session.scalar(query.limit(1))
    if status is None:
        raise ValidationFailed(
            [
                _field(
                    "status_id",
                    "The project has no status; create one first",
                    reason="project_without_status",
                )
            ]
        )
    return status


def _next_number(project_id: uuid.UUID, text_bytes: int) -> int:
    """Take the next key number and count the new issue and its bytes in the project."""
    return db.session.execute(
        update(Project)
        .where(Project.id == project_id)
        .values(
            issue_counter=Project.issue_counter + 1,
            issue_count=Project.issue_count + 1,
            storage_bytes=Project.storage_bytes + text_bytes,
        )
        .returning(Project.issue_counter)
        .execution_options(synchronize_session=False)
    ).scalar_one()


def _set_labels(issue: Issue, label_ids: list[uuid.UUID]) -> None:
    issue.labels = (
        # By name, as every read of the issue lists them.
        list(db.session.scalars(select(Label).where(Label.id.in_(set(label_ids))).order_by(Label.name)))
        if label_ids
        else []
    )


def create_issue(user: User, slug: str, project_id: uuid.UUID, data: dict) -> IssueView:
    project, access = project_access(user, slug, project_id, WRITE)
    referenced = _validate_references(project, access, data)
    text_bytes = plans.text_bytes(data["title"], data.get("description"))
    plans.ensure_within_limits(access.organization, {"issues": 1, "storage_bytes": text_bytes})
    # Held here: the session keeps loaded rows only while something references them, and the
    # response shows the status.
    status = referenced.get("status_id") or _default_status(project)
    now = utcnow()
    issue = Issue(
        project_id=project.id,
        organization_id=project.organization_id,
        number=_next_number(project.id, text_bytes),
        # The project row is locked by ``_next_number``: no other issue takes this rank meanwhile.
        rank=ranking.top_rank(project.id),
        title=data["title"],
        description=data.get("description"),
        type=data.get("type") or "task",
        priority=PRIORITY_RANK[data.get("priority") or "none"],
        status_id=status.id,
        status=status,
        assignee_id=data.get("assignee_id"),
        parent_id=data.get("parent_id"),
        start_date=data.get("start_date"),
        due_date=data.get("due_date"),
        estimate=data.get("estimate"),
        created_by_id=user.id,
        created_at=now,
        updated_at=now,
    )
    db.session.add(issue)
    _set_labels(issue, data.get("label_ids") or [])
    search.index_title(issue)
    db.session.flush()
    issue_counts.record(project.id, None, issue_counts.shape_of(issue))
    shown_fields = custom_fields.write_values(
        issue, access.organization, data.get("custom_fields"), user.id, now, creating=True
    )
    activity.record(issue.id, user.id, "created", new={"key": issue.key, "title": issue.title}, at=now)
    if issue.parent_id is not None:
        activity.record(issue.parent_id, user.id, "sub_issue_added", new=activity.issue_ref(issue), at=now)
    notifications.deliver(issue, user.id, notifications.Audience().add([issue.assignee_id], "assigned"), now)
    webhooks.emit(issue.organization_id, "issue.created", {"issue": webhooks.issue_data(issue)}, user, now)
    return IssueView(issue, children_count=0, custom_fields=shown_fields)


def _by_key(project: Project, key: str, lock: str | None = None, bare: bool = False) -> Issue:
    match = KEY.match(key)
    if match is None or match.group(1).upper() != project.key or int(match.group(2)) > MAX_NUMBER:
        raise NotFoundError("Issue not found", reason="issue_not_found")
    query = select(Issue).where(Issue.project_id == project.id, Issue.number == int(match.group(2)))
    if bare:
        # The row alone: status, people and labels load only if something reads them.
        query = query.options(lazyload("*"))
    if lock == "share":
        # Held until commit: the issue cannot be deleted meanwhile (what hangs off it, a
        # comment, lands first and is counted by the delete), yet edits go on.
        query = query.with_for_update(of=Issue, read=True, key_share=True).execution_options(
            populate_existing=True
        )
    elif lock == "update":
        # Read the row as the last committed change left it, and hold it until commit;
        # NO KEY UPDATE still lets sub-issues be created under it meanwhile.
        query = query.with_for_update(of=Issue, key_share=True).execution_options(populate_existing=True)
    elif lock == "delete":
        query = query.with_for_update(of=Issue).execution_options(populate_existing=True)
    issue = db.session.scalar(query)
    if issue is None:
        raise NotFoundError("Issue not found", reason="issue_not_found")
    return issue


def find_issue(
    user: User,
    slug: str,
    project_id: uuid.UUID,
    key: str,
    need: str = READ,
    lock: str | None = None,
    bare: bool = False,
) -> tuple[Issue, Access]:
    """The issue by key; ``lock`` ("update" or "delete") for a change computed from its current values,
    ("share") to keep it from being deleted until commit; ``bare`` for what hangs off the issue
    (comments, history), which needs its row and not its status, people or labels."""
    project, access = project_access(user, slug, project_id, need)
    return _by_key(project, key, lock, bare), access


def issue_in_project(
    user: User, slug: str, project_id: uuid.UUID, issue_id: uuid.UUID | None
) -> Issue | None:
    """The issue ``issue_id`` when it belongs to this project (a parent named by id), else None."""
    if issue_id is None:
        return None
    project, _ = project_access(user, slug, project_id, READ)
    issue = db.session.get(Issue, issue_id)
    return issue if issue is not None and issue.project_id == project.id else None


def relations_of(issue: Issue) -> list[IssueRelation]:
    return list(
        db.session.scalars(
            select(IssueRelation).where(IssueRelation.issue_id == issue.id).order_by(IssueRelation.created_at)
        )
    )


def children_of(issue: Issue) -> list[Issue]:
    return list(db.session.scalars(select(Issue).where(Issue.parent_id == issue.id).order_by(Issue.number)))


def with_detail(issue: Issue) -> IssueView:
    """The issue with what the single-issue read adds: relations and children."""
    children = children_of(issue)
    view = IssueView(issue, len(children), relations_of(issue), children)
    custom_fields.attach([view])
    return view


def get_issue(user: User, slug: str, project_id: uuid.UUID, key: str) -> IssueView:
    issue, _ = find_issue(user, slug, project_id, key, READ)
    return with_detail(issue)


EDITABLE = (
    "title",
    "description",
    "type",
    "status_id",
    "assignee_id",
    "parent_id",
    "start_date",
    "due_date",
    "estimate",
)


PLACEMENT = ("rank", "before_id", "after_id")


def update_issue(user: User, slug: str, project_id: uuid.UUID, key: str, changes: dict) -> IssueView:
    """Change fields of the issue and, with ``rank`` or ``before_id``/``after_id``, its place on
    the board (``services.tracker.ranking``)."""
    placement = {name: changes[name] for name in PLACEMENT if name in changes}
    changes = {name: value for name, value in changes.items() if name not in PLACEMENT}
    # Locked: the storage delta and the title's words are computed from the current row,
    # so a concurrent edit of the same issue must finish first.
    issue, access = find_issue(user, slug, project_id, key, WRITE, lock="update")
    if "title" in changes and changes["title"] is None:
        raise ValidationFailed([_field("title", "Field may not be null.", reason="title_required")])
    _validate_references(issue.project, access, changes, issue)
    before = plans.text_bytes(issue.title, issue.description)
    after = plans.text_bytes(changes.get("title", issue.title), changes.get("description", issue.description))
    plans.ensure_within_limit(access.organization, "storage_bytes", after - before)
    if after != before:
        plans.add_storage(issue.project_id, after - before)
    reparented = "parent_id" in changes and changes["parent_id"] != issue.parent_id
    was = activity.snapshot(issue, with_parent=reparented)
    counted_before = issue_counts.shape_of(issue)
    retitled = "title" in changes and changes["title"] != issue.title
    for name in EDITABLE:
        if name in changes:
            setattr(issue, name, changes[name])
    if retitled:
        search.index_title(issue)
    if "priority" in changes:
        issue.priority = PRIORITY_RANK[changes["priority"]]
    if "label_ids" in changes:
        _set_labels(issue, changes["label_ids"] or [])
    if changes:
        # Label changes touch no issue column, so the timestamp is set here.
        issue.updated_at = utcnow()
    db.session.flush()
    if placement:
        ranking.place(issue, **placement)
    db.session.refresh(issue)
    issue_counts.record(issue.project_id, counted_before, issue_counts.shape_of(issue))
    now = utcnow()
    changed = activity.record_changes(
        issue, user.id, was, activity.snapshot(issue, with_parent=reparented), now
    )
    field_changes = custom_fields.write_values(
        issue, access.organization, changes.get("custom_fields"), user.id, now, creating=False
    )
    _notify_changes(issue, user, changed, now)
    if changed or field_changes:
        after = activity.snapshot(issue, with_parent=reparented)
        _emit_updated(issue, user, was, after, changed, now, field_changes)
    return with_detail(issue)


def _emit_updated(
    issue: Issue,
    user: User,
    was: dict,
    after: dict,
    changed: set[str],
    now,
    field_changes: dict | None = None,
) -> None:
    """The ``issue.updated`` webhook event: the issue and each changed field's old and new value
    (custom fields as ``custom_fields.<slug>``)."""
    changes = {field: {"old": was[field], "new": after[field]} for field in sorted(changed)}
    webhooks.emit(
        issue.organization_id,
        "issue.updated",
        {
            "issue": webhooks.issue_data(issue),
            "changes": {**changes, **(field_changes or {})},
        },
        user,
        now,
    )


def _notify_changes(issue: Issue, user: User, changed: set[str], now) -> None:
    """A new assignee hears of it; a status move reaches the issue's followers."""
    audience = notifications.Audience()
    if "status" in changed:
        audience.add(notifications.followers(issue), "status_changed")
    if "assignee" in changed:
        audience.add([issue.assignee_id], "assigned")
    notifications.deliver(issue, user.id, audience, now)


def _lock_subtree(root_id: uuid.UUID) -> list[uuid.UUID]:
    """Lock the issue's descendants (the issue itself is locked) and return the sub-tree's ids.

    Repeated until no new descendant appears: a sub-issue created while the first
    locks were taken is locked too, so the counts below match what is deleted.
    """
    subtree = select(Issue.id).where(Issue.id == root_id).cte("subtree", recursive=True)
    subtree = subtree.union_all(select(Issue.id).join(subtree, Issue.parent_id == subtree.c.id))
    locked = {root_id}
    while True:
        ids = list(db.session.scalars(select(subtree.c.id)))
        new = sorted(set(ids) - locked)
        if not new:
            return ids
        db.session.execute(select(Issue.id).where(Issue.id.in_(new)).order_by(Issue.id).with_for_update())
        locked.update(new)


def _record_removal(user: User, issue: Issue, ids: list[uuid.UUID]) -> None:
    """Issues outside the deleted sub-tree lose a sub-issue or a relation: their history says so."""
    now = utcnow()
    if issue.parent_id in activity.present({issue.parent_id} - {None}):
        activity.record(issue.parent_id, user.id, "sub_issue_removed", old=activity.issue_ref(issue), at=now)
    lost = db.session.execute(
        select(
            IssueRelation.issue_id, IssueRelation.type, Related.id, Related.number, Related.title, Project.key
        )
        .join(Related, Related.id == IssueRelation.related_issue_id)
        .join(Project, Project.id == Related.project_id)
        .where(IssueRelation.related_issue_id.in_(ids), IssueRelation.issue_id.not_in(ids))
    ).all()
    alive = activity.present({row[0] for row in lost})
    for issue_id, relation_type, gone_id, number, title, project_key in lost:
        if issue_id not in alive:
            continue
        gone = {"id": str(gone_id), "key": f"{project_key}-{number}", "title": title}
        activity.record(issue_id, user.id, "relation_removed", field=relation_type, old=gone, at=now)


def delete_issue(user: User, slug: str, project_id: uuid.UUID, key: str) -> None:
    """Delete the issue and every descendant (the parent foreign key cascades)."""
    issue, _ = find_issue(user, slug, project_id, key, WRITE, lock="delete")
    ids = _lock_subtree(issue.id)
    # Read after the locks: what a concurrent edit inside the sub-tree left is what goes (comments
    # and files are added under a share lock of their issue, so none lands meanwhile); the
    # files' objects are removed once the deletion commits.
    freed = db.session.scalar(select(plans.storage_expression()).where(Issue.id.in_(ids))) or 0
    freed += db.session.scalar(select(plans.comment_storage_expression()).where(Comment.issue_id.in_(ids)))
    freed += attachment_files.release(issue_ids=ids)
    _record_removal(user, issue, ids)
    webhooks.emit(
        issue.organization_id,
        "issue.deleted",
        {
            "issue": webhooks.issue_data(issue),
            "deleted_sub_issue_ids": sorted(str(issue_id) for issue_id in ids if issue_id != issue.id),
        },
        user,
    )
    # Relations and labels of the whole sub-tree go with it (ON DELETE CASCADE).
    db.session.execute(
        delete(IssueRelation)
        .where(or_(IssueRelation.issue_id.in_(ids), IssueRelation.related_issue_id.in_(ids)))
        .execution_options(synchronize_session=False)
    )
    titles = list(db.session.scalars(select(Issue.search_text).where(Issue.id.in_(ids))))
    counted = issue_counts.Tally(issue.project_id)
    counted.forget(ids)
    db.session.execute(delete(Issue).where(Issue.id.in_(ids)).execution_options(synchronize_session=False))
    # Every id is locked and present: the sub-tree deleted is exactly ``ids`` (the
    # statement's row count would miss the rows its cascade removed first).
    db.session.execute(
        update(Project)
        .where(Project.id == issue.project_id)
        .values(issue_count=Project.issue_count - len(ids), storage_bytes=Project.storage_bytes - freed)
        .execution_options(synchronize_session=False)
    )
    # After the project row, as a create takes them: the two never wait on each other in a circle.
    search.forget_titles(issue.project_id, titles)
    counted.write()


MAX_BULK = 100
BULK_FIELDS = ("status_id", "assignee_id", "priority", "add_label_ids", "remove_label_ids")


def bulk_update(user: User, slug: str, project_id: uuid.UUID, keys: list[str], changes: dict) -> int:
    """Apply the same ``changes`` (status, assignee, priority, labels added or removed) to every
    issue of ``keys``, all or nothing; each issue's history gets its own entries. Answers how many
    issues actually changed."""
    project, access = project_access(user, slug, project_id, WRITE)
    changes = {name: changes[name] for name in BULK_FIELDS if name in changes}
    if not changes:
        raise ValidationFailed([_field("changes", "Give at least one change", reason="bulk_without_changes")])
    adding = set(changes.get("add_label_ids") or [])
    removing = set(changes.get("remove_label_ids") or [])
    if adding & removing:
        raise ValidationFailed(
            [
                _field(
                    "changes.remove_label_ids",
                    "A label cannot be both added and removed",
                    reason="bulk_label_both",
                )
            ]
        )
    references = {name: changes[name] for name in ("status_id", "assignee_id") if name in changes}
    if adding or removing:
        references["label_ids"] = sorted(adding | removing)
    _validate_references(project, access, references)
    targets = _bulk_targets(project, keys)
    now = utcnow()
    updated = 0
    # Written once, after every issue: one statement, its rows in key order.
    counted = issue_counts.Tally(project.id)
    for issue in targets:
        was = activity.snapshot(issue, with_parent=False)
        before = issue_counts.shape_of(issue)
        for name in ("status_id", "assignee_id"):
            if name in changes:
                setattr(issue, name, changes[name])
        if "priority" in changes:
            issue.priority = PRIORITY_RANK[changes["priority"]]
        if adding or removing:
            current = {label.id for label in issue.labels}
            wanted = (current | adding) - removing
            if wanted != current:
                _set_labels(issue, sorted(wanted))
        db.session.flush()
        db.session.refresh(issue)
        counted.change(before, issue_counts.shape_of(issue))
        after = activity.snapshot(issue, with_parent=False)
        changed = activity.record_changes(issue, user.id, was, after, now)
        if changed:
            issue.updated_at = now
            updated += 1
            _notify_changes(issue, user, changed, now)
            _emit_updated(issue, user, was, after, changed, now)
    counted.write()
    db.session.flush()
    return updated


def _bulk_targets(project: Project, keys: list[str]) -> list[Issue]:
    """The issues named by ``keys``, locked in id order (two bulk edits never wait on each other
    in a circle); an unknown key refuses the whole edit."""
    numbers: dict[int, str] = {}
    unknown = []
    for key in keys:
        match = KEY.match(key)
        if match is None or match.group(1).upper() != project.key or int(match.group(2)) > MAX_NUMBER:
            unknown.append(key)
        else:
            numbers[int(match.group(2))] = key
    found = (
        list(
            db.session.scalars(
                select(Issue)
                .where(Issue.project_id == project.id, Issue.number.in_(numbers))
                .order_by(Issue.id)
                .with_for_update(of=Issue, key_share=True)
                .execution_options(populate_existing=True)
            )
        )
        if numbers
        else []
    )
    present = {issue.number for issue in found}
    unknown += [key for number, key in numbers.items() if number not in present]
    if unknown:
        raise ValidationFailed(
            [
                _field(
                    "keys",
                    "No such issue in this project: " + ", ".join(sorted(unknown)[:20]),
                    reason="bulk_issue_not_found",
                )
            ]
        )
    return sorted(found, key=lambda issue: issue.number)
