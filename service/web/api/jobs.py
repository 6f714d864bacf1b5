"""``/v1/jobs``: state, progress and results of evaluation jobs; ``DELETE`` cancels. Each view reads the request,
makes one call to ``jobs.queries`` and answers with what it returns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask, Response, current_app
from flask.views import MethodView
from flask_smorest import Blueprint

from evalserve.service.access.principal import budget_owner
from evalserve.service.core.errors import ServiceError
from evalserve.service.core.etags import etag_of, matches
from evalserve.service.core.longpoll import MAX_WAIT_SECONDS, wait_for_change
from evalserve.service.jobs import queries as caller_jobs
from evalserve.service.shared_tasks.callbacks import submission_callback
from evalserve.service.store.models import FINAL_STATES
from evalserve.service.web.api.conditional import if_none_match, not_modified, pending
from evalserve.service.web.auth import current_token, require
from evalserve.service.web.context import session, state, unit_of_work
from evalserve.service.web.problems import PROBLEM_JSON, ProblemSchema, problem_body
from evalserve.service.web.schemas import JobQuerySchema, JobSchema, PlotQuerySchema, ResultQuerySchema
from evalserve.service.web.waiting import Answer, Park, evented, offer_park
from evaluation.result_formats import ResultFormat

blp = Blueprint("jobs", __name__, url_prefix="/v1/jobs", description="Jobs and results")

MEDIA = {fmt.value: fmt.media_type for fmt in ResultFormat}
PLOT_MEDIA = {"png": "image/png", "svg": "image/svg+xml"}
#: how long a plot's request waits for a worker to draw it before answering 202
PLOT_WAIT_SECONDS = 30.0
#: the result's media type by ``format``, for the OpenAPI document
RESULT_DESCRIPTION = "the result in the requested format (JSON: the offline CLI's document)"
RESULT_CONTENT = {media: {"schema": {"type": "object" if fmt == ResultFormat.JSON else "string"}}
                  for fmt, media in MEDIA.items()}


@blp.route("")
class Jobs(MethodView):
    @require("read")
    @blp.response(200, JobSchema(many=True))
    @blp.paginate()
    def get(self, pagination_parameters: Any) -> Any:
        """List your jobs (an admin sees every job), newest first."""
        return caller_jobs.list_jobs(session(), state(), current_token(), pagination_parameters)


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
        tag, document = tagged(caller_jobs.shown_job(session(), st, current_token(), job_id))
        known = if_none_match()
        if query["wait"] > 0:
            unit_of_work().end_reads()  # each look reads the job as committed now, in a short session of its own
            watched = known or {tag}
            park = Park(budget_owner(current_token()), job_id, min(query["wait"], MAX_WAIT_SECONDS),
                        look=lambda: tagged(caller_jobs.job_now(st, job_id)),
                        settled=lambda t, d: t not in watched or d["state"] in FINAL_STATES,
                        finish=_answer_later(current_app._get_current_object(), known),  # type: ignore[attr-defined]
                        family="job", look_many=lambda ids: {i: tagged(d) for i, d in
                                                             caller_jobs.jobs_now(st, ids).items()})
            if not park.settled(tag, document) and not offer_park(park) and not evented():
                tag, document = wait_for_change(lambda: tagged(caller_jobs.job_now(st, job_id)), watched,
                                                query["wait"], done=lambda d: d["state"] in FINAL_STATES)
            # parked: answered from the event loop; not parkable there (HEAD): the job as it is, never a held thread
        headers = job_headers(tag, document)
        if matches(tag, known):
            return not_modified(tag, headers)
        return document, 200, headers

    @require("submit")
    @blp.response(200, JobSchema)
    def delete(self, job_id: str) -> Any:
        """Cancel the job: at once when queued; a running job stops at its next step."""
        return caller_jobs.cancel_job(session(), state(), current_token(), job_id, submission_callback)


def tagged(document: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The job as shown, with its ETag."""
    return etag_of(document), document


def job_headers(tag: str, document: dict[str, Any]) -> dict[str, str]:
    """A job answer's headers: its ETag, and ``Retry-After: 1`` while it may still change."""
    headers = {"ETag": tag}
    if document["state"] not in FINAL_STATES:
        headers["Retry-After"] = "1"
    return headers


def _answer_later(app: Flask, known: set[str]) -> Callable[[str, dict[str, Any]], Answer]:
    """How a parked long-poll is answered once its wait ends, as ``OneJob.get`` would answer (the event loop's
    watcher thread calls it, outside any request)."""

    def finish(tag: str, document: dict[str, Any]) -> Answer:
        headers = job_headers(tag, document)
        if matches(tag, known):
            return 304, headers, b""
        with app.app_context():
            response: Any = app.json.response(JobSchema().dump(document))  # Flask's: bytes, as a view sends them
            body = bytes(response.get_data())
        return 200, {**headers, "Content-Type": "application/json"}, body

    return finish


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
        """The results of a succeeded job, in the offline CLI's shape: ``json`` (default), tsv, csv, trec_eval
        (evaluation jobs), table (meta-evaluation jobs); ``html`` or ``latex``: a report with the scores,
        significance tests, the measures' definitions and axiomatic profiles."""
        fmt = query["format"]
        result = caller_jobs.job_result(session(), state(), current_token(), job_id, fmt, query.get("per_topic"),
                                        if_none_match())
        if result.text is None:
            return not_modified(result.tag)
        return Response(result.text, mimetype=MEDIA[fmt], headers={"ETag": result.tag})


@blp.route("/<string:job_id>/plot")
class Plot(MethodView):
    @require("read")
    @blp.arguments(PlotQuerySchema, location="query")
    @blp.response(200, description="PNG or SVG: ASL curves of a discriminative-power job, per-topic score"
                  " distributions of an evaluation job", content_type="image/png")
    @blp.alt_response(202, description="the plot is being drawn (its first request asked a worker to draw it, and"
                      " it was not drawn within the wait): ask again after Retry-After seconds")
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM_JSON, description="the job has not succeeded")
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="nothing to draw for this job, or plots unavailable on the server")
    @blp.doc(responses={"200": {"description": "the plot", "content": {
        "image/png": {"schema": {"type": "string", "format": "binary"}},
        "image/svg+xml": {"schema": {"type": "string"}}}}})
    def get(self, query: dict[str, Any], job_id: str) -> Any:
        """A plot of the job's results (``?format=png`` or ``svg``). A worker draws it when it is first asked
        for; that request waits for it (up to 30 s, holding no thread), or answers ``202`` with ``Retry-After``."""
        fmt = query["format"]
        st = state()
        image = caller_jobs.job_plot(session(), st, current_token(), job_id, fmt)
        if image is not None:
            return Response(image, mimetype=PLOT_MEDIA[fmt])
        offer_park(Park(budget_owner(current_token()), f"{job_id}/plot.{fmt}", PLOT_WAIT_SECONDS,
                        look=lambda: caller_jobs.plot_now(st, job_id, fmt),
                        settled=lambda _tag, found: found is not None, finish=_plot_later(job_id, fmt)))
        # parked: answered from the event loop once drawn; otherwise (Flask's test client, a plain WSGI server,
        # over the cap of waits): "being drawn", at once
        status, headers, body = _drawing(job_id)
        return Response(body, status=status, headers=headers)


def _drawing(job_id: str) -> Answer:
    """The answer while a plot is being drawn."""
    return pending("drawing", f"job {job_id}'s plot is being drawn; ask again after Retry-After seconds", 1)


def _plot_later(job_id: str, fmt: str) -> Callable[[str, bytes | ServiceError | None], Answer]:
    """How a parked plot request is answered once drawn, refused or its wait over (on the watcher thread)."""

    def finish(_tag: str, found: bytes | ServiceError | None) -> Answer:
        if isinstance(found, bytes):
            return 200, {"Content-Type": PLOT_MEDIA[fmt]}, found
        if isinstance(found, ServiceError):
            body = problem_body(found.status or 422, found.problem_code, found.detail, found.problems)
            return found.status or 422, {"Content-Type": PROBLEM_JSON}, body.encode()
        return _drawing(job_id)

    return finish
