"""Creating evaluation jobs: check the request against the catalogue and the caller's runs, store the job,
then publish it -- the job is durable before the API answers 202, whatever happens to the broker."""

from __future__ import annotations

from typing import Any

from evaluation.measures.base import MeasureError
from evaluation.measures.registry import default_registry
from service.jobs import create_job
from service.models import Collection, Job, RunRecord, new_id
from service.problems import ApiProblem
from service.state import ServiceState


def canonical_measures(names: list[str]) -> list[str]:
    """Canonical names (duplicates dropped), or a 422 naming every bad one."""
    registry = default_registry()
    out: list[str] = []
    problems = []
    for name in names:
        try:
            canonical = registry.parse(name).name
        except MeasureError as exc:
            problems.append({"field": "measures", "code": "invalid-measure", "message": str(exc), "severity": "error"})
            continue
        if canonical not in out:
            out.append(canonical)
    if problems:
        raise ApiProblem(422, "invalid-measure", "; ".join(p["message"] for p in problems), problems)
    return out


def submit_evaluation(st: ServiceState, owner_id: str, admin: bool, body: dict[str, Any]) -> Job:
    """Store a queued job for the request and publish it."""
    measures = canonical_measures(body["measures"])
    run_ids = list(dict.fromkeys(body["runs"]))
    with st.db.session() as s:
        collection = s.get(Collection, body["collection"])
        if collection is None:
            raise ApiProblem(404, "not-found", f"no collection {body['collection']}")
        for run_id in run_ids:
            run = s.get(RunRecord, run_id)
            if run is None or (not admin and run.owner_id != owner_id):
                raise ApiProblem(404, "not-found", f"no run {run_id}")
            if run.collection_id != collection.id:
                raise ApiProblem(422, "run-not-in-collection",
                                 f"run {run_id} was uploaded for collection {run.collection_id}, not {collection.id}")
        request = {"runs": run_ids, "measures": measures, "ties": body["ties"], "topics": body["topics"],
                   "per_topic": bool(body["per_topic"])}
        job = create_job(s, Job(id=new_id("job"), owner_id=owner_id, collection_id=collection.id, request=request))
    st.queue.publish(job.id)
    return job
