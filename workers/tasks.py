"""Celery tasks: thin wrappers that hand a job id to ``jobrun.runner`` (or ``jobrun.drawing``), a webhook delivery
id to ``webhooks.delivery.deliver`` or a shared task id to ``shared_tasks.stored.refresh_task`` (or
``shared_tasks.report.build_report``). Idempotent (a job or delivery attempt already finished or held by another
worker is skipped, a leaderboard of unchanged inputs is not computed again, a plot or report is built once),
acknowledged late, retried with backoff when the database is unavailable."""

from __future__ import annotations

from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from sqlalchemy.exc import OperationalError

from evalserve.service.broker.messages import (
    BUILD_REPORT_TASK,
    DELIVER_WEBHOOK_TASK,
    DRAW_PLOTS_TASK,
    EVALUATE_PART_TASK,
    EVALUATE_TASK,
    REFRESH_TASK_TASK,
)
from evalserve.service.jobrun.context import context_for
from evalserve.service.jobrun.drawing import draw_plots as draw_job_plots
from evalserve.service.jobrun.heartbeat import install as install_heartbeat
from evalserve.service.jobrun.memory import install as install_recycler
from evalserve.service.jobrun.recovery import install as install_sweeper
from evalserve.service.jobrun.runner import run_job
from evalserve.service.jobrun.split import run_part
from evalserve.service.jobrun.time_limit import time_limit
from evalserve.service.shared_tasks.report import build_report as build_task_report
from evalserve.service.shared_tasks.stored import refresh_task as refresh_stored
from evalserve.service.webhooks import delivery as webhooks
from evalserve.workers.celery_app import app


@app.task(name=EVALUATE_TASK, bind=True, acks_late=True, reject_on_worker_lost=True,
          autoretry_for=(OperationalError,), retry_backoff=True, retry_backoff_max=60, max_retries=10)
def evaluate(self: Any, job_id: str) -> str:
    """Run evaluation job ``job_id`` (the job's row holds everything else), under the job time limits (the
    single-process workers enforce them themselves: ``jobrun.time_limit``)."""
    ctx = context_for(self.app)
    soft = ctx.settings.job_time_limit_seconds
    with time_limit(soft, soft + 60):
        return run_job(ctx, job_id, (SoftTimeLimitExceeded,))


@app.task(name=EVALUATE_PART_TASK, bind=True, acks_late=True, reject_on_worker_lost=True,
          autoretry_for=(OperationalError,), retry_backoff=True, retry_backoff_max=60, max_retries=10)
def evaluate_part(self: Any, job_id: str, index: int) -> str:
    """Run part ``index`` of split job ``job_id`` (``jobrun.split``) under what is left of the job's time
    limits; the part that finishes last merges the job."""
    ctx = context_for(self.app)
    return run_part(ctx, job_id, index, (SoftTimeLimitExceeded,), lambda soft: time_limit(soft, soft + 60))


@app.task(name=DELIVER_WEBHOOK_TASK, bind=True, acks_late=True, reject_on_worker_lost=True,
          autoretry_for=(OperationalError,), retry_backoff=True, retry_backoff_max=60, max_retries=10)
def deliver_webhook(self: Any, delivery_id: str) -> str:
    """Make one attempt at webhook delivery ``delivery_id``; after a failed (or deferred) one, publish the next
    for its time."""
    ctx = context_for(self.app)
    outcome = webhooks.deliver(ctx.db, delivery_id, ctx.settings)
    if outcome in webhooks.REPUBLISH:  # retried later, or deferred by a fairness cap
        wait = webhooks.seconds_until_due(ctx.db, delivery_id)
        if wait is not None:
            webhooks.publish_deliveries(self.app, [delivery_id], countdown=wait)
    return outcome


@app.task(name=DRAW_PLOTS_TASK, bind=True, acks_late=True, reject_on_worker_lost=True,
          autoretry_for=(OperationalError,), retry_backoff=True, retry_backoff_max=60, max_retries=10)
def draw_plots(self: Any, job_id: str) -> str:
    """Draw succeeded job ``job_id``'s plot, asked for the first time (idempotent: drawn once)."""
    return draw_job_plots(context_for(self.app), job_id)


@app.task(name=REFRESH_TASK_TASK, bind=True, acks_late=True, reject_on_worker_lost=True,
          autoretry_for=(OperationalError,), retry_backoff=True, retry_backoff_max=60, max_retries=10)
def refresh_task(self: Any, task_id: str) -> int:
    """Recompute shared task ``task_id``'s stored leaderboards whose inputs changed (a setting, a phase, a
    selection); idempotent: boards of unchanged inputs are left as stored."""
    ctx = context_for(self.app)
    return refresh_stored(ctx.db, ctx.blobs, task_id)


@app.task(name=BUILD_REPORT_TASK, bind=True, acks_late=True, reject_on_worker_lost=True,
          autoretry_for=(OperationalError,), retry_backoff=True, retry_backoff_max=60, max_retries=10)
def build_report(self: Any, task_id: str, phase_id: str, version: int) -> str:
    """Build and store shared task ``task_id``'s end-of-task report of a phase at a judgments version, asked for
    by an organiser (idempotent: a report of unchanged inputs is built once)."""
    ctx = context_for(self.app)
    return build_task_report(ctx.db, ctx.blobs, task_id, phase_id, version)


install_sweeper(app)
install_heartbeat(app)
install_recycler(app)
