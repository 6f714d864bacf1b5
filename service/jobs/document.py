"""A job as the API shows it, built without Flask: the views answer with it and a job's callback POSTs it."""

from __future__ import annotations

from typing import Any

from evalserve.service.jobs.kinds import KINDS
from evalserve.service.store.models import Job, JobState, as_utc


def job_document(j: Job) -> dict[str, Any]:
    """The job as the API shows it (and as its callback POSTs it): state, progress, request, times, links."""
    links = {"self": f"/v1/jobs/{j.id}"}
    if j.state == JobState.SUCCEEDED:
        links["result"] = f"/v1/jobs/{j.id}/result"
        links["plot"] = f"/v1/jobs/{j.id}/plot"
    req = KINDS[j.kind].parse(j.request).fields()
    return {
        "id": j.id, "kind": j.kind, "method": req["method"], "evaluation": req["evaluation"],
        "state": j.state, "stage": j.stage, "progress": j.progress, "attempts": j.attempts,
        "collection": j.collection_id, "runs": req["runs"], "measures": req["measures"],
        "ties": req["ties"], "topics": req["topics"],
        "per_topic": req["per_topic"], "created_at": as_utc(j.created_at),
        "started_at": as_utc(j.started_at), "finished_at": as_utc(j.finished_at), "updated_at": as_utc(j.updated_at),
        "error": j.error, "callback_url": j.callback_url, "links": links,
    }
