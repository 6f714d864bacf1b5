"""``GET /health`` in process: 200 "ok" with a live worker and a moving queue; 200 "degraded" (with the reason)
when no worker has heartbeated recently or a job has waited too long; the counts it reports."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalserve.service.jobs import worker_status
from evalserve.service.store.db import Database
from tests.service.test_api import Api


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    made = Api(tmp_path, EVALSERVE_HEALTH_WORKER_STALE_SECONDS="30", EVALSERVE_HEALTH_QUEUE_STALE_SECONDS="300")
    yield made
    made.app.extensions["evalserve"].db.dispose()


def _health(api: Api) -> dict[str, Any]:
    response = api.client.get("/health")
    assert response.status_code == 200, response.get_data(as_text=True)
    body: dict[str, Any] = response.json or {}
    return body


def _db(api: Api) -> Database:
    db: Database = api.app.extensions["evalserve"].db
    return db


def test_no_worker_is_degraded_but_200(api: Api) -> None:
    body = _health(api)
    assert body["status"] == "degraded" and body["database"] == "ok" and body["broker"] == "ok"
    assert body["workers"] == {"alive": 0, "newest_heartbeat_age_seconds": None}
    assert body["queue"] == {"queued": 0, "oldest_queued_age_seconds": None}
    assert "EVALSERVE_HEALTH_WORKER_STALE_SECONDS" in body["problems"][0]


def test_a_recent_heartbeat_of_an_evaluation_worker_makes_it_ok(api: Api) -> None:
    queue = api.settings.queue
    worker_status.record_heartbeat(_db(api), "webhooks-1@host", "host", 1, [f"{queue}.webhooks"])
    assert _health(api)["status"] == "degraded", "a webhook worker runs no evaluations"
    worker_status.record_heartbeat(_db(api), "eval1-1@host", "host", 2, [queue])
    worker_status.record_heartbeat(_db(api), "eval1-1@host", "host", 3, [queue])  # the same row, updated
    body = _health(api)
    assert body["status"] == "ok" and body["problems"] == []
    assert body["workers"]["alive"] == 1 and body["workers"]["newest_heartbeat_age_seconds"] < 5
    worker_status.forget(_db(api), "eval1-1@host")
    assert _health(api)["workers"]["alive"] == 0


def test_stale_heartbeats_and_old_queued_jobs_are_degraded(tmp_path: Path) -> None:
    api = Api(tmp_path, EVALSERVE_HEALTH_WORKER_STALE_SECONDS="0", EVALSERVE_HEALTH_QUEUE_STALE_SECONDS="0")
    try:
        worker_status.record_heartbeat(_db(api), "eval1-1@host", "host", 2, [api.settings.queue])
        collection = api.collection()
        job = api.call("POST", "/v1/evaluations", json={"collection": collection, "runs": [api.run(collection)],
                                                        "measures": ["AP"]})
        assert job.status_code == 202
        time.sleep(0.2)  # the age is shown to 0.1 s: a job younger than 0.05 s reads 0.0, not more than 0
        body = _health(api)
        assert body["status"] == "degraded" and body["queue"]["queued"] == 1
        assert body["workers"]["alive"] == 0 and body["workers"]["newest_heartbeat_age_seconds"] is not None
        assert any("oldest queued job" in p for p in body["problems"]), body
        assert worker_status.prune(_db(api), 0) == 1
    finally:
        api.app.extensions["evalserve"].db.dispose()
