"""``GET /health``: is the database reachable, does the broker answer, are workers alive, is the queue moving.

503 when the database or the broker is down (the API cannot do its work); 200 with ``"status": "degraded"`` when
the API is fine but no worker has heartbeated recently or a job has waited too long (work is accepted and kept,
but not being done: restart or add workers) or the rate limits' storage is down (uploads and registration attempts
are refused until it is back)."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from evalserve.service.jobs.health import health_report
from evalserve.service.web.context import state
from evalserve.service.web.ratelimits import rate_limits_status
from evalserve.service.web.schemas import HealthSchema
from evalserve.service.web.waiting import wait_count

blp = Blueprint("health", __name__, url_prefix="/health", description="Liveness and dependencies")


@blp.route("")
@blp.response(200, HealthSchema)
@blp.alt_response(503, schema=HealthSchema, description="the database or the broker is down")
@blp.doc(security=[])  # public: no token needed
def health() -> Any:
    report, status = health_report(state())
    limits = rate_limits_status()
    if limits is not None:
        report["rate_limits"] = limits
        if limits["storage"] != "ok":
            report["status"] = "degraded"
            report["problems"].append(f"rate limits' storage {limits['where']} {limits['storage']}: uploads and"
                                      " registration attempts are refused (503) until it is back")
    waits = wait_count()
    if waits is not None:  # this process's parked long-polls (web.waiting)
        report["waits"] = waits.snapshot()
    return report, status
