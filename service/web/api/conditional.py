"""Conditional GETs: ``If-None-Match`` read from the request and answered with a bodyless ``304 Not Modified``
(the strong ETags themselves: ``core.etags``), so a client polling an unchanged job or re-fetching a result
costs little."""

from __future__ import annotations

from flask import Response, request


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
