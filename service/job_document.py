"""A job as the API shows it, built without Flask: the views answer with it and a job's callback POSTs it."""

from __future__ import annotations

from typing import Any

from service.models import Job, as_utc


def job_document(j: Job) -> dict[str, Any]:
    """The job as the API shows it (and as its callback POSTs it): state, progress, request, times, links."""
    links = {"self": f"/v1/jobs/{j.id}"}
    if j.state == "succeeded":
        links["result"] = f"/v1/jobs/{j.id}/result"
        links["plot"] = f"/v1/jobs/{j.id}/plot"
    req = j.request
    return {
        "id": j.id, "kind": j.kind, "method": req.get("method"), "evaluation": req.get("evaluation"),
        "state": j.state, "stage": j.stage, "progress": j.progress, "attempts": j.attempts,
        "collection": j.collection_id, "runs": req.get("runs", []), "measures": req.get("measures", []),
        "ties": req.get("ties", "trec"), "topics": req.get("topics", "common"),
        "per_topic": req.get("per_topic", False), "created_at": as_utc(j.created_at),
        "started_at": as_utc(j.started_at), "finished_at": as_utc(j.finished_at), "updated_at": as_utc(j.updated_at),
        "error": j.error, "callback_url": j.callback_url, "links": links,
    }
