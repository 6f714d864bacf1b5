"""``/v1/tasks/{task_id}/per-topic``: every submission's per-topic scores in one download, for organisers
(issue 30; ``shared_tasks.exports``): CSV (streamed), JSON or Parquet (pyarrow, the ``[parquet]`` extra)."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask import Response
from flask.views import MethodView
from flask_smorest import Blueprint

from evalserve.service.shared_tasks import exports
from evalserve.service.web.api.conditional import if_none_match, not_modified
from evalserve.service.web.auth import caller_or_none, require
from evalserve.service.web.context import session, state
from evalserve.service.web.problems import PROBLEM_JSON, ProblemSchema
from evalserve.service.web.task_schemas import BoardQuerySchema

blp = Blueprint("task_exports", __name__, url_prefix="/v1/tasks", description="Shared tasks and leaderboards")

V = ma.validate


class PerTopicExportQuerySchema(BoardQuerySchema):
    format = ma.fields.String(load_default="csv", validate=V.OneOf(exports.FORMATS),
                              metadata={"description": "csv (default), json or parquet (a server with pyarrow)"})
    selection = ma.fields.String(load_default="latest", validate=V.OneOf(("latest", "all")), metadata={
        "description": "latest: each participant's chosen or latest evaluated submission (as the leaderboard);"
                       " all: every evaluated one"})


EXPORT_CONTENT = {
    "text/csv": {"schema": {"type": "string"}},
    "application/json": {"schema": {"type": "object"}},
    "application/vnd.apache.parquet": {"schema": {"type": "string", "format": "binary"}},
}


@blp.route("/<string:task_id>/per-topic")
class PerTopicExport(MethodView):
    @require("read")
    @blp.arguments(PerTopicExportQuerySchema, location="query")
    @blp.response(200, description="one row per submission, measure and topic (the mean as topic 'all')",
                  content_type="text/csv")
    @blp.doc(responses={"200": {"description": "the per-topic scores", "content": EXPORT_CONTENT}})
    @blp.alt_response(304, description="If-None-Match names the export as it is (no body)")
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="organisers only (organisers-only)")
    @blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="no such task, phase or judgments version")
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="Parquet asked of a server without pyarrow (parquet-unavailable)")
    def get(self, query: dict[str, Any], task_id: str) -> Any:
        """Every shown submission's score on every topic under each official measure, in long format
        (submission, team, run, baseline, measure, topic, value; the mean as topic ``all``), read from the stored
        evaluations: the values ``evalserve evaluate --per-topic`` gives offline. Organisers only."""
        fmt = query["format"]
        found = exports.per_topic_export(session(), state().blobs, caller_or_none(), task_id,
                                         phase_name=query.get("phase"), version=query.get("version"),
                                         selection=query["selection"])
        tag = f'"{found.tag.strip(chr(34))}-{fmt}"'
        if tag in if_none_match():
            return not_modified(tag)
        headers = {"ETag": tag, "Content-Disposition": f'attachment; filename="{task_id}-per-topic.{fmt}"'}
        if fmt == "csv":
            return Response(found.csv_lines(), mimetype=exports.MEDIA[fmt], headers=headers)
        body: str | bytes = found.json_text() if fmt == "json" else found.parquet_bytes()
        return Response(body, mimetype=exports.MEDIA[fmt], headers=headers)
