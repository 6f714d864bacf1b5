"""Who may do what with a shared task: organisers (the owner token, and admins), registered participants, and
the public. A task the caller may not see is reported as missing (404), never as forbidden, so private tasks
do not leak their existence; a visible task refuses what the caller's role does not allow with 403."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalserve.service.core.errors import ServiceError
from evalserve.service.store.models import Participant, Scope, Task, Token, as_utc, utcnow

Role = Literal["organiser", "participant", "public"]


@dataclass(frozen=True)
class TaskAccess:
    """A task as one caller sees it: their role, and their participant row if they registered."""

    task: Task
    role: Role
    participant: Participant | None

    @property
    def organiser(self) -> bool:
        return self.role == "organiser"

    def leaderboard_open(self, now: datetime | None = None) -> bool:
        """May this caller read the leaderboard now? Organisers always; others once it is not blinded."""
        if self.organiser:
            return True
        task = self.task
        if task.visibility == "blinded":
            until = as_utc(task.blinded_until)
            return until is not None and (now or utcnow()) >= until
        return True

    def scores_visible(self, now: datetime | None = None) -> bool:
        """May this caller see scores (their own submissions' too)? Not before a blinded task's date."""
        return self.leaderboard_open(now)


def is_organiser(task: Task, token: Token | None) -> bool:
    return token is not None and (token.id == task.owner_id or Scope.ADMIN in token.scope_set)


def task_access(session: Session, task_id: str, token: Token | None) -> TaskAccess:
    """The caller's view of the task, or 404 if they may not see it (a private task they do not take part in).
    ``token`` is the caller's (None: anonymous)."""
    task = session.get(Task, task_id)
    if task is None:
        raise ServiceError(404, "not-found", f"no task {task_id}")
    return _access(task, token, _participant(session, task, token))


def task_accesses(session: Session, tasks: Sequence[Task], token: Token | None) -> list[TaskAccess]:
    """:func:`task_access` for a page of tasks, the caller's registrations read in one query."""
    mine: dict[str, Participant] = {}
    if token is not None and tasks:
        rows = session.execute(select(Participant).where(Participant.task_id.in_([t.id for t in tasks]),
                                                         Participant.token_id == token.id)).scalars()
        mine = {p.task_id: p for p in rows}
    return [_access(task, token, mine.get(task.id)) for task in tasks]


def _access(task: Task, token: Token | None, participant: Participant | None) -> TaskAccess:
    if is_organiser(task, token):
        return TaskAccess(task, "organiser", participant)
    if participant is not None:
        return TaskAccess(task, "participant", participant)
    if task.visibility == "private":
        raise ServiceError(404, "not-found", f"no task {task.id}")
    return TaskAccess(task, "public", None)


def organised_task(session: Session, task_id: str, token: Token | None) -> Task:
    """The task, if the caller organises it: 404 when they cannot see it, 403 when they can but do not."""
    access = task_access(session, task_id, token)
    if not access.organiser:
        raise ServiceError(403, "organisers-only", f"only the organisers of task {task_id} may do this")
    return access.task


def participating(session: Session, task_id: str, token: Token | None) -> TaskAccess:
    """The caller's access to a task they take part in (organisers pass too): 403 ``not-registered`` otherwise."""
    access = task_access(session, task_id, token)
    if access.participant is None and not access.organiser:
        raise ServiceError(403, "not-registered", f"register for task {task_id} first:"
                           f" POST /v1/tasks/{task_id}/participants")
    return access


def _participant(session: Session, task: Task, token: Token | None) -> Participant | None:
    if token is None:
        return None
    found: Participant | None = session.execute(
        select(Participant).where(Participant.task_id == task.id, Participant.token_id == token.id)
    ).scalar_one_or_none()
    return found
