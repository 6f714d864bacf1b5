"""Job life cycle in the database -- the one place where a job changes state.

Every transition is a conditional UPDATE, so concurrent API processes, workers and sweepers never step on each
other: a job is *claimed* by one worker at a time under a time-limited lease that the worker renews while it
works; a job whose lease ran out (its worker died) can be claimed again; results are written only by the lease
holder. The broker message is just a wake-up call: publishing it twice is harmless.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.orm import Session

from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.jobs.kinds import JobKindName
from evalserve.service.store.db import Database
from evalserve.service.store.models import FINAL_STATES, Job, JobOutput, JobState, utcnow


@dataclass(frozen=True)
class Claim:
    """A worker's hold on a job: what to run and which attempt this is."""

    job_id: str
    worker: str
    attempt: int
    collection_id: str
    request: dict[str, Any]
    kind: str = JobKindName.EVALUATION


def create_job(db_session: Any, job: Job) -> Job:
    """Add a new queued job (committed by the caller before the job is published or announced)."""
    job.state, job.stage, job.progress = JobState.QUEUED, "queued", 0.0
    db_session.add(job)
    db_session.flush()  # its defaults (created_at, ...) are set: the caller answers with it before committing
    return job


def mark_published(db: Database, job_id: str) -> None:
    """Record that a wake-up message for the job went to the broker (the sweeper re-sends old ones)."""
    with db.session() as s:
        s.execute(_update_jobs().where(Job.id == job_id, Job.state == JobState.QUEUED).values(enqueued_at=utcnow()))


def claim(db: Database, job_id: str, worker: str, lease_seconds: float, max_attempts: int) -> Claim | None:
    """Take the job if it is queued, or running under an expired lease; None if someone else has it or it is
    finished. A job whose workers died ``max_attempts`` times is failed instead of run again."""
    now = utcnow()
    claimable = or_(Job.state == JobState.QUEUED, and_(Job.state == JobState.RUNNING, Job.lease_expires_at < now))
    with db.session() as s:
        job = s.get(Job, job_id)
        if job is None or job.state in FINAL_STATES:
            return None
        if job.cancel_requested:
            s.execute(_update_jobs().where(Job.id == job_id, claimable).values(
                state=JobState.CANCELLED, stage="cancelled", finished_at=now, updated_at=now))
            return None
        if job.attempts >= max_attempts:
            s.execute(_update_jobs().where(Job.id == job_id, claimable).values(
                state=JobState.FAILED, stage="failed", finished_at=now, updated_at=now,
                error=_error(ProblemCode.WORKER_LOST, f"the job was started {job.attempts} times and its worker stopped"
                             " each time (killed, out of memory or over its time limit)")))
            return None
        taken = s.execute(
            _update_jobs()
            .where(Job.id == job_id, claimable)
            .values(state=JobState.RUNNING, stage="starting", lease_owner=worker, attempts=Job.attempts + 1,
                    lease_expires_at=now + timedelta(seconds=lease_seconds),
                    started_at=job.started_at or now, updated_at=now)
        )
        if _changed(taken) != 1:
            return None
        return Claim(job_id, worker, job.attempts + 1, job.collection_id, dict(job.request), job.kind)


def heartbeat(db: Database, claim_: Claim, lease_seconds: float, stage: str | None = None,
              progress: float | None = None) -> tuple[bool, bool]:
    """Renew the lease (and record progress); returns (still ours, cancel requested)."""
    now = utcnow()
    values: dict[str, Any] = {"lease_expires_at": now + timedelta(seconds=lease_seconds), "updated_at": now}
    if stage is not None:
        values["stage"] = stage[:300]
    if progress is not None:
        values["progress"] = float(progress)
    with db.session() as s:
        done = s.execute(_update_jobs().where(_held(claim_)).values(**values))
        cancel = s.execute(select(Job.cancel_requested).where(Job.id == claim_.job_id)).scalar()
    return _changed(done) == 1, bool(cancel)


def finish(db: Database, claim_: Claim, state: str, *, result_sha256: str | None = None,
           error: dict[str, Any] | None = None, outputs: Mapping[str, str] | None = None) -> bool:
    """Record the outcome; only the lease holder can, and only once."""
    with db.session() as s:
        return finish_in(s, claim_, state, result_sha256=result_sha256, error=error, outputs=outputs)


def finish_in(s: Session, claim_: Claim, state: str, *, result_sha256: str | None = None,
              error: dict[str, Any] | None = None, outputs: Mapping[str, str] | None = None) -> bool:
    """``finish`` in the caller's session (a worker's last unit of work for a claim: the result blob, the blobs
    built from it and the outcome committed together). ``outputs``: those blobs (name -> sha256, ``JobOutput``),
    recorded only if the outcome is, so a succeeded job always has them."""
    assert state in FINAL_STATES
    now = utcnow()
    values: dict[str, Any] = {"state": state, "stage": state, "finished_at": now, "updated_at": now,
                              "lease_expires_at": None, "result_sha256": result_sha256, "error": error}
    if state == JobState.SUCCEEDED:
        values["progress"] = 1.0
    done = s.execute(_update_jobs().where(_held(claim_)).values(**values))
    if _changed(done) == 1 and outputs:
        s.add_all(JobOutput(job_id=claim_.job_id, name=name, blob_sha256=sha) for name, sha in outputs.items())
    return _changed(done) == 1


def release(db: Database, claim_: Claim, why: str) -> None:
    """Give a job back to the queue (a transient fault): another attempt may claim it at once."""
    now = utcnow()
    with db.session() as s:
        s.execute(_update_jobs().where(_held(claim_)).values(
            state=JobState.QUEUED, stage=f"queued again: {why}"[:300], lease_owner=None, lease_expires_at=None,
            enqueued_at=None, updated_at=now))


def request_cancel(db: Database, job_id: str) -> str | None:
    """Cancel a queued job at once; ask a running one to stop (its worker checks between steps). Returns the
    state after the request, or None when the job does not exist."""
    with db.session() as s:
        return cancel_in(s, job_id)


def cancel_in(session: Session, job_id: str) -> str | None:
    """``request_cancel`` in the caller's session (committed by the caller)."""
    now = utcnow()
    session.execute(_update_jobs().where(Job.id == job_id, Job.state == JobState.QUEUED).values(
        state=JobState.CANCELLED, stage="cancelled", cancel_requested=True, finished_at=now, updated_at=now))
    session.execute(_update_jobs().where(Job.id == job_id, Job.state == JobState.RUNNING).values(
        cancel_requested=True, stage="cancelling", updated_at=now))
    state: str | None = session.execute(select(Job.state).where(Job.id == job_id)).scalar()
    return state


def jobs_to_republish(db: Database, requeue_after_seconds: float, limit: int = 500) -> list[str]:
    """Jobs whose wake-up message may be lost: queued and never published or published long ago, or running
    under an expired lease (their worker died). Their ``enqueued_at`` is bumped so other sweepers skip them."""
    now = utcnow()
    stale_before: datetime = now - timedelta(seconds=requeue_after_seconds)
    lost = or_(
        and_(Job.state == JobState.QUEUED, or_(Job.enqueued_at.is_(None), Job.enqueued_at < stale_before)),
        # not yet re-published since the lease ran out (or re-published long ago and still not picked up)
        and_(Job.state == JobState.RUNNING, Job.lease_expires_at < now,
             or_(Job.enqueued_at.is_(None), Job.enqueued_at < Job.lease_expires_at, Job.enqueued_at < stale_before)),
    )
    ids: list[str] = []
    with db.session() as s:
        for job_id in s.execute(select(Job.id).where(lost).order_by(Job.created_at).limit(limit)).scalars():
            bumped = s.execute(_update_jobs().where(Job.id == job_id, lost).values(enqueued_at=now))
            if _changed(bumped) == 1:
                ids.append(job_id)
    return ids


def _update_jobs() -> Any:
    """UPDATE jobs, without synchronising loaded objects in Python (the WHERE clause is the database's business;
    SQLite hands back naive datetimes that Python could not compare with aware ones)."""
    return update(Job).execution_options(synchronize_session=False)


def _changed(result: Any) -> int:
    """Rows an UPDATE changed (``Result`` is typed without ``rowcount``; UPDATEs return a ``CursorResult``)."""
    return int(result.rowcount)


def _held(claim_: Claim) -> Any:
    return and_(Job.id == claim_.job_id, Job.state == JobState.RUNNING, Job.lease_owner == claim_.worker)


def _error(code: ProblemCode, message: str, problems: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"code": code, "message": message, "problems": problems or []}


def error_detail(code: ProblemCode, message: str, problems: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The ``error`` object of a failed job: a code, a message and, for input problems, the problem list."""
    return _error(code, message, problems)
