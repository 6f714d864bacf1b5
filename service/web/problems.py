"""One error payload for the whole API: RFC 9457 ``application/problem+json``.

``{"type", "title", "status", "detail", "code", "problems": [{line, column, code, message, severity, source}]}``
-- ``problems`` carries a reader's problem list (bad uploads; a problem repeated on consecutive lines of a file is
one item, with ``end_line`` its last line) or field errors (bad requests).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import marshmallow as ma
from flask import Response
from werkzeug.exceptions import HTTPException

from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import EngineCode, ProblemCode

PROBLEM_JSON = "application/problem+json"


class ApiProblem(ServiceError, HTTPException):
    """A :class:`ServiceError` raised on the Flask side (views, request checks): also an ``HTTPException``, so
    flask-smorest and werkzeug treat it as one; ``code`` is its HTTP status, as for every ``HTTPException``."""

    def __init__(self, status: int, code: ProblemCode | EngineCode, detail: str,
                 problems: list[dict[str, Any]] | None = None, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(status, code, detail, problems, headers)
        self.code = status


def problem_body(status: int, code: ProblemCode | EngineCode, detail: str,
                 problems: list[dict[str, Any]] | None = None, title: str | None = None) -> str:
    """The problem+json document every refusal carries."""
    from http import HTTPStatus

    return json.dumps({
        "type": f"https://evalserve.dev/problems/{code}",
        "title": title or HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        "code": code,
        "problems": problems or [],
    })


def problem_response(status: int, code: ProblemCode | EngineCode, detail: str,
                     problems: list[dict[str, Any]] | None = None, headers: Mapping[str, str] | None = None,
                     title: str | None = None) -> Response:
    body = problem_body(status, code, detail, problems, title)
    response = Response(body, status=status, mimetype=PROBLEM_JSON)
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def from_service_error(error: ServiceError) -> Response:
    """A service's refusal (an ``ApiProblem`` too) as problem+json: its status, code, detail, problems and headers."""
    return problem_response(error.status or 500, error.problem_code, error.detail, error.problems,
                            error.extra_headers)


def from_http_exception(error: HTTPException) -> Response:
    """Turn any HTTP error (ours, Flask's, webargs' validation errors) into problem+json."""
    if isinstance(error, ApiProblem):
        return from_service_error(error)
    status = error.code or 500
    data = getattr(error, "data", None) or {}
    problems = _field_problems(data.get("messages") or data.get("errors") or {})
    detail = data.get("message") or error.description or ""
    code = {400: ProblemCode.BAD_REQUEST, 401: ProblemCode.UNAUTHORIZED, 403: ProblemCode.FORBIDDEN,
            404: ProblemCode.NOT_FOUND, 405: ProblemCode.METHOD_NOT_ALLOWED, 409: ProblemCode.CONFLICT,
            413: ProblemCode.TOO_LARGE, 415: ProblemCode.UNSUPPORTED_MEDIA_TYPE, 422: ProblemCode.INVALID_REQUEST,
            429: ProblemCode.TOO_MANY_REQUESTS}.get(status, ProblemCode.ERROR if status < 500
                                                    else ProblemCode.INTERNAL_ERROR)
    if status == 422 and problems:
        detail = "the request has invalid fields: " + "; ".join(f"{p['field']}: {p['message']}" for p in problems)
    # the exception's own headers (``Allow`` of a 405, ``WWW-Authenticate``, ...), not its text/html Content-Type
    headers = {k: v for k, v in error.get_headers() if k.lower() != "content-type"}
    headers.update(data.get("headers") or {})
    return problem_response(status, code, str(detail), problems, headers)


def _field_problems(messages: Any, path: str = "") -> list[dict[str, Any]]:
    """webargs/marshmallow messages ({location: {field: [msg]}}) as a flat problem list."""
    out: list[dict[str, Any]] = []
    if isinstance(messages, Mapping):
        for key, value in messages.items():
            if key in ("json", "form", "files", "query", "headers", "view_args") and not path:
                out.extend(_field_problems(value, ""))
            else:
                out.extend(_field_problems(value, f"{path}.{key}" if path else str(key)))
    elif isinstance(messages, list) and all(isinstance(m, str) for m in messages):
        out.extend({"field": path or "_", "code": ProblemCode.INVALID_FIELD, "message": m, "severity": "error"}
                   for m in messages)
    elif isinstance(messages, list):
        for i, value in enumerate(messages):
            out.extend(_field_problems(value, f"{path}[{i}]"))
    elif isinstance(messages, str):
        out.append({"field": path or "_", "code": ProblemCode.INVALID_FIELD, "message": messages, "severity": "error"})
    return out


class ProblemSchema(ma.Schema):
    """The error payload, for the OpenAPI document."""

    type = ma.fields.String()
    title = ma.fields.String()
    status = ma.fields.Integer()
    detail = ma.fields.String()
    code = ma.fields.String()
    problems = ma.fields.List(ma.fields.Dict())


#: how the OpenAPI document describes the 409 of every write on a finalised task (``shared_tasks.final``)
TASK_FINAL = {"schema": ProblemSchema, "content_type": PROBLEM_JSON,
              "description": "the task is finalised: no write is accepted, by anyone (task-final)"}
