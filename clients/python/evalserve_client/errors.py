"""Exceptions raised by the client: one base class, so callers can catch everything evalserve-specific at once.

``ApiError`` is the server's ``application/problem+json`` answer as an exception; ``JobFailed`` a job that ended
without results; ``ServerUnreachable`` a transport failure that outlasted the retries; ``WaitTimeout`` a wait that
ran out of time (the job itself goes on).
"""

from __future__ import annotations

import contextlib
import email.utils
import time
from collections.abc import Mapping
from typing import Any

import httpx

#: One problem as the API reports it: ``{line, column, code, message, severity, source}`` for input files (with
#: ``end_line`` when one problem covers consecutive lines: its message starts ``lines A-B:``),
#: ``{field, code, message, severity}`` for request fields.
Problem = dict[str, Any]


def format_problem(problem: Mapping[str, Any]) -> str:
    """``source:line:col: severity: message [code]`` -- the layout ``evalserve evaluate`` prints."""
    where = str(problem.get("source") or problem.get("field") or "<input>")
    if problem.get("line") is not None:
        where += f":{problem['line']}"
        if problem.get("column") is not None:
            where += f":{problem['column']}"
    return f"{where}: {problem.get('severity', 'error')}: {problem.get('message', '')} [{problem.get('code', '?')}]"


def parse_retry_after(value: str | None) -> float | None:
    """A ``Retry-After`` value in seconds (delta-seconds or an HTTP date), if it is a usable one."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


class EvalserveError(Exception):
    """Base class of every error this package raises on purpose."""


class ApiError(EvalserveError):
    """The server refused a request: its problem+json payload (status, stable ``code``, ``detail``, ``problems``);
    ``retry_after`` is the answer's ``Retry-After`` in seconds (a 429 quota refusal says when to come back)."""

    def __init__(self, status: int, code: str, detail: str, problems: list[Problem] | None = None, *,
                 title: str = "", type: str = "about:blank", headers: Mapping[str, str] | None = None) -> None:
        super().__init__(f"{status} {code}: {detail}")
        self.status = status
        self.code = code
        self.detail = detail
        self.problems: list[Problem] = list(problems or [])
        self.title = title
        self.type = type
        self.headers: dict[str, str] = dict(headers or {})
        retry = next((v for k, v in self.headers.items() if k.lower() == "retry-after"), None)
        self.retry_after: float | None = parse_retry_after(retry)

    @classmethod
    def from_response(cls, response: httpx.Response) -> ApiError:
        """Build from an error response; a body that is not problem+json (a proxy's HTML page) still gives a
        usable error with code ``http-<status>``."""
        status = response.status_code
        body: Any = None
        with contextlib.suppress(ValueError):
            body = response.json()
        headers = dict(response.headers.items())
        if isinstance(body, dict) and isinstance(body.get("code"), str):
            problems = body.get("problems")
            return cls(status, body["code"], str(body.get("detail") or ""),
                       [p for p in problems if isinstance(p, dict)] if isinstance(problems, list) else [],
                       title=str(body.get("title") or ""), type=str(body.get("type") or "about:blank"),
                       headers=headers)
        text = " ".join(response.text.split())[:300]
        return cls(status, f"http-{status}", text or response.reason_phrase, title=response.reason_phrase,
                   headers=headers)


class JobFailed(EvalserveError):
    """A job that was waited for ended ``failed`` or ``cancelled``; ``job`` is its last state from the server
    (for a shared task's submission, ``kind`` is ``"submission"`` and ``job`` the submission)."""

    def __init__(self, job: Mapping[str, Any], *, kind: str = "job") -> None:
        self.job: dict[str, Any] = dict(job)
        error = self.job.get("error") or {}
        self.state: str = str(self.job.get("state", "failed"))
        self.code: str = str(error.get("code") or self.state)
        self.message: str = str(error.get("message") or f"the job was {self.state}")
        self.problems: list[Problem] = list(error.get("problems") or [])
        self.kind = kind
        super().__init__(f"{kind} {self.job.get('id')} {self.state}: {self.message} [{self.code}]")


class WaitTimeout(EvalserveError, TimeoutError):
    """Waiting for a job (or a submission: ``kind``) took longer than asked; it is still queued or running."""

    def __init__(self, job: Mapping[str, Any], timeout: float, *, kind: str = "job") -> None:
        self.job: dict[str, Any] = dict(job)
        self.timeout = timeout
        self.kind = kind
        super().__init__(f"{kind} {self.job.get('id')} is still {self.job.get('state')} after {timeout:g} s")


class ServerUnreachable(EvalserveError):
    """No answer from the server (connection refused, timed out, dropped), even after retrying."""

    def __init__(self, url: str, cause: Exception, attempts: int) -> None:
        self.url = url
        self.cause = cause
        self.attempts = attempts
        reason = str(cause) or type(cause).__name__
        tries = f" ({attempts} attempts)" if attempts > 1 else ""
        super().__init__(f"cannot reach the evalserve server at {url}{tries}: {reason}")
