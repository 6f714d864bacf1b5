"""The tasks the service publishes, by name (the service never imports the task code in ``workers.tasks``), and
the one way to publish them."""

from __future__ import annotations

from collections.abc import Sequence

from celery import Celery

EVALUATE_TASK = "evalserve.evaluate"
EVALUATE_PART_TASK = "evalserve.evaluate_part"  # one part of a split job (jobrun.split)
DELIVER_WEBHOOK_TASK = "evalserve.deliver_webhook"
REFRESH_TASK_TASK = "evalserve.refresh_task"  # recompute a shared task's stored leaderboards (shared_tasks.stored)
DRAW_PLOTS_TASK = "evalserve.draw_plots"  # draw a succeeded job's plot when first asked for (jobrun.drawing)
BUILD_REPORT_TASK = "evalserve.build_report"  # build a task's report when first asked for (shared_tasks.report)

#: a publish the broker refuses is tried twice more, quickly; after that the caller falls back to the sweeper
RETRY_POLICY = {"max_retries": 2, "interval_start": 0.2, "interval_step": 0.5}


def publish(celery: Celery, task: str, args: Sequence[object], *, queue: str, countdown: float | None = None,
            retry: bool = True) -> None:
    """Send one message for ``task`` to ``queue`` (after ``countdown`` seconds if given); raises when the broker
    does not take it. ``retry``: try again per ``RETRY_POLICY`` first."""
    options: dict[str, object] = {"queue": queue}
    if countdown is not None:
        options["countdown"] = countdown
    if retry:
        options.update(retry=True, retry_policy=RETRY_POLICY)
    celery.send_task(task, args=list(args), **options)
