"""The life cycle of a split job's parts in the database (``jobrun.split`` runs them).

A split job is ``running`` with ``lease_owner = "parts:<worker that split it>"``: no single worker holds it.
Each part is claimed, renewed and finished under its own lease, with the same conditional UPDATEs as jobs
(``jobs.lifecycle``), so a redelivered message or a sweeper's republish is harmless. A part's heartbeat also renews
the job's lease and writes the job's progress (the mean over its parts). The part that finds every part final
takes the job back from ``parts:`` (one conditional UPDATE: exactly one worker wins) and merges the results.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.jobs import callbacks
from evalserve.service.jobs import lifecycle as jobs
from evalserve.service.store.db import Database, savepoint
from evalserve.service.store.models import FINAL_STATES, Job, JobPart, JobState, as_utc, utcnow

#: the prefix of a split job's ``lease_owner``
PARTS_OWNER = "parts:"


@dataclass(frozen=True)
class PartClaim:
    """A worker's hold on one part: which runs to evaluate, for which job and request."""

    job_id: str
    index: int
    worker: str
    attempt: int
    runs: list[str]
    collection_id: str
    request: dict[str, Any]
    job_started_at: datetime | None = None
    kind: str = "evaluation"

    def job_seconds(self) -> float:
        """How long the job has been running (its time limit covers all its parts)."""
        started = as_utc(self.job_started_at)
        return 0.0 if started is None else (utcnow() - started).total_seconds()


def create(db: Database, job_id: str, slices: list[list[str]]) -> None:
    """Add the job's parts (queued) unless an earlier attempt already did; slices are taken as they were then."""
    with db.session() as s:
        if s.execute(select(JobPart.index).where(JobPart.job_id == job_id).limit(1)).first() is not None:
            return
        try:
            with savepoint(s):
                s.add_all(JobPart(job_id=job_id, index=i, runs=list(runs), state=JobState.QUEUED, progress=0.0,
                                  attempts=0, workers=[], updated_at=utcnow()) for i, runs in enumerate(slices))
        except IntegrityError:  # another attempt added them at the same moment
            pass


def parts(db: Database, job_id: str) -> list[JobPart]:
    """The job's parts in order (detached copies)."""
    with db.session() as s:
        found = list(s.execute(select(JobPart).where(JobPart.job_id == job_id).order_by(JobPart.index)).scalars())
        s.expunge_all()
    return found


def unfinished(db: Database, job_id: str) -> list[int]:
    with db.session() as s:
        return list(s.execute(select(JobPart.index).where(JobPart.job_id == job_id,
                                                          JobPart.state.not_in(FINAL_STATES))
                              .order_by(JobPart.index)).scalars())


def hand_over(db: Database, claim: jobs.Claim, lease_seconds: float, n_parts: int) -> bool:
    """Turn the claimed job into a split one (its parts now hold it); False if the claim was lost."""
    now = utcnow()
    with db.session() as s:
        done = s.execute(_update(Job).where(_job_held(claim)).values(
            lease_owner=PARTS_OWNER + claim.worker, lease_expires_at=now + timedelta(seconds=lease_seconds),
            stage=f"evaluating in {n_parts} parts", updated_at=now))
    return jobs._changed(done) == 1


def claim(db: Database, job_id: str, index: int, worker: str, lease_seconds: float,
          max_attempts: int) -> PartClaim | str:
    """Take the part if it is queued, or running under an expired lease, and its job is still split; else say
    why not: ``skipped`` (finished, held by another worker, or its job is not split), ``cancelled`` (the job
    was cancelled: the part is too) or ``gave-up`` (its workers died ``max_attempts`` times: the part failed)."""
    now = utcnow()
    claimable = and_(JobPart.job_id == job_id, JobPart.index == index,
                     or_(JobPart.state == JobState.QUEUED,
                         and_(JobPart.state == JobState.RUNNING, JobPart.lease_expires_at < now)))
    with db.session() as s:
        part, job = s.get(JobPart, (job_id, index)), s.get(Job, job_id)
        if part is None or job is None or part.state in FINAL_STATES:
            return "skipped"
        if job.state in FINAL_STATES or job.cancel_requested:
            s.execute(_update(JobPart).where(claimable).values(state=JobState.CANCELLED, lease_expires_at=None,
                                                               updated_at=now))
            return "cancelled"
        if not split_job(job):
            return "skipped"
        if part.attempts >= max_attempts:
            error = {"phase": "other", "detail": jobs.error_detail(
                ProblemCode.WORKER_LOST,
                f"part {index + 1} of the job was started {part.attempts} times and its worker stopped"
                " each time (killed, out of memory or over its time limit)")}
            gave_up = s.execute(_update(JobPart).where(claimable).values(
                state=JobState.FAILED, error=error, lease_expires_at=None, updated_at=now))
            return "gave-up" if jobs._changed(gave_up) == 1 else "skipped"
        taken = s.execute(_update(JobPart).where(claimable).values(
            state=JobState.RUNNING, lease_owner=worker, attempts=JobPart.attempts + 1, workers=[*part.workers, worker],
            lease_expires_at=now + timedelta(seconds=lease_seconds), updated_at=now))
        if jobs._changed(taken) != 1:
            return "skipped"
        return PartClaim(job_id, index, worker, part.attempts + 1, list(part.runs), job.collection_id,
                         dict(job.request), job.started_at, job.kind)


def heartbeat(db: Database, claim_: PartClaim, lease_seconds: float, stage: str | None = None,
              progress: float | None = None) -> tuple[bool, bool]:
    """Renew the part's lease and its job's, record progress (the job's: the mean over its parts); returns
    (still ours, cancel requested)."""
    now = utcnow()
    values: dict[str, Any] = {"lease_expires_at": now + timedelta(seconds=lease_seconds), "updated_at": now}
    if progress is not None:
        values["progress"] = float(progress)
    with db.session() as s:
        done = s.execute(_update(JobPart).where(_part_held(claim_)).values(**values))
        job_values: dict[str, Any] = {"lease_expires_at": values["lease_expires_at"], "updated_at": now}
        if progress is not None:
            job_values.update(_job_progress(s, claim_.job_id))
        s.execute(_update(Job).where(_job_split(claim_.job_id)).values(**job_values))
        cancel = s.execute(select(Job.cancel_requested).where(Job.id == claim_.job_id)).scalar()
    return jobs._changed(done) == 1, bool(cancel)


def finish(db: Database, claim_: PartClaim, state: str, *, result_sha256: str | None = None,
           error: dict[str, Any] | None = None) -> bool:
    """Record the part's outcome (only its lease holder can, once) and the job's progress."""
    with db.session() as s:
        return finish_in(s, claim_, state, result_sha256=result_sha256, error=error)


def finish_in(s: Session, claim_: PartClaim, state: str, *, result_sha256: str | None = None,
              error: dict[str, Any] | None = None) -> bool:
    """``finish`` in the caller's session (the part's outcome blob and its row committed together)."""
    assert state in FINAL_STATES
    now = utcnow()
    done = s.execute(_update(JobPart).where(_part_held(claim_)).values(
        state=state, progress=1.0 if state == JobState.SUCCEEDED else JobPart.progress, lease_expires_at=None,
        result_sha256=result_sha256, error=error, updated_at=now))
    if jobs._changed(done) == 1:
        s.execute(_update(Job).where(_job_split(claim_.job_id)).values(updated_at=now,
                                                                        **_job_progress(s, claim_.job_id)))
    return jobs._changed(done) == 1


def release(db: Database, claim_: PartClaim) -> None:
    """Give the part back to the queue (a transient fault)."""
    with db.session() as s:
        s.execute(_update(JobPart).where(_part_held(claim_)).values(
            state=JobState.QUEUED, lease_owner=None, lease_expires_at=None, enqueued_at=None, updated_at=utcnow()))


def cancel_job(db: Database, job_id: str) -> bool:
    """Cancel a split job whose cancellation was requested (a part saw the request)."""
    now = utcnow()
    with db.session() as s:
        done = s.execute(_update(Job).where(_job_split(job_id), Job.cancel_requested.is_(True)).values(
            state=JobState.CANCELLED, stage="cancelled", finished_at=now, updated_at=now, lease_expires_at=None))
        s.execute(_update(JobPart).where(JobPart.job_id == job_id, JobPart.state.not_in(FINAL_STATES)).values(
            state=JobState.CANCELLED, lease_expires_at=None, updated_at=now))
    cancelled = jobs._changed(done) == 1
    if cancelled:
        callbacks.record(db, job_id)  # sent by the worker that saw the request, or else by the sweeper
    return cancelled


def take_for_merge(db: Database, job_id: str, worker: str, lease_seconds: float) -> jobs.Claim | None:
    """Take a split job back from its parts once every part is final: one caller wins, the others get None."""
    now = utcnow()
    with db.session() as s:
        job = s.get(Job, job_id)
        if job is None or not split_job(job):
            return None
        pending = s.execute(select(JobPart.index).where(JobPart.job_id == job_id,
                                                        JobPart.state.not_in(FINAL_STATES)).limit(1)).first()
        if pending is not None:
            return None
        taken = s.execute(_update(Job).where(_job_split(job_id), Job.lease_owner == job.lease_owner).values(
            lease_owner=worker, lease_expires_at=now + timedelta(seconds=lease_seconds), stage="merging parts",
            updated_at=now))
        if jobs._changed(taken) != 1:
            return None
        return jobs.Claim(job_id, worker, job.attempts, job.collection_id, dict(job.request), job.kind)


def sweep(db: Database, lease_seconds: float, requeue_after_seconds: float,
          limit: int = 500) -> list[tuple[str, int]]:
    """The sweeper's work for split jobs: cancel those whose cancellation was requested, keep alive the lease of
    those with a part still to run (a queued part is not a dead worker), and return the parts to republish --
    queued and not published recently, or running under an expired lease -- bumping their ``enqueued_at``."""
    now = utcnow()
    stale_before: datetime = now - timedelta(seconds=requeue_after_seconds)
    with db.session() as s:
        split_ids = list(s.execute(select(Job.id).where(Job.state == JobState.RUNNING,
                                                        Job.lease_owner.like(PARTS_OWNER + "%"))).scalars())
    republish: list[tuple[str, int]] = []
    for job_id in split_ids:
        with db.session() as s:
            job = s.get(Job, job_id)
            if job is None or not split_job(job):
                continue
        if job.cancel_requested:
            cancel_job(db, job_id)
            continue
        lost = and_(JobPart.job_id == job_id, or_(
            and_(JobPart.state == JobState.QUEUED,
                 or_(JobPart.enqueued_at.is_(None), JobPart.enqueued_at < stale_before)),
            and_(JobPart.state == JobState.RUNNING, JobPart.lease_expires_at < now,
                 or_(JobPart.enqueued_at.is_(None), JobPart.enqueued_at < JobPart.lease_expires_at,
                     JobPart.enqueued_at < stale_before))))
        with db.session() as s:
            if unfinished(db, job_id):
                s.execute(_update(Job).where(_job_split(job_id)).values(
                    lease_expires_at=now + timedelta(seconds=lease_seconds)))
            for index in s.execute(select(JobPart.index).where(lost).order_by(JobPart.index)).scalars():
                bumped = s.execute(_update(JobPart).where(lost, JobPart.index == index).values(enqueued_at=now))
                if jobs._changed(bumped) == 1:
                    republish.append((job_id, index))
        if len(republish) >= limit:
            break
    return republish


def mark_published(db: Database, job_id: str, indexes: list[int]) -> None:
    with db.session() as s:
        s.execute(_update(JobPart).where(JobPart.job_id == job_id, JobPart.index.in_(indexes),
                                         JobPart.state == JobState.QUEUED).values(enqueued_at=utcnow()))


def split_job(job: Job) -> bool:
    """True while the job is held by its parts."""
    return job.state == JobState.RUNNING and (job.lease_owner or "").startswith(PARTS_OWNER)


def _job_progress(s: Any, job_id: str) -> dict[str, Any]:
    rows = s.execute(select(JobPart.state, JobPart.progress).where(JobPart.job_id == job_id)).all()
    done = sum(1 for state, _ in rows if state in FINAL_STATES)
    mean = sum(1.0 if state in FINAL_STATES else float(p or 0.0) for state, p in rows) / max(1, len(rows))
    return {"progress": mean, "stage": f"evaluating in {len(rows)} parts: {done} done"}


def _update(table: Any) -> Any:
    return update(table).execution_options(synchronize_session=False)


def _part_held(claim_: PartClaim) -> Any:
    return and_(JobPart.job_id == claim_.job_id, JobPart.index == claim_.index, JobPart.state == JobState.RUNNING,
                JobPart.lease_owner == claim_.worker)


def _job_held(claim_: jobs.Claim) -> Any:
    return and_(Job.id == claim_.job_id, Job.state == JobState.RUNNING, Job.lease_owner == claim_.worker)


def _job_split(job_id: str) -> Any:
    return and_(Job.id == job_id, Job.state == JobState.RUNNING, Job.lease_owner.like(PARTS_OWNER + "%"))
