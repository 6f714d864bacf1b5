"""A job as the API shows it, built without Flask: the views answer with it and a job's callback POSTs it."""

from __future__ import annotations

from typing import Any

from evalserve.service.jobs.kinds import KINDS
from evalserve.service.store.models import Job, JobState, as_utc

#: the job document's flat request fields (kept for older clients; ``request`` is the kind's own JSON) and what
#: each shows when the kind's request has no such attribute
FLAT_FIELDS: dict[str, Any] = {"method": None, "evaluation": None, "runs": (), "measures": (), "ties": "trec",
                               "topics": "common", "per_topic": False}


def flat_fields(request: Any) -> dict[str, Any]:
    """The deprecated flat fields of a parsed request, read from its attributes of those names (the one place
    they are computed: a kind declares only its own request)."""
    out = {}
    for name, default in FLAT_FIELDS.items():
        value = getattr(request, name, default)
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


def job_document(j: Job) -> dict[str, Any]:
    """The job as the API shows it (and as its callback POSTs it): state, progress, request, times, links."""
    links = {"self": f"/v1/jobs/{j.id}"}
    if j.state == JobState.SUCCEEDED:
        links["result"] = f"/v1/jobs/{j.id}/result"
        links["plot"] = f"/v1/jobs/{j.id}/plot"
    request = KINDS[j.kind].parse(j.request)
    req = flat_fields(request)
    return {
        "id": j.id, "kind": j.kind, "method": req["method"], "evaluation": req["evaluation"],
        "state": j.state, "stage": j.stage, "progress": j.progress, "attempts": j.attempts,
        "collection": j.collection_id, "runs": req["runs"], "measures": req["measures"],
        "ties": req["ties"], "topics": req["topics"],
        "per_topic": req["per_topic"], "request": request.to_json(), "created_at": as_utc(j.created_at),
        "started_at": as_utc(j.started_at), "finished_at": as_utc(j.finished_at), "updated_at": as_utc(j.updated_at),
        "error": j.error, "callback_url": j.callback_url, "links": links,
    }
