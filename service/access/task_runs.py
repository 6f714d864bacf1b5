"""Runs a task's organiser may meta-evaluate: those submitted to a task it organises (runs belong to the
participants who uploaded them; the organiser owns the task, and with it the right to compare its submissions)."""

from __future__ import annotations

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from evalserve.service.store.models import Submission, SubmissionEvaluation, Task


def organises_run(s: Session, run_id: str, owner_id: str) -> bool:
    """Is ``run_id`` a run submitted to (or re-evaluated for) a task whose organiser is ``owner_id``?"""
    evaluated = select(SubmissionEvaluation.submission_id).where(SubmissionEvaluation.run_id == run_id)
    found = s.execute(
        select(Submission.id).join(Task, Task.id == Submission.task_id)
        .where(Task.owner_id == owner_id, or_(Submission.run_id == run_id, Submission.id.in_(evaluated)))
        .limit(1)).first()
    return found is not None
