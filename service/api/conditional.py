"""Conditional GETs: strong ETags (a hash of what the response shows) and ``If-None-Match`` answered with a
bodyless ``304 Not Modified``, so a client polling an unchanged job or re-fetching a result costs little."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from flask import Response, request


def etag_of(*parts: Any) -> str:
    """A strong ETag (quoted) of JSON-able ``parts``: equal parts, equal bytes shown, equal tag."""
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return '"' + hashlib.sha256(text.encode()).hexdigest()[:32] + '"'


def if_none_match() -> set[str]:
    """The ETags in the request's ``If-None-Match`` (``W/`` prefixes dropped: GET compares weakly); ``*`` too."""
    header = request.headers.get("If-None-Match", "")
    return {t.strip().removeprefix("W/") for t in header.split(",") if t.strip()}


def matches(tag: str, known: set[str]) -> bool:
    """Does the client already have the representation tagged ``tag``?"""
    return tag in known or "*" in known


def not_modified(tag: str, headers: dict[str, str] | None = None) -> Response:
    """``304 Not Modified``: no body, the ETag (and any other validators or hints) repeated."""
    response = Response(status=304)
    response.headers["ETag"] = tag
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response
