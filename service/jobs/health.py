"""The deployment's health, Flask-free: is the database reachable (one session), does the broker answer, are
workers alive, is the queue moving. ``GET /health`` answers the report with the status it gives."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from evalserve.service.broker.probe import check_broker
from evalserve.service.core.state import ServiceState
from evalserve.service.jobs import worker_status
from evaluation.report import engine_version


def health_report(st: ServiceState) -> tuple[dict[str, Any], int]:
    """The report and its HTTP status: 503 when the database or the broker is down; 200 otherwise, ``degraded``
    when no worker has heartbeated recently or a job has waited too long."""
    settings = st.settings
    report: dict[str, Any] = {"status": "ok", "database": "ok", "broker": "ok", "version": engine_version(),
                              "problems": []}
    try:
        with st.db.session() as s:
            s.execute(text("SELECT 1"))
            report["workers"] = worker_status.workers_summary(s, settings.queue,
                                                              settings.health_worker_stale_seconds)
            report["queue"] = worker_status.queue_summary(s)
    except Exception as exc:
        report["database"] = f"unavailable: {type(exc).__name__}"
    try:
        check_broker(st.queue.celery, timeout=2)
    except Exception as exc:
        report["broker"] = f"unavailable: {type(exc).__name__}"
    if report["database"] != "ok" or report["broker"] != "ok":
        report["status"] = "degraded"
        report["problems"] = [f"{name} {report[name]}" for name in ("database", "broker") if report[name] != "ok"]
        return report, 503
    report["problems"] = _work_problems(report["workers"], report["queue"], settings.health_worker_stale_seconds,
                                        settings.health_queue_stale_seconds)
    if report["problems"]:
        report["status"] = "degraded"
    return report, 200


def _work_problems(workers: dict[str, Any], queue: dict[str, Any], worker_stale: float,
                   queue_stale: float) -> list[str]:
    """Why the work is not being done, if it is not: no live worker, or a job waiting too long."""
    problems = []
    if workers["alive"] == 0:
        problems.append(f"no worker has sent a heartbeat in the last {worker_stale:g} s"
                        " (EVALSERVE_HEALTH_WORKER_STALE_SECONDS)")
    oldest = queue["oldest_queued_age_seconds"]
    if oldest is not None and oldest > queue_stale:
        problems.append(f"the oldest queued job has waited {oldest:g} s, more than {queue_stale:g} s"
                        " (EVALSERVE_HEALTH_QUEUE_STALE_SECONDS)")
    return problems
