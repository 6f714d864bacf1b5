"""``POST /v1/evaluations`` (evaluate stored runs) and ``POST /v1/submissions`` (upload runs and evaluate them
in one call); both answer ``202 Accepted`` with the job and its ``Location``."""

from __future__ import annotations

import re
from typing import Any

from flask import request
from flask_smorest import Blueprint

from evalserve.service.core.etags import etag_of
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.jobs.document import job_document
from evalserve.service.jobs.submit import submit_evaluation, submit_meta_evaluation, submit_runs
from evalserve.service.web.auth import current_token, require, sees_everything
from evalserve.service.web.context import session, state
from evalserve.service.web.idempotency import idempotent
from evalserve.service.web.problems import PROBLEM_JSON, ApiProblem, ProblemSchema
from evalserve.service.web.schemas import (
    EvaluationRequestSchema,
    JobSchema,
    MetaEvaluationRequestSchema,
    SubmissionFilesSchema,
    SubmissionFormSchema,
)
from evalserve.service.web.upload_limits import UPLOADS_BUSY, check_upload, in_flight

blp = Blueprint("evaluations", __name__, url_prefix="/v1", description="Evaluation requests")
OVER_LIMIT = {"schema": ProblemSchema, "content_type": PROBLEM_JSON,
              "description": "over the rate limit (rate-limited) or a quota of jobs or storage (quota-exceeded), with"
                             " Retry-After; nothing is stored"}


def _accepted(job: Any) -> Any:
    """202 with the job, its Location and its ETag (a client's first long-poll sends it as If-None-Match); the
    callback's secret, if it has one, is shown here only."""
    document = job_document(job)
    tag = etag_of(document)
    if job.callback_secret:
        document = {**document, "callback_secret": job.callback_secret}
    return document, 202, {"Location": f"/v1/jobs/{job.id}", "Retry-After": "1", "ETag": tag}


@blp.route("/evaluations", methods=["POST"])
@require("submit")
@idempotent
@blp.arguments(EvaluationRequestSchema)
@blp.response(202, JobSchema)
@blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                  description="unknown measure, run of another collection, ...")
@blp.alt_response(429, **OVER_LIMIT)
def evaluate(body: dict[str, Any]) -> Any:
    """Queue an evaluation of stored runs; poll the job at ``Location``."""
    check_upload(measures=len(body["measures"]), jobs=1)
    job = submit_evaluation(session(), state(), current_token().id, sees_everything(), body)
    return _accepted(job)


@blp.route("/submissions", methods=["POST"])
@require("submit")
@in_flight
@idempotent
@blp.arguments(SubmissionFormSchema, location="form")
@blp.arguments(SubmissionFilesSchema, location="files")
@blp.response(202, JobSchema)
@blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                  description="a run file has errors, more than 200 measures, a field given twice (nothing is"
                              " stored)")
@blp.alt_response(413, schema=ProblemSchema, content_type=PROBLEM_JSON,
                  description="more run files than the server takes in one request (too-many-files)")
@blp.alt_response(429, **OVER_LIMIT)
@blp.alt_response(503, **UPLOADS_BUSY)
def submit(form: dict[str, Any], files: dict[str, Any]) -> Any:
    """Upload one or more run files (field ``run``, repeated) and evaluate them in one call."""
    uploads = request.files.getlist("run")
    if not uploads:
        raise ApiProblem(422, ProblemCode.INVALID_REQUEST, "send at least one run file in the 'run' field")
    measures = [m for m in re.split(MEASURE_SEPARATOR, form["measures"]) if m]
    check_upload(files=len(uploads), measures=len(measures), multi=("run",))
    contents = [(u.filename or f"run{i + 1}", u.read()) for i, u in enumerate(uploads)]
    check_upload(stored=[data for _, data in contents], jobs=1, multi=("run",))
    return _accepted(submit_runs(session(), state(), current_token().id, sees_everything(), form, measures, contents))


#: measures in a form field are separated by spaces or commas, except commas inside parentheses
#: (``RBP(p=0.8,rel=graded)``) and before a number (trec_eval's lists: ``ndcg_cut.10,20``)
MEASURE_SEPARATOR = r"\s*,(?![^(]*\))(?![\d.])\s*|\s+"


@blp.route("/meta-evaluations", methods=["POST"])
@require("submit")
@idempotent
@blp.arguments(MetaEvaluationRequestSchema)
@blp.response(202, JobSchema)
@blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM_JSON,
                  description="no such evaluation job, collection or run")
@blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM_JSON,
                  description="the evaluation job has not succeeded")
@blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                  description="unknown method or option, measure not evaluated, ...")
@blp.alt_response(429, **OVER_LIMIT)
def meta_evaluate(body: dict[str, Any]) -> Any:
    """Queue a meta-evaluation (unanimity, discriminative power, significance, correlation, preference agreement,
    simulated scenarios, robustness to incomplete judgments) of an evaluation job's per-topic results, or of runs
    evaluated first; poll the job at ``Location``."""
    check_upload(measures=len(body.get("measures") or []), jobs=1)
    job = submit_meta_evaluation(session(), state(), current_token().id, sees_everything(), body)
    return _accepted(job)
