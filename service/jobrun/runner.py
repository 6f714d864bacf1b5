"""Running one evaluation job: claim it, load its inputs from the blob store, call the engine with progress
and cancellation, store the result document, record the outcome. Celery-free, so tests can call it directly."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy.exc import OperationalError

from evalserve.service.inputs.collection_files import collection_files
from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.jobrun.lease import Lease, Stop, worker_name
from evalserve.service.jobrun.outcomes import announce, failure
from evalserve.service.jobrun.split import coordinate, split_into
from evalserve.service.jobrun.stored_runs import StoredRuns, input_files
from evalserve.service.jobs import callbacks
from evalserve.service.jobs import lifecycle as jobs
from evalserve.service.jobs.kinds import KINDS, EvaluationRequest, JobKindName, MetaRequest
from evalserve.service.store.models import Collection, Job, JobState
from evaluation.meta.methods import run_method
from evaluation.meta.table import ScoreTable
from evaluation.pipeline import load_inputs, run_evaluation
from evaluation.report import Report
from evaluation.sources import Inputs, Sources

log = logging.getLogger(__name__)


def run_job(ctx: WorkerContext, job_id: str, time_limit_errors: tuple[type[BaseException], ...] = ()) -> str:
    """Run the job if this worker can claim it, then tell the listeners it ended; returns what happened
    (for logs and tests). ``time_limit_errors``: the exceptions the task runner raises when a job overruns its
    time limit."""
    outcome = _run_claimed(ctx, job_id, time_limit_errors)
    if outcome in ("succeeded", "failed"):
        announce(ctx, job_id)
    if outcome != "lost":  # ended here, or by ``claim`` (cancelled, out of attempts), or already: once per job
        callbacks.announce(ctx.db, ctx.celery, job_id)
    return outcome


def _run_claimed(ctx: WorkerContext, job_id: str, time_limit_errors: tuple[type[BaseException], ...]) -> str:
    settings = ctx.settings
    claim = jobs.claim(ctx.db, job_id, worker_name(), settings.lease_seconds, settings.max_attempts)
    if claim is None:
        return "skipped"
    kind = KINDS[claim.kind]
    if kind.splits and split_into(settings, len(kind.parse(claim.request).fields()["runs"])) > 1:
        return coordinate(ctx, claim)
    with Lease(ctx, claim) as lease:
        try:
            lease.progress("reading inputs", 0.0)
            document = RUNS[kind.name](ctx, claim, lease)
            lease.progress("storing results", 1.0)
            with ctx.db.unit_of_work() as unit:  # the result and the outcome: one transaction
                sha = ctx.blobs.put(unit.session, json.dumps(document, separators=(",", ":")).encode())
                done = jobs.finish_in(unit.session, claim, JobState.SUCCEEDED, result_sha256=sha)
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


def evaluation_document(ctx: WorkerContext, claim: jobs.Claim, lease: Lease) -> dict[str, Any]:
    """An evaluation job's result document: the report of its runs, per topic (``job_kinds``)."""
    request = EvaluationRequest.from_json(claim.request)
    return _run_evaluation(ctx, claim, lease, request)[1].as_json(per_topic=True)


def meta_document(ctx: WorkerContext, claim: jobs.Claim, lease: Lease) -> dict[str, Any]:
    """A meta-evaluation job's result document: its method's output on the scores (``job_kinds``)."""
    request = MetaRequest.from_json(claim.request)
    table, sources = _score_table(ctx, claim, lease, request)
    lease.progress(f"meta-evaluating: {request.method}", 0.0)
    return run_method(request.method, table, dict(request.options), progress=lease.progress, sources=sources)


def _score_table(ctx: WorkerContext, claim: jobs.Claim, lease: Lease,
                 request: MetaRequest) -> tuple[ScoreTable, Sources | None]:
    """Per-topic scores to meta-evaluate: an evaluation job's stored results, or the runs evaluated now (with the
    inputs they were evaluated from, which the methods that evaluate perturbed inputs read)."""
    if request.evaluation:
        with ctx.db.session() as s:
            source = s.get(Job, request.evaluation)
            assert source is not None and source.result_sha256 is not None
            document = json.loads(ctx.blobs.get(s, source.result_sha256))
        return ScoreTable.from_document(document, list(request.measures) or None), None
    inputs, report = _run_evaluation(ctx, claim, lease, request)
    return ScoreTable.from_run_scores(report.scores), Sources.of(inputs, ties=request.ties, topics=request.topics)


def _run_evaluation(ctx: WorkerContext, claim: jobs.Claim, lease: Lease,
                    request: EvaluationRequest | MetaRequest) -> tuple[Inputs, Report]:
    """The stored inputs, read, and their evaluation."""
    with ctx.db.session() as s:
        collection = s.get(Collection, claim.collection_id)
        assert collection is not None
        files = collection_files(s, ctx.blobs, collection, ctx.settings.decode_limits)
    runs = StoredRuns(ctx, list(request.runs))  # read one at a time, as load_inputs reaches each
    started = time.monotonic()
    # reading the runs is the first half of the work, evaluating them the second
    inputs = load_inputs(files.qrels, runs, qrels_format=files.qrels_format, intent_weights=files.intent_weights,
                         side=files.side, progress=lambda stage, f: lease.progress(stage, 0.5 * f))
    inputs.files = input_files(files, runs)  # runs parsed from a file are not hashed by load_inputs
    report = run_evaluation(inputs, list(request.measures), ties=request.ties, topics=request.topics,
                            progress=lambda stage, f: lease.progress(stage, 0.5 + 0.5 * f))
    log.info("job %s: %d runs in %.2fs", claim.job_id, len(runs), time.monotonic() - started)
    return inputs, report


#: the function that runs each job kind (``jobs.kinds``): (ctx, claim, lease) -> the result document
RUNS: dict[str, Callable[[WorkerContext, jobs.Claim, Lease], dict[str, Any]]] = {
    JobKindName.EVALUATION: evaluation_document,
    JobKindName.META: meta_document,
}
