"""Running one evaluation job: claim it, load its inputs from the blob store, call the engine with progress
and cancellation, store the result document, record the outcome. Celery-free, so tests can call it directly."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy.exc import OperationalError

from evaluation.meta.methods import run_method
from evaluation.meta.sources import Sources
from evaluation.meta.table import ScoreTable
from evaluation.pipeline import Inputs, NothingScored, load_inputs, run_evaluation
from evaluation.problems import EvaluationError, InputError
from evaluation.report import Report
from service import callbacks, jobs
from service.collection_files import collection_files
from service.config import Settings
from service.job_kinds import KINDS, EvaluationRequest, MetaRequest
from service.jobrun.context import WorkerContext
from service.jobrun.stored_runs import StoredRuns, input_files
from service.models import Collection, Job, JobState
from service.shared_tasks.events import announce_job
from service.webhooks import publish_deliveries

log = logging.getLogger(__name__)


class Stop(Exception):
    """Raised inside the engine's progress callback to abandon a job (cancelled, or the lease was lost)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def worker_name() -> str:
    """Unique per attempt: host, process and a random suffix."""
    import os

    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


#: renews a lease and records progress: (stage, fraction) -> (still ours, cancel requested)
Renew = Callable[[str | None, float | None], tuple[bool, bool]]


class Lease:
    """Keeps a claimed job's (or part's) lease alive from a background thread and relays progress and cancel
    requests; ``renew`` writes the heartbeat (default: the job's, ``service.jobs.heartbeat``)."""

    def __init__(self, ctx: WorkerContext, claim: jobs.Claim | None = None, *, name: str = "",
                 renew: Renew | None = None) -> None:
        self.ctx = ctx
        if renew is None:
            assert claim is not None
            held = claim
            renew = lambda stage, fraction: jobs.heartbeat(  # noqa: E731
                ctx.db, held, ctx.settings.lease_seconds, stage, fraction)
        self.renew = renew
        self.stop_reason: str | None = None
        self._stage: str | None = None
        self._progress: float | None = None
        self._lock = threading.Lock()
        self._done = threading.Event()
        label = name or (claim.job_id if claim is not None else "job")
        self._thread = threading.Thread(target=self._beat, name=f"lease-{label}", daemon=True)

    def __enter__(self) -> Lease:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        self._thread.join(timeout=5)

    def progress(self, stage: str, fraction: float) -> None:
        """The engine's progress callback: note it (written with the next heartbeat) and stop if asked to."""
        with self._lock:
            self._stage, self._progress = stage, fraction
        if self.stop_reason is not None:
            raise Stop(self.stop_reason)

    def _beat(self) -> None:
        # progress and cancel requests travel with the heartbeat: twice a second keeps both prompt
        every = max(0.1, min(0.5, self.ctx.settings.lease_seconds / 4))
        while not self._done.wait(every):
            with self._lock:
                stage, fraction = self._stage, self._progress
                self._stage = self._progress = None
            try:
                ours, cancel = self.renew(stage, fraction)
            except OperationalError as exc:  # database briefly unavailable: try again at the next beat
                log.warning("heartbeat of %s failed: %s", self._thread.name, exc)
                continue
            if not ours:
                self.stop_reason = "lease-lost"
            elif cancel:
                self.stop_reason = "cancelled"


def run_job(ctx: WorkerContext, job_id: str, time_limit_errors: tuple[type[BaseException], ...] = ()) -> str:
    """Run the job if this worker can claim it, then announce a task submission's outcome; returns what happened
    (for logs and tests). ``time_limit_errors``: the exceptions the task runner raises when a job overruns its
    time limit."""
    outcome = _run_claimed(ctx, job_id, time_limit_errors)
    if outcome in ("succeeded", "failed"):
        announce(ctx, job_id)
    if outcome != "lost":  # ended here, or by ``claim`` (cancelled, out of attempts), or already: once per job
        callbacks.announce(ctx.db, ctx.celery, job_id)
    return outcome


def announce(ctx: WorkerContext, job_id: str) -> None:
    """Record and send the webhook events of a finished submission evaluation; never fails the job."""
    try:
        ids = announce_job(ctx.db, ctx.blobs, job_id)
    except Exception:
        log.exception("could not record the events of job %s", job_id)
        return
    if ids and ctx.celery is not None:
        publish_deliveries(ctx.celery, ids)


def _run_claimed(ctx: WorkerContext, job_id: str, time_limit_errors: tuple[type[BaseException], ...]) -> str:
    settings = ctx.settings
    claim = jobs.claim(ctx.db, job_id, worker_name(), settings.lease_seconds, settings.max_attempts)
    if claim is None:
        return "skipped"
    kind = KINDS[claim.kind]
    if kind.splits and split_into(settings, len(kind.parse(claim.request).fields()["runs"])) > 1:
        from service.jobrun.split import coordinate  # the split path imports this module

        return coordinate(ctx, claim)
    with Lease(ctx, claim) as lease:
        try:
            lease.progress("reading inputs", 0.0)
            document = kind.run(ctx, claim, lease)
            with ctx.db.session() as s:
                sha = ctx.blobs.put(s, json.dumps(document, separators=(",", ":")).encode())
            lease.progress("storing results", 1.0)
            return "succeeded" if jobs.finish(ctx.db, claim, JobState.SUCCEEDED, result_sha256=sha) else "lost"
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


def split_into(settings: Settings, n_runs: int) -> int:
    """How many parts a job of ``n_runs`` runs is split into: parts of at least ``EVALSERVE_SPLIT_RUNS`` runs,
    at most ``EVALSERVE_SPLIT_MAX_PARTS`` of them; 1 (not split) when splitting is off or the job is small."""
    if settings.split_runs <= 0:
        return 1
    return max(1, min(settings.split_max_parts, n_runs // settings.split_runs))


def time_limit_error(settings: Settings) -> dict[str, Any]:
    """The ``error`` of a job over its time limit."""
    limit = settings.job_time_limit_seconds
    return jobs.error_detail(
        "time-limit", f"the job ran longer than its limit of {limit:g} s (EVALSERVE_JOB_TIME_LIMIT_SECONDS)")


def failure(exc: BaseException, settings: Settings, time_limit_errors: tuple[type[BaseException], ...] = (),
            job_id: str = "") -> dict[str, Any]:
    """The ``error`` of a job that raised ``exc``: input problems, bad measures or requests, the time limit, or
    (a bug) an internal error."""
    if isinstance(exc, NothingScored):  # the inputs fit no topic: fail rather than store means of 0
        return jobs.error_detail("no-topics-scored", str(exc), [p.as_dict() for p in exc.problems])
    if isinstance(exc, InputError):
        return jobs.error_detail("invalid-input", str(exc), [p.as_dict() for p in exc.problems])
    if isinstance(exc, EvaluationError):  # a bad measure, or another request the engine cannot carry out
        return jobs.error_detail("invalid-measure", str(exc))
    if isinstance(exc, (KeyError, ValueError)):  # a measure or option of a meta-evaluation the results lack
        return jobs.error_detail("invalid-request", str(exc).strip("'\""))
    if isinstance(exc, time_limit_errors):
        return time_limit_error(settings)
    log.error("job %s failed", job_id, exc_info=exc)  # a bug: record it on the job rather than leave it running
    return jobs.error_detail("internal-error", f"{type(exc).__name__}: {exc}")


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
