"""Exact list totals that do not grow with the matches: issue counts kept on write.

A list filtered on status, type, priority and assignee (any of their values) at a
million issues matched tens or hundreds of thousands of rows, and counting them,
even from an index alone, took longer than the page. ``issue_counts`` holds how
many issues each combination of those four fields has in a project (a few
thousand rows at most), so such a total is a sum over the combinations the
filter keeps.

Labels add ``issue_label_counts``: the same combinations for the issues carrying
each label and each pair of labels. One label's total is its rows; two labels
("any of") are counted by inclusion–exclusion, both labels less the issues
carrying both. Three labels or more, or any other filter (a search, a parent,
custom fields), are counted on the issues as before.

Every change of those fields writes its deltas here, in its own transaction, with
``INSERT ... ON CONFLICT DO UPDATE SET issue_count = issue_count + delta``: two
transactions never lose each other's increments. The rows of one write are
sorted, so two transactions take their row locks in the same order and never
wait on each other in a circle; ``issue_counts`` is always written before
``issue_label_counts``.
"""

from __future__ import annotations

import functools
import uuid
from collections import Counter
from dataclasses import dataclass

from sqlalchemy import and_, bindparam, case, delete, func, insert, literal, or_, select, union_all
from sqlalchemy.orm import aliased

from extensions import db
from models.tracker import PRIORITY_RANK, Issue, IssueCount, IssueLabel, IssueLabelCount
from services import counters

# An unassigned issue's key: a key column cannot be null, and no user has the nil id.
NO_ASSIGNEE = uuid.UUID(int=0)
# The list filters the counts answer, and how many labels they answer exactly.
DIMENSIONS = frozenset({"status_id", "type", "priority", "assignee_id"})
MAX_COUNTED_LABELS = 2
_KEY = ("status_id", "type", "priority", "assignee_id")


@dataclass(frozen=True, slots=True)
class Shape:
    """What the counts know of one issue."""

    status_id: uuid.UUID
    type: str
    priority: int
    assignee_id: uuid.UUID | None
    label_ids: frozenset[uuid.UUID] = frozenset()

    @property
    def key(self) -> tuple:
        return (self.status_id, self.type, self.priority, self.assignee_id or NO_ASSIGNEE)


def shape_of(issue: Issue) -> Shape:
    return Shape(
        issue.status_id,
        issue.type,
        issue.priority,
        issue.assignee_id,
        frozenset(label.id for label in issue.labels),
    )


def _label_pairs(label_ids) -> list[tuple[uuid.UUID, uuid.UUID]]:
    """Each label with itself, and each pair of labels lower id first."""
    ordered = sorted(set(label_ids))
    return [(a, b) for i, a in enumerate(ordered) for b in ordered[i:]]


class Tally:
    """Changes to one project's counts, written together by ``write``."""

    def __init__(self, project_id: uuid.UUID) -> None:
        self.project_id = project_id
        self.issues: Counter = Counter()
        self.labels: Counter = Counter()

    def add(self, shape: Shape, sign: int = 1) -> None:
        key = shape.key
        self.issues[key] += sign
        for pair in _label_pairs(shape.label_ids):
            self.labels[(*pair, *key)] += sign

    def change(self, before: Shape, after: Shape) -> None:
        if before != after:
            self.add(before, -1)
            self.add(after)

    def forget(self, issue_ids: list[uuid.UUID]) -> None:
        """The issues ``issue_ids`` (locked by the caller) are about to be deleted: what they
        count, read in one statement (the issues, then their labels and pairs of labels)."""
        columns = (Issue.status_id, Issue.type, Issue.priority, Issue.assignee_id)
        no_label = literal(None, IssueLabel.label_id.type)
        first, second = aliased(IssueLabel), aliased(IssueLabel)
        issues = (
            select(*columns, no_label, no_label, func.count())
            .where(Issue.id.in_(issue_ids))
            .group_by(*columns)
        )
        labelled = (
            select(*columns, first.label_id, second.label_id, func.count())
            .join(first, first.issue_id == Issue.id)
            .join(second, and_(second.issue_id == Issue.id, second.label_id >= first.label_id))
            .where(Issue.id.in_(issue_ids))
            .group_by(*columns, first.label_id, second.label_id)
        )
        for status_id, kind, priority, assignee_id, label_id, other_label_id, found in db.session.execute(
            union_all(issues, labelled)
        ):
            key = (status_id, kind, priority, assignee_id or NO_ASSIGNEE)
            if label_id is None:
                self.issues[key] -= found
            else:
                self.labels[(label_id, other_label_id, *key)] -= found

    def write(self) -> None:
        _upsert(IssueCount, _KEY, self.project_id, self.issues)
        _upsert(IssueLabelCount, ("label_id", "other_label_id", *_KEY), self.project_id, self.labels)
        self.issues.clear()
        self.labels.clear()


def _upsert(model, names: tuple[str, ...], project_id: uuid.UUID, deltas: Counter) -> None:
    """Move the rows by ``deltas`` in one statement, in key order (see the module's docstring)."""
    rows = [(project_id, *key, delta) for key, delta in sorted(deltas.items()) if delta]
    counters.add(model.__table__, ("project_id", *names), "issue_count", rows)


def record(project_id: uuid.UUID, before: Shape | None, after: Shape | None) -> None:
    """One issue created (``before`` None), changed, or deleted (``after`` None)."""
    tally = Tally(project_id)
    if before is not None:
        tally.add(before, -1)
    if after is not None:
        tally.add(after)
    tally.write()


# Reading.


def answers(filters: dict, used: set[str]) -> bool:
    """Whether the counts give the exact total of a list filtered by ``used``."""
    if filters.get("assignee_id") == NO_ASSIGNEE:
        return False  # the nil id stands for "unassigned" here, and matches no issue there
    if used <= DIMENSIONS:
        return True
    labels = set(filters.get("label_id") or ())
    return used - {"label_id"} <= DIMENSIONS and 0 < len(labels) <= MAX_COUNTED_LABELS


def dimension_conditions(model, filters: dict) -> list:
    """The list filters on status, priority, type and assignee, on ``model``'s columns of those
    names: the issues themselves, or the counters kept of them."""
    conditions = []
    if filters.get("status_id"):
        conditions.append(model.status_id.in_(filters["status_id"]))
    if filters.get("priority"):
        conditions.append(model.priority.in_([PRIORITY_RANK[p] for p in filters["priority"]]))
    if filters.get("type"):
        conditions.append(model.type.in_(filters["type"]))
    if filters.get("assignee_id"):
        conditions.append(model.assignee_id == filters["assignee_id"])
    return conditions


_MULTIPLE = ("status_id", "priority", "type")


def dimension_placeholders(model, used: tuple[str, ...]) -> list:
    """``dimension_conditions`` for the dimensions ``used``, their values as bind parameters
    named after them (``dimension_params`` gives the values): for statements built once."""
    conditions = [
        getattr(model, name).in_(bindparam(name, expanding=True)) for name in _MULTIPLE if name in used
    ]
    if "assignee_id" in used:
        conditions.append(model.assignee_id == bindparam("assignee_id"))
    return conditions


def dimension_params(filters: dict) -> dict:
    """The values of ``dimension_placeholders``' parameters for ``filters``."""
    params = {name: filters[name] for name in ("status_id", "type", "assignee_id") if filters.get(name)}
    if filters.get("priority"):
        params["priority"] = [PRIORITY_RANK[p] for p in filters["priority"]]
    return params


def used_dimensions(filters: dict) -> tuple[str, ...]:
    return tuple(name for name in (*_MULTIPLE, "assignee_id") if filters.get(name))


@functools.lru_cache(maxsize=32)
def _unlabelled_total(used: tuple[str, ...]):
    # Built once per set of dimensions: building it each time cost about as much as running it.
    return select(func.sum(IssueCount.issue_count)).where(
        IssueCount.project_id == bindparam("project_id"), *dimension_placeholders(IssueCount, used)
    )


def total(project_id: uuid.UUID, filters: dict) -> int:
    """The exact number of the project's issues that ``filters`` keep (``answers`` is true)."""
    labels = sorted(set(filters.get("label_id") or ()))
    if not labels:
        query = _unlabelled_total(used_dimensions(filters))
        return db.session.scalar(query, {"project_id": project_id, **dimension_params(filters)}) or 0
    pairs = _label_pairs(labels)
    own = IssueLabelCount.label_id == IssueLabelCount.other_label_id
    # Inclusion–exclusion: each label's issues, less those carrying both (counted twice).
    signed = case((own, IssueLabelCount.issue_count), else_=-IssueLabelCount.issue_count)
    query = select(func.sum(signed)).where(
        IssueLabelCount.project_id == project_id,
        or_(*(and_(IssueLabelCount.label_id == a, IssueLabelCount.other_label_id == b) for a, b in pairs)),
        *dimension_conditions(IssueLabelCount, filters),
    )
    return db.session.scalar(query) or 0


# Loading.


def rebuild(project_id: uuid.UUID) -> None:
    """Count the project's issues again from the issues themselves (after a bulk load)."""
    db.session.execute(delete(IssueCount).where(IssueCount.project_id == project_id))
    db.session.execute(delete(IssueLabelCount).where(IssueLabelCount.project_id == project_id))
    grouped = (Issue.project_id, Issue.status_id, Issue.type, Issue.priority, Issue.assignee_id)
    # Grouped by the column itself: the nil id stands for the unassigned only in the output.
    key = (*grouped[:-1], func.coalesce(Issue.assignee_id, literal(NO_ASSIGNEE, IssueCount.assignee_id.type)))
    db.session.execute(
        insert(IssueCount).from_select(
            ["project_id", *_KEY, "issue_count"],
            select(*key, func.count())
            .where(Issue.project_id == project_id)
            .group_by(*grouped)
            .order_by(*key),
        )
    )
    first, second = aliased(IssueLabel), aliased(IssueLabel)
    db.session.execute(
        insert(IssueLabelCount).from_select(
            ["project_id", "label_id", "other_label_id", *_KEY, "issue_count"],
            select(key[0], first.label_id, second.label_id, *key[1:], func.count())
            .join(first, first.issue_id == Issue.id)
            .join(second, and_(second.issue_id == Issue.id, second.label_id >= first.label_id))
            .where(Issue.project_id == project_id)
            .group_by(*grouped, first.label_id, second.label_id)
            # In key order, a label's rows share a few pages (as migration 0028 writes them).
            .order_by(key[0], first.label_id, second.label_id, *key[1:]),
        )
    )
