"""``POST /v1/tasks/{task_id}/finalise``: the organisers freeze a task. The final leaderboard (the last phase, or
the open one, at the current judgments and each participant's chosen or latest submission) is computed and stored
with its content hash, the evalserve version, the judgments' SHA-256 and the measures' definitions; the record is
kept on the task (``tasks.final``), every other board is recomputed by a worker with its ``final`` block, and
every write on the task is refused from then on (``final.refuse_if_final``). Idempotent: finalising a final task
answers the same record. Flask-free."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.core.state import ServiceState
from evalserve.service.shared_tasks.access import organised_task
from evalserve.service.shared_tasks.final import judgments_sha256, measure_definitions
from evalserve.service.shared_tasks.leaderboard import candidates, phase_named
from evalserve.service.shared_tasks.stored import StoredBoard, refresh_board, request_refresh
from evalserve.service.store.models import Job, JobState, Submission, SubmissionEvaluation, Task, Token, utcnow
from evaluation.version import engine_version

#: the final leaderboard shows each participant's chosen (or latest) submission
FINAL_SELECTION = "latest"
#: who may download a final task's per-topic export (``exports.may_export``): its organisers, or anyone who sees it
PER_TOPIC_ORGANISERS, PER_TOPIC_PUBLIC = "organisers", "public"
#: seconds a finaliser is asked to wait while submissions are still being evaluated
PENDING_RETRY_AFTER = 1


def finalise(s: Session, st: ServiceState, token: Token, task_id: str, *,
             per_topic: str = PER_TOPIC_ORGANISERS) -> dict[str, Any]:
    """Freeze the task and answer its final record (organisers; the same record again once final). 409
    ``evaluations-pending`` while any submission is still being evaluated: the final results wait for them.
    ``per_topic`` (``organisers`` or ``public``) says who may download the per-topic export from then on."""
    organised_task(s, task_id, token)
    task = s.get(Task, task_id, with_for_update=True)  # submissions in flight finish first; one finaliser at once
    assert task is not None
    if task.finalised_at is not None and task.final is not None:
        return dict(task.final)
    pending = s.execute(select(func.count()).select_from(SubmissionEvaluation)
                        .join(Submission, Submission.id == SubmissionEvaluation.submission_id)
                        .join(Job, Job.id == SubmissionEvaluation.job_id)
                        .where(Submission.task_id == task.id, SubmissionEvaluation.version == task.version,
                               Job.state.in_([JobState.QUEUED, JobState.RUNNING]))).scalar() or 0
    if pending:
        raise ServiceError(409, ProblemCode.EVALUATIONS_PENDING,
                           f"{pending} submission(s) of task {task.id} are still being evaluated; finalise once"
                           " they are done", headers={"Retry-After": str(PENDING_RETRY_AFTER)})
    at = utcnow()
    phase = phase_named(s, task, None, at)
    task.finalised_at = at
    task.final = {"at": at.isoformat(), "evalserve": engine_version(),
                  "judgments_sha256": judgments_sha256(s, task, task.version),
                  "measures": measure_definitions(task.measures), "per_topic": per_topic}
    task.updated_at = at
    request_refresh(s, st.queue.celery, st.settings.queue, task.id)  # every board of the task says final
    cands = candidates(s, task, phase, task.version) if phase is not None else []
    row = refresh_board(s, st.blobs, task, phase, task.version, FINAL_SELECTION, cands)  # the final one, now
    stored = StoredBoard(row.blob_sha256, 0, at)
    document = stored.document(stored.payload(s, st.blobs))
    final = document["final"]
    query = {"version": task.version, "selection": FINAL_SELECTION, **({"phase": phase.name} if phase else {})}
    task.final = {**task.final, "hash": final["hash"], "phase": None if phase is None else phase.name,
                  "version": task.version, "selection": FINAL_SELECTION, "rows": len(document["rows"]),
                  "ranked": sum(r["rank"] is not None for r in document["rows"]),
                  "leaderboard": f"/v1/tasks/{task.id}/leaderboard?{urlencode(query)}"}
    s.flush()
    return dict(task.final)

