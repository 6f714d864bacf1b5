"""``GET /health``: is the database reachable, does the broker answer."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint
from sqlalchemy import text

from evaluation.report import engine_version
from service.schemas import HealthSchema
from service.state import state

blp = Blueprint("health", __name__, url_prefix="/health", description="Liveness and dependencies")


@blp.route("")
@blp.response(200, HealthSchema)
@blp.alt_response(503, schema=HealthSchema, description="a dependency is down")
@blp.doc(security=[])  # public: no token needed
def health() -> Any:
    st = state()
    report = {"status": "ok", "database": "ok", "broker": "ok", "version": engine_version()}
    try:
        with st.db.session() as s:
            s.execute(text("SELECT 1"))
    except Exception as exc:
        report["database"] = f"unavailable: {type(exc).__name__}"
    try:
        with st.queue.celery.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:
        report["broker"] = f"unavailable: {type(exc).__name__}"
    if report["database"] != "ok" or report["broker"] != "ok":
        report["status"] = "degraded"
        return report, 503
    return report
