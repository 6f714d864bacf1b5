"""How a job ends, for the runner and the split path alike: the ``error`` of a job that raised (input problems,
bad requests, the time limit, or a bug) and telling the process's listeners that it ended (``jobs.events``)."""

from __future__ import annotations

import logging
from typing import Any

from evalserve.service.core.config import Settings
from evalserve.service.core.engine_errors import engine_refusal
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.jobs import lifecycle as jobs
from evalserve.service.jobs.events import JobFinished
from evalserve.service.webhooks.delivery import publish_deliveries

log = logging.getLogger(__name__)


def announce(ctx: WorkerContext, job_id: str) -> None:
    """Tell the process's listeners (``jobs.events``) that the job ended and send the webhook deliveries they
    recorded; a listener's failure is logged and never fails the job."""
    for listener in ctx.listeners:
        try:
            ids = listener(ctx.db, ctx.blobs, JobFinished(job_id))
        except Exception:
            log.exception("a listener could not record the end of job %s", job_id)
            continue
        if ids and ctx.celery is not None:
            publish_deliveries(ctx.celery, ids)


def time_limit_error(settings: Settings) -> dict[str, Any]:
    """The ``error`` of a job over its time limit."""
    limit = settings.job_time_limit_seconds
    return jobs.error_detail(
        ProblemCode.TIME_LIMIT, f"the job ran longer than its limit of {limit:g} s (EVALSERVE_JOB_TIME_LIMIT_SECONDS)")


def failure(exc: BaseException, settings: Settings, time_limit_errors: tuple[type[BaseException], ...] = (),
            job_id: str = "") -> dict[str, Any]:
    """The ``error`` of a job that raised ``exc``: the engine's refusals (``core.engine_errors``), the time limit,
    or (a bug, a bare ``KeyError``/``ValueError`` included) an internal error, logged with its traceback."""
    refusal = engine_refusal(exc)
    if refusal is not None:  # input problems, a bad measure, or another request the engine cannot carry out
        return jobs.error_detail(ProblemCode(refusal.problem_code), refusal.detail, refusal.problems or None)
    if isinstance(exc, time_limit_errors):
        return time_limit_error(settings)
    log.error("job %s failed", job_id, exc_info=exc)  # a bug: record it on the job rather than leave it running
    return jobs.error_detail(ProblemCode.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
