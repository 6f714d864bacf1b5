"""One evaluation job's runs over several workers: the job is cut into parts (contiguous slices of its runs),
each part is a broker message any worker may take, and the part that finishes last merges the parts' outcomes
into exactly the document (or the error) one worker would have produced.

Why a database join rather than a Celery chord: a chord needs a result backend and its callback is lost with
the worker that would have run it; the database is already the durable record of jobs. Parts are rows
(``job_parts``) claimed under leases like jobs, so a killed worker's part is re-run (the sweeper republishes it
once its lease runs out), a duplicated message is harmless, and the merge is taken by one conditional UPDATE of
the job's row: exactly one finisher merges, and if it dies the job's lease runs out and whoever claims the job
again finds every part final and merges. Every part reads the judgments itself (a collection is parsed in tens
of milliseconds, far less than sharing a parsed copy would cost to store and load).

What one worker reports is rebuilt from the parts in their order: result runs, ``meta.inputs`` (judgment files,
then run files), ``meta.warnings`` (judgment and run-reading warnings, the measures' notes on the judgments --
the same in every part, taken once -- then each run's fit warnings), tags; and
for a failed job the same precedence as ``evaluation.pipeline``: reading problems of every file first, then
duplicate run names, then runs with no judged topic (all of them), then the first part's other error.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, cast

from sqlalchemy.exc import OperationalError

from evalserve.service.broker.messages import EVALUATE_PART_TASK
from evalserve.service.broker.messages import publish as publish_message
from evalserve.service.core.config import Settings
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.inputs.collection_files import collection_files
from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.jobrun.kinds import RUNS
from evalserve.service.jobrun.lease import Lease, Stop, worker_name
from evalserve.service.jobrun.outcomes import announce, failure, time_limit_error
from evalserve.service.jobrun.outputs import store_outputs
from evalserve.service.jobrun.stored_runs import StoredRuns
from evalserve.service.jobs import callbacks
from evalserve.service.jobs import lifecycle as jobs
from evalserve.service.jobs import parts as job_parts
from evalserve.service.jobs.kinds import KINDS, JobKind
from evalserve.service.store.models import Collection, JobState
from evaluation.measure_notes import measure_notes
from evaluation.measures.registry import default_registry
from evaluation.pipeline import NothingScored, check_run_names, load_inputs, run_evaluation
from evaluation.problems import InputError, Problem
from evaluation.report import Report
from evaluation.sources import Inputs

log = logging.getLogger(__name__)

def runs_of(kind: JobKind, request: dict[str, Any]) -> tuple[str, ...]:
    """The runs of a job of a kind that splits (``kind.splits``: its parsed request has ``runs``)."""
    parsed: Any = kind.parse(request)
    return tuple(parsed.runs)


def split_into(settings: Settings, n_runs: int) -> int:
    """How many parts a job of ``n_runs`` runs is split into: parts of at least ``EVALSERVE_SPLIT_RUNS`` runs,
    at most ``EVALSERVE_SPLIT_MAX_PARTS`` of them; 1 (not split) when splitting is off or the job is small."""
    if settings.split_runs <= 0:
        return 1
    return max(1, min(settings.split_max_parts, n_runs // settings.split_runs))


def slices(runs: Sequence[str], n_parts: int) -> list[list[str]]:
    """``runs`` cut into ``n_parts`` contiguous slices whose sizes differ by at most one, in order."""
    size, extra = divmod(len(runs), n_parts)
    out, start = [], 0
    for i in range(n_parts):
        stop = start + size + (1 if i < extra else 0)
        out.append(list(runs[start:stop]))
        start = stop
    return out


def coordinate(ctx: WorkerContext, claim: jobs.Claim) -> str:
    """Split a claimed job into parts and publish them (an earlier attempt's parts are reused, and merged at
    once if they are all final); returns what happened."""
    runs = list(runs_of(KINDS[claim.kind], claim.request))
    job_parts.create(ctx.db, claim.job_id, slices(runs, split_into(ctx.settings, len(runs))))
    pending = job_parts.unfinished(ctx.db, claim.job_id)
    if not pending:
        return merge_and_finish(ctx, claim)
    if not job_parts.hand_over(ctx.db, claim, ctx.settings.lease_seconds, len(job_parts.parts(ctx.db, claim.job_id))):
        return "lost"
    publish(ctx, claim.job_id, pending)
    log.info("job %s: split into parts, %d to run", claim.job_id, len(pending))
    return "split"


def publish(ctx: WorkerContext, job_id: str, indexes: list[int]) -> None:
    """Send one message per part; a failed publish is repaired by the sweeper (``job_parts.sweep``)."""
    if ctx.celery is None:
        return
    try:
        for index in indexes:
            publish_message(ctx.celery, EVALUATE_PART_TASK, [job_id, index], queue=ctx.settings.queue, retry=False)
    except Exception as exc:
        log.warning("could not publish the parts of job %s (%s); the sweeper will", job_id, exc)
        return
    job_parts.mark_published(ctx.db, job_id, indexes)


def run_part(ctx: WorkerContext, job_id: str, index: int, time_limit_errors: tuple[type[BaseException], ...] = (),
             limit: Callable[[float], AbstractContextManager[None]] | None = None) -> str:
    """Run part ``index`` of ``job_id`` if this worker can claim it, then merge the job if it was the last;
    returns what happened to the part. ``limit(seconds)``: the time limit to run the part under (the task's:
    ``jobrun.time_limit``), given what is left of the job's (``EVALSERVE_JOB_TIME_LIMIT_SECONDS`` covers every
    part: a part that starts after it has passed fails at once)."""
    settings = ctx.settings
    claim = job_parts.claim(ctx.db, job_id, index, worker_name(), settings.lease_seconds, settings.max_attempts)
    if isinstance(claim, str):
        if claim == "gave-up":
            merge_if_last(ctx, job_id)
        return claim
    left = settings.job_time_limit_seconds - claim.job_seconds()
    if left <= 0:
        state: str = JobState.FAILED
        if not job_parts.finish(ctx.db, claim, state, error={"phase": "other", "detail": time_limit_error(settings)}):
            return "lost"
    else:
        with limit(left) if limit is not None else contextlib.nullcontext():
            state = _run_claimed_part(ctx, claim, time_limit_errors)
        if state not in (JobState.SUCCEEDED, JobState.FAILED):
            return state
    merge_if_last(ctx, job_id)
    return state


def _run_claimed_part(ctx: WorkerContext, claim: job_parts.PartClaim,
                      time_limit_errors: tuple[type[BaseException], ...]) -> str:
    settings, job_id = ctx.settings, claim.job_id
    with Lease(ctx, name=f"{job_id}.{claim.index}", renew=lambda stage, fraction: job_parts.heartbeat(
            ctx.db, claim, settings.lease_seconds, stage, fraction)) as lease:
        try:
            outcome = _evaluate_part(ctx, claim, lease, time_limit_errors)
            state = JobState.FAILED if outcome.get("error") else JobState.SUCCEEDED
            with ctx.db.unit_of_work() as unit:  # the outcome blob and the part's row: one transaction
                sha = ctx.blobs.put(unit.session, json.dumps(outcome, separators=(",", ":")).encode())
                done = job_parts.finish_in(unit.session, claim, state, result_sha256=sha, error=outcome["error"])
            if not done:
                return "lost"
            return state
        except Stop as stop:
            if stop.reason == "cancelled":
                job_parts.cancel_job(ctx.db, job_id)
                callbacks.announce(ctx.db, ctx.celery, job_id, ctx.blobs, ctx.callback_viewer)
                return "cancelled"
            return "lost"
        except OperationalError:
            job_parts.release(ctx.db, claim)
            raise  # the task retries with backoff
        except Exception as exc:  # over the time limit, or a bug: the part fails and the job with it
            error = {"phase": "other", "detail": failure(exc, settings, time_limit_errors, job_id)}
            return "failed" if job_parts.finish(ctx.db, claim, JobState.FAILED, error=error) else "lost"


def merge_if_last(ctx: WorkerContext, job_id: str) -> str | None:
    """Merge the job if every part is final and no other worker is merging it."""
    claim = job_parts.take_for_merge(ctx.db, job_id, worker_name(), ctx.settings.lease_seconds)
    return merge_and_finish(ctx, claim) if claim is not None else None


def merge_and_finish(ctx: WorkerContext, claim: jobs.Claim) -> str:
    """Merge the parts' outcomes and record the job's: its result document, or the error one worker would give."""
    with Lease(ctx, claim):
        try:
            with ctx.db.session() as s:
                outcomes = [json.loads(ctx.blobs.get(s, part.result_sha256)) if part.result_sha256 else
                            _failed(part.error or {"phase": "other", "detail": jobs.error_detail(
                                ProblemCode.INTERNAL_ERROR, f"part {part.index + 1} stopped without a result")})
                            for part in job_parts.parts(ctx.db, claim.job_id)]
            merged = merge(outcomes)
            if "error" in merged:
                state, done = JobState.FAILED, jobs.finish(ctx.db, claim, JobState.FAILED, error=merged["error"])
            else:
                kind = KINDS[claim.kind]
                outputs = store_outputs(ctx, kind, RUNS[kind.name].outputs, merged["document"],
                                        kind.parse(claim.request))
                with ctx.db.unit_of_work() as unit:  # the merged result, its outputs and the outcome: one transaction
                    sha = ctx.blobs.put(unit.session, json.dumps(merged["document"], separators=(",", ":")).encode())
                    state, done = JobState.SUCCEEDED, jobs.finish_in(unit.session, claim, JobState.SUCCEEDED,
                                                                     result_sha256=sha, outputs=outputs)
        except OperationalError:
            jobs.release(ctx.db, claim, "database unavailable")
            raise
        except Exception as exc:  # a bug: fail the job rather than merge it again and again
            state, done = JobState.FAILED, jobs.finish(ctx.db, claim, JobState.FAILED, error=failure(exc, ctx.settings))
    if not done:
        return "lost"
    announce(ctx, claim.job_id)
    # its callback_url, as one worker sends it
    callbacks.announce(ctx.db, ctx.celery, claim.job_id, ctx.blobs, ctx.callback_viewer)
    return state


def _failed(error: dict[str, Any] | None) -> dict[str, Any]:
    """A part's outcome before it has read anything (with ``error``: of a part that failed that early)."""
    return {"judgments": {"files": [], "problems": [], "omitted": 0},
            "runs": {"files": [], "names": [], "problems": [], "omitted": 0},
            "fit_warnings": [], "document": None, "error": error}


# --- one part ---------------------------------------------------------------------------------------------------

def _evaluate_part(ctx: WorkerContext, claim: job_parts.PartClaim, lease: Lease,
                   time_limit_errors: tuple[type[BaseException], ...]) -> dict[str, Any]:
    """A part's outcome: what it read (files and problems) and either its partial report or its error."""
    request: Any = KINDS[claim.kind].parse(claim.request)  # a kind that splits: runs, measures, ties, topics
    outcome = _failed(None)
    lease.progress("reading judgments", 0.0)
    with ctx.db.session() as s:
        collection = s.get(Collection, claim.collection_id)
        assert collection is not None
        files = collection_files(s, ctx.blobs, collection, ctx.settings.decode_limits)
    try:
        judged = load_inputs(files.qrels, [], qrels_format=files.qrels_format, intent_weights=files.intent_weights,
                             side=files.side)
    except InputError as exc:
        outcome["judgments"].update(problems=[p.as_dict() for p in exc.problems], omitted=exc.omitted)
        outcome["error"] = {"phase": "read", "detail": failure(exc, ctx.settings)}
        return outcome
    outcome["judgments"].update(files=list(judged.files.items()), problems=[p.as_dict() for p in judged.warnings])
    started = time.monotonic()
    runs = []
    read = outcome["runs"]
    stored = StoredRuns(ctx, claim.runs)
    for i, blob in enumerate(stored):
        lease.progress(f"reading run {i + 1} of {len(claim.runs)}", 0.5 * i / len(claim.runs))
        try:  # one run at a time, so that each run's problems are known apart from the judgments'
            one = load_inputs(judged.qrels, [blob], intent_weights=judged.intent_weights,
                              side=cast(Any, judged.side.values))
        except InputError as exc:
            read["problems"] += [p.as_dict() for p in exc.problems]
            read["omitted"] += exc.omitted
            continue
        runs += one.runs
        read["files"].append(stored.inputs[i])  # also for a run parsed from a file (load_inputs has no hash)
        read["names"] += [r.name for r in one.runs]
        read["problems"] += [p.as_dict() for p in one.warnings]
    if any(p["severity"] == "error" for p in read["problems"]) or read["omitted"]:
        problems = [_problem(p) for p in [*outcome["judgments"]["problems"], *read["problems"]]]
        outcome["error"] = {"phase": "read", "detail": failure(InputError(problems, read["omitted"]), ctx.settings)}
        return outcome
    inputs = Inputs(judged.qrels, runs, judged.intent_weights, judged.side)
    try:
        report = run_evaluation(inputs, list(request.measures), ties=request.ties, topics=request.topics,
                                progress=lambda stage, f: lease.progress(stage, 0.5 + 0.5 * f))
    except Stop:
        raise
    except OperationalError:
        raise
    except Exception as exc:
        phase = "scored" if isinstance(exc, NothingScored) else "other"
        unscored = [p.as_dict() for p in exc.problems] if isinstance(exc, NothingScored) else []
        outcome["error"] = {"phase": phase, "problems": unscored,
                            "detail": failure(exc, ctx.settings, time_limit_errors, claim.job_id)}
        return outcome
    outcome["fit_warnings"] = [w.as_dict() for s in report.scores for w in s.warnings]
    # the measures' notes on the judgments (``evaluation.measure_notes``): the same in every part, merged once
    notes = measure_notes(inputs.qrels, default_registry().parse_all(list(request.measures)))
    outcome["measure_warnings"] = [w.as_dict() for w in notes]
    outcome["document"] = Report(report.scores, report.measures, report.ties, report.topics, {}, (),
                                 report.canonical, report.tags).as_json(per_topic=True)
    log.info("job %s part %d: %d runs in %.2fs", claim.job_id, claim.index, len(runs), time.monotonic() - started)
    return outcome


# --- merging ----------------------------------------------------------------------------------------------------

def merge(outcomes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The parts' outcomes (in order) as one worker's: ``{"document": ...}`` or ``{"error": ...}``."""
    judgments = outcomes[0]["judgments"]
    read = [*judgments["problems"], *(p for o in outcomes for p in o["runs"]["problems"])]
    omitted = judgments["omitted"] + sum(o["runs"]["omitted"] for o in outcomes)
    if omitted or any(p["severity"] == "error" for p in read):
        return {"error": failure(InputError([_problem(p) for p in read], omitted), _NO_SETTINGS)}
    try:
        check_run_names(cast(Any, [_Named(n) for o in outcomes for n in o["runs"]["names"]]))
    except InputError as exc:
        return {"error": failure(exc, _NO_SETTINGS)}
    unscored = [p for o in outcomes if (o.get("error") or {}).get("phase") == "scored" for p in o["error"]["problems"]]
    if unscored:
        return {"error": failure(NothingScored([_problem(p) for p in unscored]), _NO_SETTINGS)}
    for o in outcomes:
        if o.get("error"):
            return {"error": o["error"]["detail"]}
    documents = [o["document"] for o in outcomes]
    first = documents[0]
    inputs: dict[str, str] = {}
    for label, sha in [*judgments["files"], *(pair for o in outcomes for pair in o["runs"]["files"])]:
        inputs[label] = sha
    warnings = [p for p in read if p["severity"] == "warning"] + outcomes[0].get("measure_warnings", []) \
        + [w for o in outcomes for w in o["fit_warnings"]]
    meta = dict(first["meta"])
    meta["inputs"] = inputs
    meta["warnings"] = warnings
    meta["tags"] = {run: tag for d in documents for run, tag in d["meta"]["tags"].items()}
    return {"document": {"meta": meta, "runs": {run: v for d in documents for run, v in d["runs"].items()}}}


class _Named:
    """A run as ``check_run_names`` sees it: its name."""

    def __init__(self, name: str) -> None:
        self.name = name


def _problem(d: dict[str, Any]) -> Problem:
    return Problem(d["code"], d["message"], d["severity"], d.get("line"), d.get("column"), d.get("source"),
                   d.get("end_line"))


class _NoSettings:
    """``failure`` reads settings only for the time limit, which merging never reports anew."""

    job_time_limit_seconds = 0.0


_NO_SETTINGS: Any = _NoSettings()
