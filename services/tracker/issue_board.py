"""The board's cards: one read of every card in board order, fewer columns than a list row,
with the filters, count and order of the issue lists (``issue_reads``)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import date, datetime

from sqlalchemy import and_, bindparam, exists, select

from extensions import db
from models.auth import User, initials
from models.base import UTCDateTime
from models.tracker import PRIORITIES, Issue, IssueLabel, Label, Membership, Organization, Project, Workspace
from services import live_polls
from services.rows import DriverRead
from services.tracker.access import READ, project_brief_access
from services.tracker.issue_reads import AssigneeUser, LabelBrief, children_count, plan_list
from services.tracker.issues import IssueView


@dataclass(slots=True)
class CardRow:
    """An issue as its board card shows it."""

    id: uuid.UUID
    key: str
    title: str
    type: str
    priority_name: str
    status_id: uuid.UUID
    rank: int
    assignee_name: str | None
    assignee_initials: str | None
    due_date: date | None
    children_count: int
    labels: list[LabelBrief] = field(default_factory=list)


@dataclass
class Board:
    """The first cards of a board in board order, how many issues matched in all, and whether
    the limit left some out."""

    cards: list[CardRow]
    total: int
    truncated: bool


_BOARD_ORDER = {"order_by": "rank", "order": "asc"}


def board_cards(user: User, slug: str, project_id: uuid.UUID, filters: dict, limit: int) -> Board:
    """The first ``limit`` matching issues as cards, in board order (each column reads top to
    bottom in the order people dragged the cards into), in one statement; the filters, their
    count and the order are the lists' own."""
    plan = plan_list(user, slug, project_id, {**filters, **_BOARD_ORDER})
    chosen = select(Issue.id).where(*plan.conditions).order_by(*plan.ordering).limit(limit).subquery()
    children = children_count()
    query = (
        select(
            Issue.id,
            Issue.number,
            Issue.title,
            Issue.type,
            Issue.priority,
            Issue.status_id,
            Issue.rank,
            Issue.due_date,
            AssigneeUser.name,
            children,
            Label.id,
            Label.name,
            Label.color,
        )
        .join(chosen, chosen.c.id == Issue.id)
        .outerjoin(AssigneeUser, AssigneeUser.id == Issue.assignee_id)
        # One row per label (or one without): the cards and their labels in one round trip.
        .outerjoin(IssueLabel, IssueLabel.issue_id == Issue.id)
        .outerjoin(Label, Label.id == IssueLabel.label_id)
        .order_by(*plan.ordering, Label.name)
    )
    prefix = f"{plan.project.key}-"
    people: dict[str, str] = {}
    cards: list[CardRow] = []
    card: CardRow | None = None
    for row in db.session.execute(query):
        issue_id, number, title, kind, priority, status_id, rank, due, name, count = row[:10]
        if card is None or card.id != issue_id:
            if name is not None and name not in people:
                people[name] = initials(name)
            card = CardRow(
                issue_id,
                f"{prefix}{number}",
                title,
                kind,
                PRIORITIES[priority],
                status_id,
                rank,
                name,
                people.get(name),
                due,
                count,
            )
            cards.append(card)
        if row[10] is not None:
            card.labels.append(LabelBrief(row[10], row[11], row[12]))
    return Board(cards, plan.total, len(cards) >= limit and plan.total > limit)


def board_changed(user: User, slug: str, project_id: uuid.UUID, moment: datetime | None) -> tuple[int, bool]:
    """The project's issue count and whether one of its issues changed after ``moment``, with
    the board's access checks (an open board's live updates ask every few seconds): the
    project's row and one indexed probe. A deleted issue changes the count."""
    project, _access = project_brief_access(user, slug, project_id, READ)
    if moment is None:
        return project.issue_count, True
    row = _CHANGED_AFTER.first({"project_id": project.id, "moment": moment})
    return project.issue_count, bool(row and row[0])


# Built once, over ``ix_issues_project_updated``: an open board runs it every few seconds.
_CHANGED_AFTER = DriverRead(
    select(
        exists()
        .where(
            Issue.project_id == bindparam("project_id", type_=Issue.project_id.type),
            Issue.updated_at > bindparam("moment", type_=UTCDateTime),
        )
        .label("changed")
    )
)


def _quiet_board() -> DriverRead:
    """The session's account (``live_polls``), its role in the workspace's organization, whether
    that is suspended, the project's issue count (NULL when the workspace has no such project)
    and whether one of its issues changed after ``moment``: ``project_brief_access`` and
    ``_CHANGED_AFTER`` in one statement."""
    users, workspaces, projects = User.__table__, Workspace.__table__, Project.__table__
    organizations, memberships = Organization.__table__, Membership.__table__
    project_id = bindparam("project_id", type_=projects.c.id.type)
    changed = exists().where(
        Issue.__table__.c.project_id == project_id,
        Issue.__table__.c.updated_at > bindparam("moment", type_=UTCDateTime),
    )
    return DriverRead(
        select(
            *live_polls.account_columns(),
            memberships.c.role,
            organizations.c.suspended,
            projects.c.issue_count,
            changed.label("changed"),
        )
        .select_from(users)
        .outerjoin(workspaces, workspaces.c.slug == bindparam("slug"))
        .outerjoin(organizations, organizations.c.id == workspaces.c.organization_id)
        .outerjoin(
            memberships,
            and_(
                memberships.c.organization_id == workspaces.c.organization_id,
                memberships.c.user_id == users.c.id,
            ),
        )
        .outerjoin(projects, and_(projects.c.id == project_id, projects.c.workspace_id == workspaces.c.id))
        .where(users.c.id == live_polls.ACCOUNT_ID)
    )


# Built once: an open board runs it every few seconds (and benchmarks/live_polls.py's bare app).
QUIET_BOARD = _quiet_board()


def board_quiet(
    caller: live_polls.Caller, slug: str, project_id: uuid.UUID, moment: datetime, count: str
) -> bool:
    """A live poll's "nothing changed" in one statement: the session holds, the account may read
    the project (a member of its organization, not suspended), ``count`` is still its issue count
    and ``board_changed`` would say False. Anything else is False and the poll goes the full way
    (its refusal, or the board)."""
    if "\x00" in slug:
        return False
    row = QUIET_BOARD.first_alone(
        {**caller.params(), "slug": slug, "project_id": project_id, "moment": moment}
    )
    if row is None or not live_polls.session_holds(caller, row.banned, row.sessions_valid_after, row.denied):
        return False
    if row.role is None or row.suspended or row.issue_count is None:
        return False
    return count == str(row.issue_count) and not row.changed


def card_of(view: IssueView) -> CardRow:
    """The card of an issue just created or moved (its labels and assignee are loaded with it)."""
    issue = view.issue
    assignee = issue.assignee
    return CardRow(
        issue.id,
        issue.key,
        issue.title,
        issue.type,
        issue.priority_name,
        issue.status_id,
        issue.rank,
        assignee.name if assignee else None,
        initials(assignee.name) if assignee else None,
        issue.due_date,
        view.children_count,
        [LabelBrief(label.id, label.name, label.color) for label in issue.labels],
    )
