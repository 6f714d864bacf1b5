"""``GET /health``: is the database reachable, does the broker answer, are workers alive, is the queue moving.

503 when the database or the broker is down (the API cannot do its work); 200 with ``"status": "degraded"`` when
the API is fine but no worker has heartbeated recently or a job has waited too long (work is accepted and kept,
but not being done: restart or add workers)."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint
from sqlalchemy import text

from evaluation.report import engine_version
from service import worker_status
from service.schemas import HealthSchema
from service.state import state

blp = Blueprint("health", __name__, url_prefix="/health", description="Liveness and dependencies")


@blp.route("")
@blp.response(200, HealthSchema)
@blp.alt_response(503, schema=HealthSchema, description="the database or the broker is down")
@blp.doc(security=[])  # public: no token needed
def health() -> Any:
    st = state()
    settings = st.settings
    report: dict[str, Any] = {"status": "ok", "database": "ok", "broker": "ok", "version": engine_version(),
                              "problems": []}
    try:
        with st.db.session() as s:
            s.execute(text("SELECT 1"))
        report["workers"] = worker_status.workers_summary(st.db, settings.queue, settings.health_worker_stale_seconds)
        report["queue"] = worker_status.queue_summary(st.db)
    except Exception as exc:
        report["database"] = f"unavailable: {type(exc).__name__}"
    try:
        with st.queue.celery.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
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
    return report


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
