"""Conditional GETs: ``If-None-Match`` read from the request and answered with a bodyless ``304 Not Modified``
(the strong ETags themselves: ``core.etags``), so a client polling an unchanged job or re-fetching a result
costs little; and the ``202`` of a GET whose answer a worker is still computing."""

from __future__ import annotations

import json

from flask import Response, request

from evalserve.service.web.waiting import Answer


def if_none_match() -> set[str]:
    """The ETags in the request's ``If-None-Match`` (``W/`` prefixes dropped: GET compares weakly); ``*`` too."""
    header = request.headers.get("If-None-Match", "")
    return {t.strip().removeprefix("W/") for t in header.split(",") if t.strip()}


def not_modified(tag: str, headers: dict[str, str] | None = None) -> Response:
    """``304 Not Modified``: no body, the ETag (and any other validators or hints) repeated."""
    response = Response(status=304)
    response.headers["ETag"] = tag
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def pending(state: str, detail: str, retry_after: int) -> Answer:
    """``202 Accepted`` while a worker computes what the GET asks for (a leaderboard, a plot): ``{"state",
    "detail"}`` and ``Retry-After``."""
    body = json.dumps({"state": state, "detail": detail}) + "\n"
    return 202, {"Content-Type": "application/json", "Retry-After": str(retry_after)}, body.encode()


def pending_response(state: str, detail: str, retry_after: int) -> Response:
    """``pending`` as a Flask response."""
    status, headers, body = pending(state, detail, retry_after)
    return Response(body, status=status, headers=headers)
