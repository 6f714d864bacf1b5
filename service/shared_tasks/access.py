"""Who may do what with a shared task: organisers (the owner token, and admins), registered participants, and
the public. A task the caller may not see is reported as missing (404), never as forbidden, so private tasks
do not leak their existence; a visible task refuses what the caller's role does not allow with 403."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import ColumnElement, and_, or_, select
from sqlalchemy.orm import Session

from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.store.models import (
    Participant,
    ParticipantMember,
    Scope,
    Task,
    TaskVisibility,
    Token,
    as_utc,
    utcnow,
)

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
        if task.visibility == TaskVisibility.BLINDED:
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
        raise ServiceError(404, ProblemCode.NOT_FOUND, f"no task {task_id}")
    return _access(task, token, _participant(session, task, token))


def task_accesses(session: Session, tasks: Sequence[Task], token: Token | None) -> list[TaskAccess]:
    """:func:`task_access` for a page of tasks, the caller's registrations read in one query."""
    mine: dict[str, Participant] = {}
    if token is not None and tasks:
        rows = session.execute(acting_for(token).where(Participant.task_id.in_([t.id for t in tasks]))).scalars()
        for p in rows:
            if p.task_id not in mine or p.token_id == token.id:  # the token's own registration first
                mine[p.task_id] = p
    return [_access(task, token, mine.get(task.id)) for task in tasks]


def _access(task: Task, token: Token | None, participant: Participant | None) -> TaskAccess:
    if is_organiser(task, token):
        return TaskAccess(task, "organiser", participant)
    if participant is not None:
        return TaskAccess(task, "participant", participant)
    if task.visibility == TaskVisibility.PRIVATE:
        raise ServiceError(404, ProblemCode.NOT_FOUND, f"no task {task.id}")
    return TaskAccess(task, "public", None)


def organised_task(session: Session, task_id: str, token: Token | None) -> Task:
    """The task, if the caller organises it: 404 when they cannot see it, 403 when they can but do not."""
    access = task_access(session, task_id, token)
    if not access.organiser:
        raise ServiceError(403, ProblemCode.ORGANISERS_ONLY, f"only the organisers of task {task_id} may do this")
    return access.task


def participating(session: Session, task_id: str, token: Token | None) -> TaskAccess:
    """The caller's access to a task they take part in (organisers pass too): 403 ``not-registered`` otherwise."""
    access = task_access(session, task_id, token)
    if access.participant is None and not access.organiser:
        raise ServiceError(403, ProblemCode.NOT_REGISTERED, f"register for task {task_id} first:"
                           f" POST /v1/tasks/{task_id}/participants")
    return access


def membership(token: Token) -> ColumnElement[bool]:
    """Participants ``token`` acts for: the one it registered, and every team its user is a member of (removed
    ones included; the caller filters)."""
    member = select(ParticipantMember.participant_id).where(ParticipantMember.user_id == token.user_id)
    return or_(Participant.token_id == token.id, Participant.id.in_(member))


def acting_for(token: Token) -> Any:
    """The query of the live (not removed) participants ``token`` acts for, in every task."""
    return select(Participant).where(and_(membership(token), Participant.removed_at.is_(None)))


def _participant(session: Session, task: Task, token: Token | None) -> Participant | None:
    """The team the caller acts for in the task: the one its token registered (registrations made before teams
    had members), else the one its user is a member of; None for a removed team."""
    if token is None:
        return None
    rows = list(session.execute(acting_for(token).where(Participant.task_id == task.id)).scalars())
    return next((p for p in rows if p.token_id == token.id), rows[0] if rows else None)
