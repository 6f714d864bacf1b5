"""What a long-poll on a task submission watches (issue 30): the state of its evaluation at the task's current
judgments version (else its first), read for many submissions in one query -- a participant's submission follows
its evaluation job, as a job's long-poll follows the job. Flask-free: the web layer parks on it."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from evalserve.service.core.etags import etag_of
from evalserve.service.core.state import ServiceState
from evalserve.service.store.models import FINAL_STATES, Job, Submission, SubmissionEvaluation, Task


def evaluations_now(st: ServiceState, submission_ids: list[str]) -> dict[str, tuple[str, dict[str, Any]]]:
    """(tag, {state, stage, progress, error, version}) of each submission's evaluation as it is now, in one read:
    the fields a submission shows of its job, so a new tag means the submission shows something new."""
    query = (select(SubmissionEvaluation.submission_id, SubmissionEvaluation.version, Task.version, Job.state,
                    Job.stage, Job.progress, Job.error, Job.result_sha256)
             .join(Job, Job.id == SubmissionEvaluation.job_id)
             .join(Submission, Submission.id == SubmissionEvaluation.submission_id)
             .join(Task, Task.id == Submission.task_id)
             .where(SubmissionEvaluation.submission_id.in_(submission_ids))
             .order_by(SubmissionEvaluation.submission_id, SubmissionEvaluation.version))
    found: dict[str, dict[str, Any]] = {}
    with st.db.session() as s:
        for sub_id, version, current, job_state, stage, progress, error, sha in s.execute(query):
            if sub_id not in found or version == current:
                found[sub_id] = {"version": version, "state": job_state, "stage": stage, "progress": progress,
                                 "error": error, "result": sha}
    missing = {"version": None, "state": None, "stage": None, "progress": None, "error": None, "result": None}
    return {sub_id: (etag_of(seen), seen) for sub_id in submission_ids
            for seen in [found.get(sub_id, missing)]}


def ended(seen: dict[str, Any]) -> bool:
    """Whether an evaluation's state is final (it will not change again, unless new judgments re-evaluate it)."""
    return seen["state"] in FINAL_STATES
