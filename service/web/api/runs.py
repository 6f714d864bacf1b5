"""``/v1/runs``: uploaded runs, validated by the engine's reader before they are stored."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from flask import request
from flask.views import MethodView
from flask_smorest import Blueprint

from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.inputs import stored as stored_inputs
from evalserve.service.inputs.uploads import create_run
from evalserve.service.web.auth import current_token, require, sees_everything
from evalserve.service.web.context import session, state
from evalserve.service.web.idempotency import idempotent
from evalserve.service.web.problems import PROBLEM_JSON, ApiProblem, ProblemSchema
from evalserve.service.web.schemas import RunFilesSchema, RunFormSchema, RunSchema
from evalserve.service.web.upload_limits import UPLOADS_BUSY, check_upload, in_flight

blp = Blueprint("runs", __name__, url_prefix="/v1/runs", description="Runs")

_FORM = "application/x-www-form-urlencoded"


def raw_body_as_file(view: Callable[..., Any]) -> Callable[..., Any]:
    """A form-urlencoded body is taken as the raw file: ``curl --data-binary @run`` sends that content type by
    default, and parsing a run as a form would lose it (or refuse it as too large a form)."""

    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if request.mimetype == _FORM:
            request.environ["CONTENT_TYPE"] = "application/octet-stream"
            request.__dict__.pop("_parsed_content_type", None)  # werkzeug caches the parsed header
        return view(*args, **kwargs)

    return wrapper


@blp.route("")
class Runs(MethodView):
    @require("read")
    @blp.response(200, RunSchema(many=True))
    @blp.paginate()
    def get(self, pagination_parameters: Any) -> Any:
        """List your runs (an admin sees every run), newest first."""
        return stored_inputs.list_runs(session(), state(), current_token(), pagination_parameters)

    @require("submit")
    @in_flight
    @idempotent
    @raw_body_as_file
    @blp.arguments(RunFormSchema, location="query")
    @blp.arguments(RunFilesSchema, location="files")
    @blp.response(201, RunSchema)
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the run has errors (all of them listed), or a field is given twice")
    @blp.alt_response(429, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="over the rate limit or the storage quota (Retry-After); nothing is stored")
    @blp.alt_response(503, **UPLOADS_BUSY)
    def post(self, query: dict[str, Any], files: dict[str, Any]) -> Any:
        """Upload a run for a collection (``?collection=ID``): multipart field ``run``, or the file as the raw
        request body with ``?name=FILE`` (any content type but multipart, form-urlencoded included, as curl's
        ``--data-binary`` sends it; ``Content-Encoding: gzip`` or gzip bytes accepted)."""
        upload = files.get("run")
        if upload is not None:
            filename, data = upload.filename or query.get("name") or "run", upload.read()
        elif request.mimetype.startswith("multipart/"):
            raise ApiProblem(422, ProblemCode.INVALID_REQUEST, "the multipart request has no 'run' file field")
        else:
            filename, data = query.get("name") or "run", request.get_data()
        if not data:
            raise ApiProblem(422, ProblemCode.INVALID_UPLOAD, f"{filename}: the run is empty; nothing was stored")
        check_upload(files=1, stored=[data])
        row = create_run(session(), state(), current_token().id, query["collection"], filename, data,
                         admin=sees_everything(), run_format=query["run_format"])
        return row, 201, {"Location": f"/v1/runs/{row.id}"}


@blp.route("/<string:run_id>")
class OneRun(MethodView):
    @require("read")
    @blp.response(200, RunSchema)
    def get(self, run_id: str) -> Any:
        return stored_inputs.one_run(session(), state(), current_token(), run_id)
