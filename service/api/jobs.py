"""``/v1/jobs``: state, progress and results of evaluation jobs; ``DELETE`` cancels."""

from __future__ import annotations

import json
from typing import Any

from flask import Response
from flask.views import MethodView
from flask_smorest import Blueprint
from sqlalchemy import select

from evaluation.problems import InputError
from service import callbacks
from service import jobs as job_states
from service.api._common import get_or_404, job_out, visible
from service.api.conditional import etag_of, if_none_match, matches, not_modified
from service.auth import require
from service.job_kinds import KINDS, NoPlot
from service.longpoll import wait_for_change
from service.models import FINAL_STATES, Job
from service.paging import page_of
from service.problems import PROBLEM_JSON, ApiProblem, ProblemSchema
from service.schemas import JobQuerySchema, JobSchema, PlotQuerySchema, ResultQuerySchema
from service.state import state

blp = Blueprint("jobs", __name__, url_prefix="/v1/jobs", description="Jobs and results")

MEDIA = {"json": "application/json", "tsv": "text/tab-separated-values", "csv": "text/csv",
         "trec_eval": "text/plain", "table": "text/plain"}
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
    @blp.arguments(JobQuerySchema, location="query")
    @blp.response(200, JobSchema, headers={"ETag": {"description": "strong; send it as If-None-Match",
                                                      "schema": {"type": "string"}}})
    @blp.alt_response(304, description="If-None-Match names the job as it is (no body)")
    def get(self, query: dict[str, Any], job_id: str) -> Any:
        """The job's state (queued, running, succeeded, failed, cancelled), progress and links. ``?wait=SECONDS``
        long-polls: the answer comes as soon as the job differs from the one your ``If-None-Match`` names (or
        from the job as it was when the request arrived), or after the wait; ``304`` when it is still the one
        you have."""
        st = state()
        with st.db.session() as s:
            tag, document = job_tag(get_or_404(s, Job, job_id, "job"))
        known = if_none_match()
        if query["wait"] > 0:
            tag, document = wait_for_change(lambda: _load_job(job_id), known or {tag}, query["wait"],
                                            done=lambda d: d["state"] in FINAL_STATES)
        headers = {"ETag": tag}
        if document["state"] not in FINAL_STATES:
            headers["Retry-After"] = "1"
        if matches(tag, known):
            return not_modified(tag, headers)
        return document, 200, headers

    @require("submit")
    @blp.response(200, JobSchema)
    def delete(self, job_id: str) -> Any:
        """Cancel the job: at once when queued; a running job stops at its next step."""
        st = state()
        with st.db.session() as s:
            get_or_404(s, Job, job_id, "job")
        job_states.request_cancel(st.db, job_id)
        callbacks.announce(st.db, st.queue.celery, job_id)  # a queued job ends here
        with st.db.session() as s:
            return job_out(get_or_404(s, Job, job_id, "job"))


def job_tag(job: Job) -> tuple[str, dict[str, Any]]:
    """The job as shown, and its ETag."""
    document = job_out(job)
    return etag_of(document), document


def _load_job(job_id: str) -> tuple[str, dict[str, Any]]:
    with state().db.session() as s:
        job = s.get(Job, job_id)
        assert job is not None  # jobs are never deleted
        return job_tag(job)


@blp.route("/<string:job_id>/result")
class Result(MethodView):
    @require("read")
    @blp.arguments(ResultQuerySchema, location="query")
    @blp.response(200, description=RESULT_DESCRIPTION, content_type="application/json")
    @blp.alt_response(304, description="If-None-Match names this result (no body)")
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
            kind = KINDS[job.kind]
            per_topic = query.get("per_topic", kind.parse(job.request).fields()["per_topic"])
            tag = etag_of("result", job.result_sha256, query["format"], per_topic)  # a result never changes
            if matches(tag, if_none_match()):
                return not_modified(tag)
            document = json.loads(st.blobs.get(s, job.result_sha256))
        fmt = query["format"]
        if fmt not in kind.formats:
            raise ApiProblem(422, "format-not-available", kind.formats_message)
        return Response(kind.render(document, fmt, per_topic), mimetype=MEDIA[fmt], headers={"ETag": tag})


@blp.route("/<string:job_id>/plot")
class Plot(MethodView):
    @require("read")
    @blp.arguments(PlotQuerySchema, location="query")
    @blp.response(200, description="PNG or SVG: ASL curves of a discriminative-power job, per-topic score"
                  " distributions of an evaluation job", content_type="image/png")
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM_JSON, description="the job has not succeeded")
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="nothing to draw for this job, or plots unavailable on the server")
    @blp.doc(responses={"200": {"description": "the plot", "content": {
        "image/png": {"schema": {"type": "string", "format": "binary"}},
        "image/svg+xml": {"schema": {"type": "string"}}}}})
    def get(self, query: dict[str, Any], job_id: str) -> Any:
        """A plot of the job's results (``?format=png`` or ``svg``)."""
        st = state()
        with st.db.session() as s:
            job = get_or_404(s, Job, job_id, "job")
            if job.state != "succeeded" or job.result_sha256 is None:
                raise ApiProblem(409, f"job-{job.state}", f"job {job_id} is {job.state}")
            document = json.loads(st.blobs.get(s, job.result_sha256))
        fmt = query["format"]
        kind = KINDS[job.kind]
        try:
            if kind.plot is None:
                raise NoPlot(f"a {kind.name} job has no plot")
            image = kind.plot(document, kind.parse(job.request), fmt)
        except NoPlot as exc:
            raise ApiProblem(422, "plot-unavailable", str(exc)) from None
        except InputError as exc:
            raise ApiProblem(422, exc.problems[0].code, exc.problems[0].message) from None
        return Response(image, mimetype="image/png" if fmt == "png" else "image/svg+xml")
