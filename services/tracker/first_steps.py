"""A new organization's first steps, for the people who run it: a project, a colleague, a task.

The tracker's home shows them as a checklist to an organization's owners and admins until all
three are done (an invitation sent counts as the colleague: it is the step the owner takes).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import exists, select

from extensions import db
from models.tracker import Invitation
from services.tracker.plans import usage

MANAGERS = ("owner", "admin")


@dataclass(frozen=True)
class FirstSteps:
    project: bool
    colleague: bool
    task: bool

    @property
    def done(self) -> bool:
        return self.project and self.colleague and self.task

    @property
    def taken(self) -> int:
        return sum((self.project, self.colleague, self.task))


def first_steps(organization_id: uuid.UUID) -> FirstSteps:
    invited = db.session.scalar(select(exists().where(Invitation.organization_id == organization_id)))
    return FirstSteps(
        project=usage(organization_id, "projects") > 0,
        colleague=usage(organization_id, "members") > 1 or bool(invited),
        task=usage(organization_id, "issues") > 0,
    )


def pending_first_steps(organizations) -> dict[uuid.UUID, FirstSteps]:
    """The organizations (of ``accounts.my_organizations``) the person runs whose first steps are
    not all taken, with what is taken."""
    found = {}
    for org in organizations:
        if org.role in MANAGERS and not org.suspended:
            steps = first_steps(org.id)
            if not steps.done:
                found[org.id] = steps
    return found
