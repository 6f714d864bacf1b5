"""The service's own refusal, Flask-free: a status, a stable machine-readable code, a detail for people and,
optionally, a problem list and response headers. Services (code that workers and the API both call) raise it;
the API answers it as ``application/problem+json`` (``web.problems``), byte for byte as an ``ApiProblem``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class ServiceError(Exception):
    """A request refused by the service: ``status`` (an HTTP status), ``problem_code`` (``not-found``,
    ``quota-exceeded``, ...), ``detail``, ``problems`` (a reader's problem list) and ``extra_headers``
    (``Retry-After``)."""

    def __init__(self, status: int, code: str, detail: str, problems: list[dict[str, Any]] | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.problem_code = code
        self.detail = detail
        self.problems = problems or []
        self.extra_headers = dict(headers or {})
