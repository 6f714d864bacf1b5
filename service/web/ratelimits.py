"""Request rate limits per token (flask-limiter): every request, uploads, and registration attempts per task.

Counters live in Redis when the deployment has ``REDIS_URL`` (shared by every API process, under a key prefix of
the deployment's queue name), else in each API process's memory (each process then counts on its own). A caller
over a limit gets ``429 rate-limited`` problem+json with ``Retry-After``; admin tokens and ``/health`` are exempt.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from flask import Flask, Response, request
from flask_limiter import ApplicationLimit, Limiter
from flask_limiter.errors import RateLimitExceeded

from evalserve.service.core.config import Settings
from evalserve.service.web.auth import caller_is_admin, caller_key
from evalserve.service.web.problems import problem_response

log = logging.getLogger(__name__)

#: the POST endpoints that upload files or queue work (``EVALSERVE_UPLOAD_RATE_LIMIT``)
UPLOAD_ENDPOINTS = frozenset({
    "collections.Collections", "runs.Runs", "evaluations.evaluate", "evaluations.submit",
    "evaluations.meta_evaluate", "tasks.Tasks", "tasks.Submissions", "tasks.Judgments",
})
REGISTER_ENDPOINT = "tasks.Participants"
EXEMPT_ENDPOINTS = frozenset({"health.health"})


def _exempt() -> bool:
    return request.endpoint in EXEMPT_ENDPOINTS or caller_is_admin()


def _not_upload() -> bool:
    return request.method != "POST" or request.endpoint not in UPLOAD_ENDPOINTS or _exempt()


def _not_registration() -> bool:
    return request.method != "POST" or request.endpoint != REGISTER_ENDPOINT or caller_is_admin()


def _registration_key() -> str:
    """Registration attempts count per caller and task: a wrong code cannot be guessed at request speed."""
    return f"{caller_key()}:task:{(request.view_args or {}).get('task_id', '')}"


def storage_uri(settings: Settings) -> str:
    """Redis when the deployment has one (shared by every API process), else this process's memory."""
    return "memory://" if settings.embedded_broker else settings.broker_url


def install_rate_limits(app: Flask, settings: Settings) -> Limiter:
    """Attach the deployment's request rate limits to ``app`` and answer a breach as 429 problem+json."""
    limits = settings.limits
    groups: list[str | Callable[[], str] | ApplicationLimit] = []
    if limits.rate:
        groups.append(ApplicationLimit(limits.rate, scope="requests", exempt_when=_exempt))
    if limits.upload_rate:
        groups.append(ApplicationLimit(limits.upload_rate, scope="uploads", exempt_when=_not_upload))
    if limits.register_rate:
        groups.append(ApplicationLimit(limits.register_rate, scope="registrations", exempt_when=_not_registration,
                                       key_function=_registration_key))
    limiter = Limiter(caller_key, application_limits=groups, storage_uri=storage_uri(settings),
                      key_prefix=f"{settings.queue}:ratelimit", strategy="fixed-window", headers_enabled=False,
                      swallow_errors=True, enabled=bool(groups))
    limiter.init_app(app)

    @app.errorhandler(RateLimitExceeded)
    def _rate_limited(error: RateLimitExceeded) -> Response:
        breached = limiter.current_limit
        wait = max(1, int(breached.reset_at - time.time()) + 1) if breached is not None else 60
        what = {"uploads": "uploads and queued work", "registrations": "registration attempts for this task"}.get(
            str(error.limit.scope), "requests")
        return problem_response(429, "rate-limited", f"too many {what}: at most {error.limit.limit} per caller;"
                                f" retry in {wait} s", headers={"Retry-After": str(wait)})

    return limiter
