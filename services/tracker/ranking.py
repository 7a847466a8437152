"""Where each issue sits on its project's board: an integer rank, smaller first.

Ranks are spaced ``RANK_STEP`` apart. Moving an issue next to another takes
the midpoint of the two neighbours; when they are adjacent integers the
project's issues are renumbered in their current order (``rebalance``) and the
midpoint is taken again. New issues go to the top.

Every placement holds the project's row lock (``FOR UPDATE``) while it reads
the neighbours and writes the rank, the same lock issue creation takes for
its number: two people moving cards of one board at once are serialised, and
the second reads the ranks the first committed, so both cards land where each
was dropped and no two take the same rank.
"""

from __future__ import annotations

import uuid

from sqlalchemy import Uuid, bindparam, func, select, text, update

from extensions import db
from models.tracker import Issue, Project
from services import locks
from services.errors import FieldError, ValidationFailed

RANK_STEP = 65536
# Explicit ranks stay well inside a 64-bit integer, so a step either side never overflows.
RANK_LIMIT = 2**62


def _refuse(field: str, message: str, *, reason: str) -> ValidationFailed:
    return ValidationFailed([FieldError(("body", field), message, reason=reason)])


def lock_board(project_id: uuid.UUID) -> None:
    locks.lock_row(Project, project_id)


def top_rank(project_id: uuid.UUID) -> int:
    """A rank above every issue of the project (the caller holds the project's row lock)."""
    lowest = db.session.scalar(select(func.min(Issue.rank)).where(Issue.project_id == project_id))
    return 0 if lowest is None else lowest - RANK_STEP


def _neighbour_rank(project_id: uuid.UUID, issue_id: uuid.UUID, field: str) -> int:
    rank = db.session.scalar(select(Issue.rank).where(Issue.id == issue_id, Issue.project_id == project_id))
    if rank is None:
        raise _refuse(field, "No such issue in this project", reason="rank_neighbour_not_in_project")
    return rank


def _gap(
    issue: Issue, before_id: uuid.UUID | None, after_id: uuid.UUID | None
) -> tuple[int | None, int | None]:
    """The ranks the issue must fall strictly between (None: no bound on that side)."""
    others = (Issue.project_id == issue.project_id, Issue.id != issue.id)
    low = high = None
    if after_id is not None:
        low = _neighbour_rank(issue.project_id, after_id, "after_id")
    if before_id is not None:
        high = _neighbour_rank(issue.project_id, before_id, "before_id")
    if low is not None and high is not None:
        if low >= high:
            raise _refuse(
                "after_id",
                "after_id must come before before_id on the board",
                reason="rank_neighbours_out_of_order",
            )
        return low, high
    if high is not None:
        low = db.session.scalar(select(func.max(Issue.rank)).where(*others, Issue.rank < high))
    elif low is not None:
        high = db.session.scalar(select(func.min(Issue.rank)).where(*others, Issue.rank > low))
    return low, high


def rebalance(project_id: uuid.UUID) -> None:
    """Renumber the project's issues ``RANK_STEP`` apart, in their current order."""
    db.session.execute(
        text(
            "UPDATE issues SET rank = ranked.position * :step FROM ("
            " SELECT id, row_number() OVER (ORDER BY rank, number) AS position"
            " FROM issues WHERE project_id = :project) AS ranked"
            " WHERE ranked.id = issues.id"
        ).bindparams(bindparam("project", type_=Uuid())),
        {"step": RANK_STEP, "project": project_id},
    )


def place(
    issue: Issue,
    *,
    rank: int | None = None,
    before_id: uuid.UUID | None = None,
    after_id: uuid.UUID | None = None,
) -> None:
    """Give the issue an explicit ``rank``, or put it right before ``before_id`` and/or after
    ``after_id`` (issues of the same project)."""
    if rank is not None and (before_id is not None or after_id is not None):
        raise _refuse("rank", "Give either rank or before_id/after_id", reason="rank_and_neighbours")
    if issue.id in (before_id, after_id):
        raise _refuse(
            "before_id" if before_id == issue.id else "after_id",
            "An issue cannot be placed next to itself",
            reason="rank_next_to_itself",
        )
    lock_board(issue.project_id)
    if rank is None:
        rank = _midpoint(issue, before_id, after_id)
    db.session.execute(
        update(Issue)
        .where(Issue.id == issue.id)
        .values(rank=rank)
        .execution_options(synchronize_session=False)
    )
    db.session.refresh(issue, ["rank"])


def _midpoint(issue: Issue, before_id: uuid.UUID | None, after_id: uuid.UUID | None) -> int:
    for attempt in range(2):
        low, high = _gap(issue, before_id, after_id)
        if low is None and high is None:
            return issue.rank
        if low is None:
            return high - RANK_STEP
        if high is None:
            return low + RANK_STEP
        if high - low >= 2:
            return (low + high) // 2
        if attempt == 0:
            rebalance(issue.project_id)
    raise AssertionError("a rebalanced board always leaves a gap")  # pragma: no cover
