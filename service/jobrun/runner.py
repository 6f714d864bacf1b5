"""Running one job: claim it, run its kind (``jobrun.kinds.RUNS``: load its inputs from the blob store, call the
engine with progress and cancellation), store the result document and the outputs built from it (report content,
plots), record the outcome. Celery-free, so tests can call it directly."""

from __future__ import annotations

import json
import logging

from sqlalchemy.exc import OperationalError

from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.jobrun.kinds import RUNS
from evalserve.service.jobrun.lease import Lease, Stop, worker_name
from evalserve.service.jobrun.outcomes import announce, failure
from evalserve.service.jobrun.outputs import store_outputs
from evalserve.service.jobrun.split import coordinate, runs_of, split_into
from evalserve.service.jobs import callbacks
from evalserve.service.jobs import lifecycle as jobs
from evalserve.service.jobs.kinds import KINDS
from evalserve.service.store.models import JobState

log = logging.getLogger(__name__)


def run_job(ctx: WorkerContext, job_id: str, time_limit_errors: tuple[type[BaseException], ...] = ()) -> str:
    """Run the job if this worker can claim it, then tell the listeners it ended; returns what happened
    (for logs and tests). ``time_limit_errors``: the exceptions the task runner raises when a job overruns its
    time limit."""
    outcome = _run_claimed(ctx, job_id, time_limit_errors)
    if outcome in ("succeeded", "failed"):
        announce(ctx, job_id)
    if outcome != "lost":  # ended here, or by ``claim`` (cancelled, out of attempts), or already: once per job
        callbacks.announce(ctx.db, ctx.celery, job_id, ctx.blobs, ctx.callback_viewer)
    return outcome


def _run_claimed(ctx: WorkerContext, job_id: str, time_limit_errors: tuple[type[BaseException], ...]) -> str:
    settings = ctx.settings
    claim = jobs.claim(ctx.db, job_id, worker_name(), settings.lease_seconds, settings.max_attempts)
    if claim is None:
        return "skipped"
    kind = KINDS[claim.kind]
    if kind.splits and split_into(settings, len(runs_of(kind, claim.request))) > 1:
        return coordinate(ctx, claim)
    how = RUNS[kind.name]
    with Lease(ctx, claim) as lease:
        try:
            lease.progress("reading inputs", 0.0)
            document = how.run(ctx, claim, lease)
            lease.progress("building reports and plots", 1.0)
            outputs = store_outputs(ctx, kind, how.outputs, document, kind.parse(claim.request))
            lease.progress("storing results", 1.0)
            with ctx.db.unit_of_work() as unit:  # the result, what was built from it and the outcome: one transaction
                sha = ctx.blobs.put(unit.session, json.dumps(document, separators=(",", ":")).encode())
                done = jobs.finish_in(unit.session, claim, JobState.SUCCEEDED, result_sha256=sha, outputs=outputs)
            return "succeeded" if done else "lost"
        except Stop as stop:
            if stop.reason == "cancelled":
                jobs.finish(ctx.db, claim, JobState.CANCELLED)
                return "cancelled"
            return "lost"
        except OperationalError:
            jobs.release(ctx.db, claim, "database unavailable")
            raise  # the task retries with backoff
        except Exception as exc:
            jobs.finish(ctx.db, claim, JobState.FAILED, error=failure(exc, settings, time_limit_errors, job_id))
            return "failed"
