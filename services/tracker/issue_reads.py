"""Issues as the API lists and shows them: plain rows, not ORM objects (the board's cards are
``issue_board``'s).

A list reads one page of ids in the lists' order (filters, count and order shared by the
API list, the issue list page and the board), then the page's rows with their status,
people and labels in one statement, then their custom fields. Reading thousands of
issues as ORM objects cost more than the queries themselves.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import Integer, and_, bindparam, cast, exists, func, literal_column, null, select, union_all
from sqlalchemy.orm import aliased

from extensions import db
from models.auth import User
from models.tracker import PRIORITIES, Issue, IssueLabel, IssueRelation, Label, Project, Status
from services.errors import NotFoundError
from services.rows import DriverRead, read_columns
from services.text import contains_pattern
from services.tracker import custom_fields, issue_counts, search
from services.tracker.access import READ, Access, ProjectBrief, project_brief_access
from services.tracker.issues import KEY, MAX_NUMBER, MAX_PER_PAGE

Child = aliased(Issue)


def children_count():
    """The number of an issue's sub-issues, as a column of a query over issues."""
    return (
        select(func.count())
        .select_from(Child)
        .where(Child.parent_id == Issue.id)
        .correlate(Issue)
        .scalar_subquery()
    )


Related = aliased(Issue)
AssigneeUser = aliased(User)
CreatorUser = aliased(User)
RelatedProject = aliased(Project)


@dataclass(frozen=True, slots=True)
class StatusBrief:
    id: uuid.UUID
    name: str
    color: str
    category: str


@dataclass(frozen=True, slots=True)
class PersonBrief:
    id: uuid.UUID
    name: str
    avatar_url: str | None = None


@dataclass(frozen=True, slots=True)
class LabelBrief:
    id: uuid.UUID
    name: str
    color: str


@dataclass(frozen=True, slots=True)
class IssueBrief:
    id: uuid.UUID
    key: str
    title: str


@dataclass(frozen=True, slots=True)
class RelationRow:
    id: uuid.UUID
    type: str
    related_issue: IssueBrief


@dataclass(slots=True)
class IssueRow:
    """An issue as the API shows it, read as columns rather than as an ORM object."""

    id: uuid.UUID
    key: str
    project_id: uuid.UUID
    title: str
    description: str | None
    type: str
    priority: int
    status: StatusBrief
    assignee: PersonBrief | None
    parent_id: uuid.UUID | None
    children_count: int
    start_date: object
    due_date: object
    estimate: int | None
    rank: int
    created_by: PersonBrief | None
    created_at: object
    updated_at: object
    labels: list[LabelBrief] = field(default_factory=list)
    custom_fields: dict = field(default_factory=dict)
    relations: list[RelationRow] = field(default_factory=list)
    children: list[IssueBrief] = field(default_factory=list)

    @property
    def priority_name(self) -> str:
        return PRIORITIES[self.priority]


@dataclass
class IssueRowPage:
    issues: list[IssueRow]
    total: int
    page: int
    per_page: int


FILTERS = ("status_id", "priority", "type", "assignee_id", "parent_id", "label_id", "q", "custom_field")


def _conditions(project: ProjectBrief, filters: dict) -> list:
    conditions = [Issue.project_id == project.id, *issue_counts.dimension_conditions(Issue, filters)]
    if filters.get("parent_id"):
        conditions.append(Issue.parent_id == filters["parent_id"])
    if filters.get("label_id"):
        conditions.append(
            exists().where(IssueLabel.issue_id == Issue.id, IssueLabel.label_id.in_(filters["label_id"]))
        )
    q = (filters.get("q") or "").strip()
    if q:
        conditions.append(search.condition(q))
    return conditions


def _used_filters(filters: dict) -> set[str]:
    return {name for name in FILTERS if filters.get(name) and (name != "q" or filters["q"].strip())}


def _total(project: ProjectBrief, filters: dict, conditions: Callable[[], list]) -> int:
    """Exact number of matches, by the cheapest route that gives the same answer."""
    used = _used_filters(filters)
    if not used:
        # Read with the access check (the row as stored now): no statement of its own.
        return project.issue_count or 0
    if issue_counts.answers(filters, used):
        # Status, type, priority, assignee and up to two labels: a sum of counters kept on write.
        return issue_counts.total(project.id, filters)
    if used == {"label_id"}:
        # Three labels or more (the counters answer one or two). Labels belong to one project,
        # so counting their issue links (index-only) is the same as counting the project's
        # issues that carry any of them.
        own_labels = select(Label.id).where(Label.project_id == project.id, Label.id.in_(filters["label_id"]))
        links = select(IssueLabel.issue_id).where(IssueLabel.label_id.in_(own_labels)).distinct().subquery()
        return db.session.scalar(select(func.count()).select_from(links)) or 0
    if used == {"q"}:
        words = search.query_words(filters["q"])
        if len(words) == 1 and len(words[0]) <= search.MAX_GRAM:
            # A letter or two is inside most titles: its count is kept on write.
            return search.count_gram(project.id, words[0])
        if len(words) == 1:
            # One word, however common, is counted from the title index alone.
            counted = search.count_word(project.id, words[0])
            if counted is not None:
                return counted
    return db.session.scalar(select(func.count()).select_from(Issue).where(*conditions())) or 0


def _ordering(filters: dict) -> list:
    name = filters.get("order_by") or "created_at"
    # The board's order reads top first; every other sort is newest or largest first by default.
    descending = (filters.get("order") or ("asc" if name == "rank" else "desc")) == "desc"
    column = getattr(Issue, name)
    sort = column.desc() if descending else column.asc()
    if name == "due_date":
        # Issues without a due date come last in both directions.
        sort = sort.nulls_last()
    ties = [getattr(Issue, tie) for tie in ("created_at", "number") if tie != name]
    if name == "rank":
        ties = [Issue.number]
    return [sort, *(tie.desc() if descending else tie.asc() for tie in ties)]


@dataclass
class _ListPlan:
    project: ProjectBrief
    access: Access
    filters: dict
    custom_conditions: list
    page: int
    per_page: int
    total: int = 0

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per_page

    # Built when a statement is built from them: a page of a common shape runs one built once.
    @functools.cached_property
    def conditions(self) -> list:
        return _conditions(self.project, self.filters) + self.custom_conditions

    @functools.cached_property
    def ordering(self) -> list:
        return _ordering(self.filters)


def plan_list(user: User, slug: str, project_id: uuid.UUID, filters: dict) -> _ListPlan:
    """What every issue list shares: access, conditions, order, paging and the exact total."""
    project, access = project_brief_access(user, slug, project_id, READ)
    page = filters.get("page") or 1
    per_page = min(filters.get("per_page") or 50, MAX_PER_PAGE)
    custom = custom_fields.conditions(project, access.organization, filters.get("custom_field"))
    plan = _ListPlan(project, access, filters, custom, page, per_page)
    plan.total = _total(project, filters, lambda: plan.conditions)
    return plan


# A list page's statement, built once per shape (the filters used, the number of search words,
# the order) with its values as parameters: building it, and its cache key, on every request
# cost about half as much as running it. Mirrors ``_conditions`` (``tests/tracker/
# test_issues.py`` compares both); custom field filters, whose conditions depend on each
# field's type, build their statement each time.
_PAGE_FILTERS = ("status_id", "priority", "type", "assignee_id", "parent_id", "label_id", "q")


def _page_shape(filters: dict) -> tuple | None:
    if filters.get("custom_field"):
        return None
    used = _used_filters(filters)
    words = len(search.query_words(filters["q"])) if "q" in used else 0
    if "q" in used and not words:
        return None  # nothing matches: not worth a statement of its own
    return (
        tuple(name for name in _PAGE_FILTERS if name in used),
        words,
        filters.get("order_by") or "created_at",
        filters.get("order"),
    )


@functools.lru_cache(maxsize=256)
def _page_statement(used: tuple[str, ...], words: int, order_by: str, order: str | None):
    conditions = [
        Issue.project_id == bindparam("project_id"),
        *issue_counts.dimension_placeholders(Issue, used),
    ]
    if "parent_id" in used:
        conditions.append(Issue.parent_id == bindparam("parent_id"))
    if "label_id" in used:
        conditions.append(
            exists().where(
                IssueLabel.issue_id == Issue.id,
                IssueLabel.label_id.in_(bindparam("label_id", expanding=True)),
            )
        )
    if words:
        conditions.append(
            and_(*(Issue.search_text.like(bindparam(f"word_{i}"), escape="\\") for i in range(words)))
        )
    ordering = _ordering({"order_by": order_by, "order": order})
    page = (
        select(Issue.id)
        .where(*conditions)
        .order_by(*ordering)
        .limit(bindparam("limit", type_=Integer))
        .offset(bindparam("offset", type_=Integer))
        .subquery()
    )
    return DriverRead(_ROW_QUERY.join(page, page.c.id == Issue.id).order_by(*ordering, Label.name))


def _page_params(plan: _ListPlan, filters: dict) -> dict:
    params = {"project_id": plan.project.id, "limit": plan.per_page, "offset": plan.offset}
    params.update(issue_counts.dimension_params(filters))
    for name in ("label_id", "parent_id"):
        if filters.get(name):
            params[name] = filters[name]
    if (filters.get("q") or "").strip():
        for i, word in enumerate(search.query_words(filters["q"])):
            params[f"word_{i}"] = contains_pattern(word)
    return params


def list_issue_rows(user: User, slug: str, project_id: uuid.UUID, filters: dict) -> IssueRowPage:
    """One page of the project's issues, filtered and sorted, with the total that matched, as
    plain rows (the API's list and the list page): the page with its statuses, people and
    labels in one statement, then its custom fields in one more."""
    plan = plan_list(user, slug, project_id, filters)
    shape = _page_shape(filters)
    if shape is None:
        page = (
            select(Issue.id)
            .where(*plan.conditions)
            .order_by(*plan.ordering)
            .limit(plan.per_page)
            .offset(plan.offset)
            .subquery()
        )
        rows = _issue_rows(
            plan.project, _ROW_QUERY.join(page, page.c.id == Issue.id).order_by(*plan.ordering, Label.name)
        )
    else:
        rows = _issue_rows(plan.project, _page_statement(*shape), _page_params(plan, filters))
    _fill(rows, plan.access)
    return IssueRowPage(issues=rows, total=plan.total, page=plan.page, per_page=plan.per_page)


def _issue_columns() -> list:
    return [
        Issue.id,
        Issue.number,
        Issue.project_id,
        Issue.title,
        Issue.description,
        Issue.type,
        Issue.priority,
        Issue.parent_id,
        Issue.start_date,
        Issue.due_date,
        Issue.estimate,
        Issue.rank,
        Issue.created_at,
        Issue.updated_at,
        Status.id,
        Status.name,
        Status.color,
        Status.category,
        AssigneeUser.id,
        AssigneeUser.name,
        AssigneeUser.avatar_url,
        CreatorUser.id,
        CreatorUser.name,
    ]


def _with_people(query):
    return (
        query.join(Status, Status.id == Issue.status_id)
        .outerjoin(AssigneeUser, AssigneeUser.id == Issue.assignee_id)
        .outerjoin(CreatorUser, CreatorUser.id == Issue.created_by_id)
    )


def _row_query():
    return (
        _with_people(select(*_issue_columns(), children_count(), Label.id, Label.name, Label.color))
        # One row per label (or one without): the page and its labels in one round trip.
        .outerjoin(IssueLabel, IssueLabel.issue_id == Issue.id)
        .outerjoin(Label, Label.id == IssueLabel.label_id)
    )


# The hot reads' statements are built once, at import: building a statement of this many
# columns (and its cache key) on every request cost more CPU than running it; a reused
# statement object keeps its cache key.
_ROW_QUERY = _row_query()

# One issue alone: its labels and its sub-issues (counted by reading them) come with its
# relations. Planned for its values on every run, the page's statement (six relations and a
# subquery) took three times as long to plan as this one.
_ISSUE_BY_NUMBER = DriverRead(
    _with_people(select(*_issue_columns())).where(
        Issue.project_id == bindparam("project_id"), Issue.number == bindparam("number")
    )
)

_RELATION, _CHILD, _LABEL = 0, 1, 2


def _relations_children_and_labels():
    """An issue's relations (kind 0, by creation), its sub-issues (kind 1, by number) and its
    labels (kind 2, by name: id, color and name in the relation id, type and title columns)
    in one round trip: a statement costs the request more CPU than any one's few rows."""
    relations = (
        select(
            literal_column("0").label("kind"),
            IssueRelation.id.label("relation_id"),
            IssueRelation.type.label("relation_type"),
            Related.id.label("issue_id"),
            Related.number.label("number"),
            Related.title.label("title"),
            RelatedProject.key.label("project_key"),
            IssueRelation.created_at.label("created_at"),
        )
        .join(Related, Related.id == IssueRelation.related_issue_id)
        .join(RelatedProject, RelatedProject.id == Related.project_id)
        .where(IssueRelation.issue_id == bindparam("issue_id"))
    )
    children = select(
        literal_column("1"),
        cast(null(), IssueRelation.id.type),
        cast(null(), IssueRelation.type.type),
        Issue.id,
        Issue.number,
        Issue.title,
        cast(null(), Project.key.type),
        cast(null(), IssueRelation.created_at.type),
    ).where(Issue.parent_id == bindparam("issue_id"))
    labels = (
        select(
            literal_column("2"),
            Label.id,
            Label.color,
            cast(null(), Issue.id.type),
            cast(null(), Issue.number.type),
            Label.name,
            cast(null(), Project.key.type),
            cast(null(), IssueRelation.created_at.type),
        )
        .join(IssueLabel, IssueLabel.label_id == Label.id)
        .where(IssueLabel.issue_id == bindparam("issue_id"))
    )
    every = union_all(relations, children, labels).subquery()
    return select(every).order_by(every.c.kind, every.c.created_at, every.c.number, every.c.title)


_DETAILS = DriverRead(_relations_children_and_labels())


def _issue_row(prefix: str, r, children_count: int) -> IssueRow:
    """An issue of ``_issue_columns``' row ``r``, without its labels."""
    return IssueRow(
        r[0],
        f"{prefix}{r[1]}",
        r[2],
        r[3],
        r[4],
        r[5],
        r[6],
        StatusBrief(r[14], r[15], r[16], r[17]),
        PersonBrief(r[18], r[19], r[20]) if r[18] is not None else None,
        r[7],
        children_count,
        r[8],
        r[9],
        r[10],
        r[11],
        PersonBrief(r[21], r[22]) if r[21] is not None else None,
        r[12],
        r[13],
    )


def _issue_rows(project: ProjectBrief, query, params: dict | None = None) -> list[IssueRow]:
    """Rows of ``_ROW_QUERY`` as issues; an issue's label rows (ordered by name) join its labels."""
    prefix = f"{project.key}-"
    issues: dict[uuid.UUID, IssueRow] = {}
    for r in query.all(params) if isinstance(query, DriverRead) else read_columns(query, params).all():
        row = issues.get(r[0])
        if row is None:
            row = issues[r[0]] = _issue_row(prefix, r, r[23])
        if r[24] is not None:
            row.labels.append(LabelBrief(r[24], r[25], r[26]))
    return list(issues.values())


def _fill(rows: list[IssueRow], access: Access) -> None:
    """The custom fields of ``rows``."""
    shown = custom_fields.values_of(access.organization, [(row.id, row.project_id) for row in rows])
    for row in rows:
        row.custom_fields = shown[row.id]


def get_issue_row(user: User, slug: str, project_id: uuid.UUID, key: str) -> IssueRow:
    """One issue as ``get_issue`` answers it, read as plain rows: the issue, its custom fields,
    then its relations, children and labels together."""
    project, access = project_brief_access(user, slug, project_id, READ)
    match = KEY.match(key)
    if match is None or match.group(1).upper() != project.key or int(match.group(2)) > MAX_NUMBER:
        raise NotFoundError("Issue not found", reason="issue_not_found")
    found = _ISSUE_BY_NUMBER.first({"project_id": project.id, "number": int(match.group(2))})
    if found is None:
        raise NotFoundError("Issue not found", reason="issue_not_found")
    prefix = f"{project.key}-"
    row = _issue_row(prefix, found, 0)
    _fill([row], access)
    for kind, rid, rtype, other, number, title, other_key, _at in _DETAILS.all({"issue_id": row.id}):
        if kind == _RELATION:
            row.relations.append(RelationRow(rid, rtype, IssueBrief(other, f"{other_key}-{number}", title)))
        elif kind == _CHILD:
            row.children.append(IssueBrief(other, f"{prefix}{number}", title))
        else:
            row.labels.append(LabelBrief(rid, title, rtype))
    row.children_count = len(row.children)
    return row
