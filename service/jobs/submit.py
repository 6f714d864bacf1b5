"""Creating evaluation and meta-evaluation jobs: check the request against the catalogue and the caller's
runs, store the job, then publish it -- the job is durable before the API answers 202, whatever happens to the
broker."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from evalserve.service.access.task_runs import organises_run
from evalserve.service.core.engine_errors import refusal_of
from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.core.state import ServiceState
from evalserve.service.inputs.uploads import check_runs, store_runs
from evalserve.service.jobs import callbacks
from evalserve.service.jobs.kinds import EvaluationRequest, JobKindName, MetaRequest
from evalserve.service.jobs.lifecycle import create_job
from evalserve.service.store.models import Collection, Job, JobState, RunRecord, new_id
from evalserve.service.webhooks import targets as webhook_targets
from evaluation.drop_in.trec_eval import expand_request
from evaluation.measures.registry import default_registry
from evaluation.problems import EvaluationError, MeasureError


def canonical_measures(names: list[str]) -> list[str]:
    """Canonical names (duplicates dropped), or a 422 naming every bad one."""
    return list(dict.fromkeys(default_registry().parse(n).name for n in requested_measures(names)))


def requested_measures(names: list[str]) -> list[str]:
    """The names as requested (trec_eval lists such as ``P.5,10`` split, trec_eval nicknames such as ``all_trec``
    and bare families such as ``P`` expanded (``evaluation.drop_in.trec_eval.expand_request``), repeats dropped):
    results are keyed by them; or a 422 naming every bad one."""
    registry = default_registry()
    out: list[str] = []
    problems = []
    for name in names:
        for piece in expand_request(name):
            try:
                registry.parse(piece)
            except MeasureError as exc:
                problems.append({"field": "measures", "code": ProblemCode.INVALID_MEASURE, "message": str(exc),
                                 "severity": "error"})
                continue
            if piece not in out:
                out.append(piece)
    if problems:
        raise ServiceError(422, ProblemCode.INVALID_MEASURE, "; ".join(p["message"] for p in problems), problems)
    return out


def _evaluated_as(names: list[str], evaluated: list[str]) -> tuple[list[str], list[str]]:
    """Each requested name as the evaluation job keyed it (the same spelling, or another spelling of the same
    measure), and the names it has no results for."""
    registry = default_registry()
    by_canonical = {registry.parse(e).name: e for e in reversed(evaluated)}
    found, missing = [], []
    for name in names:
        key = name if name in evaluated else by_canonical.get(registry.parse(name).name)
        if key is None:
            missing.append(name)
        elif key not in found:
            found.append(key)
    return found, missing


def _collection_with_runs(s: Session, collection_id: str, run_ids: list[str], owner_id: str,
                          admin: bool) -> Collection:
    """The collection, after checking that every run exists, is the caller's (or was submitted to a task the caller
    organises) and belongs to it."""
    collection = s.get(Collection, collection_id)
    if collection is None or (collection.hidden and not admin and collection.owner_id != owner_id):
        raise ServiceError(404, ProblemCode.NOT_FOUND, f"no collection {collection_id}")
    for run_id in run_ids:
        run = s.get(RunRecord, run_id)
        if run is None or (not admin and run.owner_id != owner_id and not organises_run(s, run_id, owner_id)):
            raise ServiceError(404, ProblemCode.NOT_FOUND, f"no run {run_id}")
        if run.collection_id != collection.id:
            raise ServiceError(422, ProblemCode.RUN_NOT_IN_COLLECTION,
                             f"run {run_id} was uploaded for collection {run.collection_id}, not {collection.id}")
    return collection


def _callback(st: ServiceState, body: dict[str, Any]) -> dict[str, Any]:
    """The job's callback columns for the request's ``callback_url`` (none without one), or a 422 for a URL
    webhooks could not be sent to."""
    url = body.get("callback_url")
    if not url:
        return {}
    try:
        callbacks.check_url(url, st.settings)
    except webhook_targets.TargetError as exc:
        raise ServiceError(422, exc.code, f"callback URL refused: {exc.reason}") from exc
    return {"callback_url": url, "callback_secret": callbacks.new_secret()}


def submit_evaluation(s: Session, st: ServiceState, owner_id: str, admin: bool, body: dict[str, Any]) -> Job:
    """Add a queued job for the request to the session, to be published once the session's unit of work is
    committed."""
    callback = _callback(st, body)
    measures = requested_measures(body["measures"])
    job = _store_evaluation(s, owner_id, admin, body, measures, callback)
    st.queue.publish_after_commit(s, job.id)
    return job


def _store_evaluation(s: Session, owner_id: str, admin: bool, body: dict[str, Any], measures: list[str],
                      callback: dict[str, Any]) -> Job:
    """Add the queued evaluation job of the request to the session (the caller commits, then publishes)."""
    run_ids = list(dict.fromkeys(body["runs"]))
    collection = _collection_with_runs(s, body["collection"], run_ids, owner_id, admin)
    request = EvaluationRequest(tuple(run_ids), tuple(measures), body["ties"], body["topics"],
                                bool(body["per_topic"]))
    return create_job(s, Job(id=new_id("job"), owner_id=owner_id, collection_id=collection.id,
                             request=request.to_json(), **callback))


def submit_runs(s: Session, st: ServiceState, owner_id: str, admin: bool, form: dict[str, Any],
                measures: list[str], files: list[tuple[str, bytes]]) -> Job:
    """Validate run files, add them and a queued evaluation of them to the session (one transaction), to be
    published once it is committed. A bad measure is reported together with the problems of every run file, in
    one 422, before anything is stored."""
    _check_measures_and_runs(measures, files, st, form["run_format"])
    checked = check_runs(files, st.settings.decode_limits, form["run_format"])
    runs = store_runs(s, st, owner_id, form["collection"], checked, admin=admin)
    s.flush()
    body = {**form, "measures": measures, "runs": [r.id for r in runs]}
    callback = _callback(st, body)
    job = _store_evaluation(s, owner_id, admin, body, requested_measures(measures), callback)
    st.queue.publish_after_commit(s, job.id)
    return job


def _check_measures_and_runs(measures: list[str], files: list[tuple[str, bytes]], st: ServiceState,
                             run_format: str) -> None:
    """A bad measure name is reported together with the problems of every run file, in one 422."""
    try:
        requested_measures(measures)
    except ServiceError as bad_measures:
        try:
            check_runs(files, st.settings.decode_limits, run_format)
        except ServiceError as bad_runs:
            if bad_runs.status != 422:
                raise
            raise ServiceError(422, ProblemCode.INVALID_UPLOAD, f"{bad_runs.detail}; {bad_measures.detail}",
                               bad_runs.problems + bad_measures.problems) from None
        raise


def submit_meta_evaluation(s: Session, st: ServiceState, owner_id: str, admin: bool, body: dict[str, Any]) -> Job:
    """Add a queued meta-evaluation job to the session (published once it is committed): of a succeeded evaluation
    job's results, or of runs to evaluate first."""
    from evaluation.meta.methods import METHODS, options_for  # every method and NumPy: loaded on the first one

    try:
        options = options_for(body["method"], body.get("options") or {})
    except EvaluationError as exc:  # MetaOptionError: invalid-meta-request
        raise refusal_of(exc) from None
    callback = _callback(st, body)
    if body.get("evaluation"):
        if body.get("collection") or body.get("runs"):
            raise ServiceError(422, ProblemCode.CONFLICTING_INPUTS,
                               "give either evaluation, or collection with runs and"
                             " measures, not both")
        source = s.get(Job, body["evaluation"])
        if source is None or source.kind != JobKindName.EVALUATION or (
                not admin and source.owner_id != owner_id):
            raise ServiceError(404, ProblemCode.NOT_FOUND, f"no evaluation job {body['evaluation']}")
        if source.state != JobState.SUCCEEDED:
            raise ServiceError(409, ProblemCode.of_job(source.state), f"evaluation job {source.id} is {source.state};"
                             " meta-evaluate it once it has succeeded")
        evaluated = EvaluationRequest.from_json(source.request)
        for name, own in (("ties", evaluated.ties), ("topics", evaluated.topics)):
            if body.get(name) not in (None, own):  # the job's per-topic results are what they are: never ignored
                raise ServiceError(422, ProblemCode.CONFLICTING_INPUTS, f"evaluation job {source.id} was evaluated"
                                   f" with {name}={own}; {name}={body[name]} applies to collection and runs only")
        wanted = requested_measures(body["measures"]) if body.get("measures") else []
        measures, unknown = _evaluated_as(wanted, list(evaluated.measures))
        if unknown:
            raise ServiceError(422, ProblemCode.MEASURE_MISSING, f"evaluation job {source.id} has no results for"
                             f" {', '.join(unknown)}")
        if METHODS[body["method"]].needs_inputs:  # it evaluates perturbed copies of that job's own inputs
            request = MetaRequest(body["method"], options, runs=evaluated.runs,
                                  measures=tuple(measures or evaluated.measures), ties=evaluated.ties,
                                  topics=evaluated.topics)
        else:
            request = MetaRequest(body["method"], options, evaluation=source.id, measures=tuple(measures))
        job = create_job(s, Job(id=new_id("job"), owner_id=owner_id, collection_id=source.collection_id,
                                kind=JobKindName.META, request=request.to_json(), **callback))
    else:
        if not (body.get("collection") and body.get("runs") and body.get("measures")):
            raise ServiceError(422, ProblemCode.MISSING_INPUTS,
                               "give evaluation (a succeeded evaluation job), or collection,"
                             " runs and measures")
        measures = requested_measures(body["measures"])
        collection = _collection_with_runs(s, body["collection"], body["runs"], owner_id, admin)
        request = MetaRequest(body["method"], options, runs=tuple(dict.fromkeys(body["runs"])),
                              measures=tuple(measures), ties=body.get("ties") or "trec",
                              topics=body.get("topics") or "common")
        job = create_job(s, Job(id=new_id("job"), owner_id=owner_id, collection_id=collection.id,
                                kind=JobKindName.META, request=request.to_json(), **callback))
    st.queue.publish_after_commit(s, job.id)
    return job
