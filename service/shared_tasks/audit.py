"""A task's audit log (issue 30): every action on its teams and submissions -- registration, a member joining, a
removal, a disqualification, a withdrawal, invitations made and redeemed, settings and phases changed -- is one
row appended in the same transaction as the action (who: user and token; what; on what; why; when), never changed
or deleted. Organisers read it, newest first (``GET /v1/tasks/{id}/audit``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalserve.service.core.paging import page_of
from evalserve.service.shared_tasks.access import organised_task
from evalserve.service.store.models import TaskAuditEntry, Token, as_utc, utcnow
from evaluation.enums import StrEnum


class Action(StrEnum):
    """What an audit row records (the strings stored and shown)."""

    TASK_UPDATED = "task.updated"
    PHASE_ADDED = "phase.added"
    PHASE_UPDATED = "phase.updated"
    JUDGMENTS_INSTALLED = "judgments.installed"
    PARTICIPANT_REGISTERED = "participant.registered"
    MEMBER_JOINED = "participant.member_joined"
    PARTICIPANT_REMOVED = "participant.removed"
    PARTICIPANT_DISQUALIFIED = "participant.disqualified"
    PARTICIPANT_REINSTATED = "participant.reinstated"
    SUBMISSION_DISQUALIFIED = "submission.disqualified"
    SUBMISSION_REINSTATED = "submission.reinstated"
    SUBMISSION_WITHDRAWN = "submission.withdrawn"
    INVITATIONS_CREATED = "invitation.created"
    INVITATION_REDEEMED = "invitation.redeemed"


def record(s: Session, task_id: str, who: Token | None, action: Action, target: str | None = None, *,
           reason: str | None = None, at: datetime | None = None, **details: Any) -> None:
    """Append one row for ``action`` by ``who`` (its user and token; None: nobody known) in the caller's
    transaction: it is kept if and only if the action is."""
    s.add(TaskAuditEntry(task_id=task_id, at=at or utcnow(), user_id=who.user_id if who else None,
                         token_id=who.id if who else None, action=action.value, target=target, reason=reason,
                         details=details))


def entry_document(row: TaskAuditEntry) -> dict[str, Any]:
    """One audit row as ``GET /v1/tasks/{id}/audit`` shows it."""
    return {"id": row.id, "at": as_utc(row.at), "user": row.user_id, "token": row.token_id, "action": row.action,
            "target": row.target, "reason": row.reason, "details": dict(row.details or {})}


def audit_log(s: Session, caller: Token | None, task_id: str, pagination: Any,
              action: str | None = None) -> list[dict[str, Any]]:
    """A page of the task's audit log, newest first (organisers only); ``action`` filters."""
    organised_task(s, task_id, caller)
    query = select(TaskAuditEntry).where(TaskAuditEntry.task_id == task_id)
    if action:
        query = query.where(TaskAuditEntry.action == action)
    return [entry_document(row) for row in page_of(s, query, TaskAuditEntry.id.desc(), pagination)]
