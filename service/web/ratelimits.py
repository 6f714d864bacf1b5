"""Request rate limits per user (``access.rate_limits``) over HTTP: every request, uploads, and registration
attempts per task, counted under the caller's user (``principal.budget_owner``; anonymous callers: their address).

Counters are shared by every API process: in Redis when the deployment has ``REDIS_URL``, else in a SQLite file in
the data directory. A caller over a limit gets ``429 rate-limited`` with ``Retry-After``; admin tokens and
``/health`` are exempt. While the counters' storage is down, registration attempts and uploads get ``503
rate-limits-unavailable`` with ``Retry-After`` and other requests pass, each decision logged and counted."""

from __future__ import annotations

from flask import Flask, Response, current_app, request

from evalserve.service.access.rate_limits import RateLimits, Verdict
from evalserve.service.core.config import Settings
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.web.auth import caller_is_admin, caller_key
from evalserve.service.web.problems import problem_response

#: the POST endpoints that upload files or queue work (``EVALSERVE_UPLOAD_RATE_LIMIT``)
UPLOAD_ENDPOINTS = frozenset({
    "collections.Collections", "runs.Runs", "evaluations.evaluate", "evaluations.submit",
    "evaluations.meta_evaluate", "tasks.Tasks", "tasks.Submissions", "tasks.Judgments",
})
REGISTER_ENDPOINT = "tasks.Participants"
SIGNUP_ENDPOINT = "accounts.Users"  # creating a user: a registration attempt (sign-up open: anyone may try)
INVITATION_ENDPOINT = "invitations.Redeem"  # redeeming an invitation code: a registration attempt
EXEMPT_ENDPOINTS = frozenset({"health.health"})
WHAT = {"uploads": "uploads and queued work", "registrations": "registration attempts (a task's, or sign-ups)"}
EXTENSION = "evalserve.ratelimits"


def _hits() -> list[tuple[str, str]]:
    """The groups this request counts in, each with the key it counts under."""
    key = caller_key()
    hits = [("requests", key)]
    if request.method == "POST" and request.endpoint in UPLOAD_ENDPOINTS:
        hits.append(("uploads", key))
    if request.method == "POST" and request.endpoint == REGISTER_ENDPOINT:  # per user and task
        hits.append(("registrations", f"{key}:task:{(request.view_args or {}).get('task_id', '')}"))
    if request.method == "POST" and request.endpoint == SIGNUP_ENDPOINT:
        hits.append(("registrations", f"{key}:signup"))
    if request.method == "POST" and request.endpoint == INVITATION_ENDPOINT:  # guessing codes
        hits.append(("registrations", f"{key}:invitation"))
    return hits


def _limit(limits: RateLimits) -> Response | None:
    if request.endpoint in EXEMPT_ENDPOINTS or caller_is_admin():
        return None
    hits = _hits()
    decision = limits.check(hits, f"{request.method} {request.path} for {hits[0][1]}")
    if decision.verdict is Verdict.LIMITED:
        return problem_response(429, ProblemCode.RATE_LIMITED,
                                f"too many {WHAT.get(decision.group, 'requests')}: at most {decision.limit} per"
                                f" caller; retry in {decision.retry_after} s",
                                headers={"Retry-After": str(decision.retry_after)})
    if decision.verdict is Verdict.UNCHECKED_REFUSED:
        return problem_response(503, ProblemCode.RATE_LIMITS_UNAVAILABLE,
                                f"{WHAT[decision.group]} are refused for now: their rate limit cannot be checked"
                                f" (the rate-limit storage is {decision.reason}), and they are not let through"
                                f" unlimited; nothing was stored. Retry in {decision.retry_after} s",
                                headers={"Retry-After": str(decision.retry_after)})
    return None


def install_rate_limits(app: Flask, settings: Settings) -> RateLimits:
    """Check the deployment's request rate limits before every request of ``app`` (before the other checks: a
    caller over the limit costs little)."""
    limits = RateLimits(settings)
    app.extensions[EXTENSION] = limits
    if limits.enabled:
        app.before_request(lambda: _limit(limits))
    return limits


def rate_limits_status() -> dict[str, object] | None:
    """The rate-limit storage's state and this process's unchecked decisions (``/health``); None when off."""
    limits: RateLimits | None = current_app.extensions.get(EXTENSION)
    return limits.status() if limits is not None and limits.enabled else None
