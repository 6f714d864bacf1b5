"""``/v1/jobs``: state, progress and results of evaluation jobs; ``DELETE`` cancels."""

from __future__ import annotations

import json
from typing import Any

from flask import Response
from flask.views import MethodView
from flask_smorest import Blueprint
from sqlalchemy import select

from evaluation.report import render_document
from service import jobs as job_states
from service.api._common import get_or_404, job_out, page_of, visible
from service.auth import require
from service.models import Job
from service.problems import PROBLEM_JSON, ApiProblem, ProblemSchema
from service.schemas import JobSchema, ResultQuerySchema
from service.state import state

blp = Blueprint("jobs", __name__, url_prefix="/v1/jobs", description="Jobs and results")

MEDIA = {"json": "application/json", "tsv": "text/tab-separated-values", "csv": "text/csv",
         "trec_eval": "text/plain"}
#: the result's media type by ``format``, for the OpenAPI document
RESULT_DESCRIPTION = "the result in the requested format (JSON: the offline CLI's document)"
RESULT_CONTENT = {media: {"schema": {"type": "object" if fmt == "json" else "string"}} for fmt, media in MEDIA.items()}


@blp.route("")
class Jobs(MethodView):
    @require("read")
    @blp.response(200, JobSchema(many=True))
    @blp.paginate()
    def get(self, pagination_parameters: Any) -> Any:
        """List your jobs (an admin sees every job), newest first."""
        with state().db.session() as s:
            query = visible(select(Job), Job)
            rows = page_of(s, query, Job.created_at.desc(), pagination_parameters)
        return [job_out(j) for j in rows]


@blp.route("/<string:job_id>")
class OneJob(MethodView):
    @require("read")
    @blp.response(200, JobSchema)
    def get(self, job_id: str) -> Any:
        """The job's state (queued, running, succeeded, failed, cancelled), progress and links."""
        with state().db.session() as s:
            job = get_or_404(s, Job, job_id, "job")
        headers = {} if job.state in ("succeeded", "failed", "cancelled") else {"Retry-After": "1"}
        return job_out(job), 200, headers

    @require("submit")
    @blp.response(200, JobSchema)
    def delete(self, job_id: str) -> Any:
        """Cancel the job: at once when queued; a running job stops at its next step."""
        st = state()
        with st.db.session() as s:
            get_or_404(s, Job, job_id, "job")
        job_states.request_cancel(st.db, job_id)
        with st.db.session() as s:
            return job_out(get_or_404(s, Job, job_id, "job"))


@blp.route("/<string:job_id>/result")
class Result(MethodView):
    @require("read")
    @blp.arguments(ResultQuerySchema, location="query")
    @blp.response(200, description=RESULT_DESCRIPTION, content_type="application/json")
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the job has not succeeded")
    @blp.doc(responses={"200": {"description": RESULT_DESCRIPTION, "content": RESULT_CONTENT}})
    def get(self, query: dict[str, Any], job_id: str) -> Any:
        """The results of a succeeded job, in the offline CLI's shape: ``json`` (default), tsv, csv, trec_eval."""
        st = state()
        with st.db.session() as s:
            job = get_or_404(s, Job, job_id, "job")
            if job.state != "succeeded" or job.result_sha256 is None:
                detail = f"job {job_id} is {job.state}" + (f": {job.error['message']}" if job.error else "")
                raise ApiProblem(409, f"job-{job.state}", detail)
            document = json.loads(st.blobs.get(s, job.result_sha256))
        per_topic = query.get("per_topic", job.request["per_topic"])
        fmt = query["format"]
        return Response(render_document(document, fmt, per_topic), mimetype=MEDIA[fmt])
