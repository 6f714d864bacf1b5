"""``/v1/tasks/{id}/report``: the end-of-task report of a task's phase (``shared_tasks.report``) as HTML, LaTeX or
a zip of both with the CSVs and plots. Organisers only. A worker builds it when first asked for; that request
waits for it (up to 30 s, holding no thread) or answers ``202`` with ``Retry-After``; then it is served as stored
(ETag) until its inputs change, when the stored one is served marked ``Evalserve-Stale`` while the new one is
built."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import marshmallow as ma
from flask import Response
from flask.views import MethodView
from flask_smorest import Blueprint
from werkzeug.http import http_date

from evalserve.service.access.principal import budget_owner
from evalserve.service.core.etags import etag_of, matches
from evalserve.service.shared_tasks.access import organised_task
from evalserve.service.shared_tasks.report import report_now, served_report
from evalserve.service.shared_tasks.report_render import member
from evalserve.service.store.blobs import BlobStore
from evalserve.service.store.db import Database
from evalserve.service.web.api.conditional import if_none_match, not_modified, pending
from evalserve.service.web.auth import current_token, require
from evalserve.service.web.context import session, state
from evalserve.service.web.problems import PROBLEM_JSON, ProblemSchema
from evalserve.service.web.task_schemas import BoardQuerySchema
from evalserve.service.web.waiting import Answer, Park, offer_park

blp = Blueprint("reports", __name__, url_prefix="/v1/tasks", description="End-of-task reports")

V = ma.validate
#: the report's formats: media type, the zip member served (None: the zip itself) and the download name's suffix
FORMATS = {"html": ("text/html; charset=utf-8", "report.html", "html"),
           "latex": ("application/x-latex; charset=utf-8", "report.tex", "tex"),
           "zip": ("application/zip", None, "zip")}
#: seconds the first request of a report waits for its worker
REPORT_WAIT_SECONDS = 30.0
#: seconds a caller is asked to wait while a report is being built
REPORT_RETRY_AFTER = 1


class ReportQuerySchema(BoardQuerySchema):
    format = ma.fields.String(load_default="html", validate=V.OneOf(tuple(FORMATS)),
                              metadata={"description": "html (plots embedded), latex (its plots are in the zip), or"
                                        " zip (HTML, LaTeX sources, CSVs, plots as SVG and PNG)"})


@blp.route("/<string:task_id>/report")
class TaskReport(MethodView):
    @require("read")
    @blp.arguments(ReportQuerySchema, location="query")
    @blp.response(200, description="the report", content_type="text/html")
    @blp.doc(responses={"200": {"description": "the report", "content": {
        media.split(";")[0]: {"schema": {"type": "string", **({"format": "binary"} if fmt == "zip" else {})}}
        for fmt, (media, _, _) in FORMATS.items()}}})
    @blp.alt_response(202, description="the report is being built by a worker (its first request asked for it and"
                      " it was not built within the wait): ask again after Retry-After seconds")
    @blp.alt_response(304, description="If-None-Match names the stored report (no body)")
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the caller does not organise the task (organisers-only)")
    @blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="no such task or phase (or a private task the caller does not take part in)")
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="no evaluated submission to report on (too-few-submissions)")
    def get(self, query: dict[str, Any], task_id: str) -> Any:
        """The end-of-task report (organisers): the task's description and settings, the leaderboard with
        significance on every official measure, significance matrices, per-topic distributions, ASL curves, the
        meta-evaluation and provenance; "final" once the task is finalised, "provisional" before. Built once by
        a worker and stored (ETag; ``Evalserve-Stale`` while a newer one is built after its inputs changed)."""
        st = state()
        token = current_token()
        task = organised_task(session(), task_id, token)
        found = served_report(session(), st.blobs, st.queue.celery, st.settings.queue, task,
                              phase_name=query.get("phase"), version=query.get("version"))
        fmt = query["format"]
        if found.stored is not None:
            stored = found.stored
            tag = etag_of("report", stored.sha256, fmt)
            headers = {"ETag": tag, "Last-Modified": http_date(stored.built_at),
                       "Content-Disposition": _disposition(fmt, task_id)}
            if stored.stale:
                headers.update({"Evalserve-Stale": "true", "Retry-After": str(REPORT_RETRY_AFTER)})
            if matches(tag, if_none_match()):
                return not_modified(tag, headers)
            status, answer_headers, body = _serve(st.blobs, st.db, stored.sha256, fmt, task_id)
            return Response(body, status=status, headers={**answer_headers, **headers})
        db, blobs, key, inputs = st.db, st.blobs, found.key, found.inputs
        offer_park(Park(budget_owner(token), f"{task_id}/report/{key}.{fmt}", REPORT_WAIT_SECONDS,
                        look=lambda: report_now(db, key, inputs),
                        settled=lambda _tag, sha: sha is not None, finish=_report_later(blobs, db, fmt, task_id)))
        # parked: answered from the event loop once built; otherwise (Flask's test client, a plain WSGI server,
        # over the cap of waits): "being built", at once
        status, headers, body = _building(task_id)
        return Response(body, status=status, headers=headers)


def _serve(blobs: BlobStore, db: Database, sha256: str, fmt: str, task_id: str) -> Answer:
    """The stored report zip ``sha256`` in ``fmt`` (a member of the zip, or the zip)."""
    with db.session() as s:
        archive = blobs.get(s, sha256)
    media, name, _ = FORMATS[fmt]
    body = archive if name is None else member(archive, name)
    return 200, {"Content-Type": media, "ETag": etag_of("report", sha256, fmt),
                 "Content-Disposition": _disposition(fmt, task_id)}, body


def _disposition(fmt: str, task_id: str) -> str:
    """The page is shown in place; the LaTeX source and the zip are downloads."""
    return f'{"inline" if fmt == "html" else "attachment"}; filename="{task_id}-report.{FORMATS[fmt][2]}"'


def _building(task_id: str) -> Answer:
    return pending("building", f"the report of task {task_id} is being built; ask again after Retry-After seconds",
                   REPORT_RETRY_AFTER)


def _report_later(blobs: BlobStore, db: Database, fmt: str, task_id: str) -> Callable[[str, str | None], Answer]:
    """How a parked report request is answered once built or its wait over (on the watcher thread)."""

    def finish(_tag: str, sha: str | None) -> Answer:
        return _building(task_id) if sha is None else _serve(blobs, db, sha, fmt, task_id)

    return finish
