"""One issue of the tracker's demo: how it is created, then the steps it goes through."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class DemoIssue:
    """One issue: how it is created, then its steps in order.

    Steps: ``("c", who, text)`` a comment (``{@local}`` becomes an @mention of that demo
    account), ``("s", who, category)`` a move to the project's status of that category,
    ``("p", who, priority)``, ``("a", who, local)`` a new assignee, ``("l", who, labels)``.
    """

    project: str
    ref: str
    title: str
    type: str
    priority: str
    status: str
    creator: str
    assignee: str | None = None
    labels: tuple[str, ...] = ()
    description: str | None = None
    due_in: int | None = None
    estimate: int | None = None
    parent: str | None = None
    steps: list[tuple] = field(default_factory=list)


def demo_issue(
    project, ref, title, type_, priority, status, creator, assignee=None, labels=(), **extra
) -> DemoIssue:
    """A ``DemoIssue`` from its fields in order, as the project modules write them."""
    return DemoIssue(project, ref, title, type_, priority, status, creator, assignee, tuple(labels), **extra)
