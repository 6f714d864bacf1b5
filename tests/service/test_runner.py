"""The job runner and life cycle without a broker (``service.jobrun.runner.run_job`` called directly on a real SQLite
database): claiming is exclusive, finished jobs are skipped, input errors fail the job with the problem list,
blobs can live in a directory, the sweeper finds lost jobs."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalserve.service.access.tokens import create_token
from evalserve.service.core.config import Settings
from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.jobrun.runner import run_job
from evalserve.service.jobs import lifecycle as jobs
from evalserve.service.store.models import Job
from evalserve.service.web.app import create_app

RUN = b"1 Q0 d1 1 3.0 t\n1 Q0 d2 2 2.0 t\n2 Q0 d1 1 1.0 t\n"
QRELS = b"1 0 d1 1\n1 0 d3 1\n2 0 d2 1\n"


class Deployment:
    def __init__(self, tmp: Path, **env: str) -> None:
        self.settings = Settings.from_env({"EVALSERVE_DATA_DIR": str(tmp), "EVALSERVE_LEASE_SECONDS": "1", **env})
        self.app = create_app(self.settings, migrate=True)
        st = self.app.extensions["evalserve"]
        self.ctx = WorkerContext(self.settings, st.db, st.blobs)
        self.token = create_token(st.db, "t", ("read", "submit"))[1]
        self.http = self.app.test_client()

    def post(self, path: str, **kw: Any) -> Any:
        return self.http.post(path, headers={"Authorization": f"Bearer {self.token}"}, **kw)

    def job(self, measures: list[str], run: bytes = RUN) -> str:
        collection = self.post("/v1/collections", data={"name": "c", "qrels": (io.BytesIO(QRELS), "q")}).json["id"]
        run_id = self.post(f"/v1/runs?collection={collection}&name=a.run", data=run).json["id"]
        return str(self.post("/v1/evaluations", json={"collection": collection, "runs": [run_id],
                                                      "measures": measures}).json["id"])

    def row(self, job_id: str) -> Job:
        with self.ctx.db.session() as s:
            found = s.get(Job, job_id)
            assert found is not None
            return found


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    made = Deployment(tmp_path)
    yield made
    made.ctx.db.dispose()


def test_a_job_runs_once_and_a_repeated_message_is_harmless(deployment: Deployment) -> None:
    job_id = deployment.job(["AP", "P@1"])
    assert run_job(deployment.ctx, job_id) == "succeeded"
    assert run_job(deployment.ctx, job_id) == "skipped", "idempotent: a redelivered message changes nothing"
    row = deployment.row(job_id)
    assert row.state == "succeeded" and row.attempts == 1 and row.progress == 1.0 and row.result_sha256


def test_a_claim_is_exclusive_until_its_lease_expires(deployment: Deployment) -> None:
    job_id = deployment.job(["AP"])
    s = deployment.settings
    first = jobs.claim(deployment.ctx.db, job_id, "w1", s.lease_seconds, s.max_attempts)
    assert first is not None and first.attempt == 1
    assert jobs.claim(deployment.ctx.db, job_id, "w2", s.lease_seconds, s.max_attempts) is None
    time.sleep(1.2)
    assert jobs.jobs_to_republish(deployment.ctx.db, 60) == [job_id], "the sweeper sees the dead worker's job"
    second = jobs.claim(deployment.ctx.db, job_id, "w2", s.lease_seconds, s.max_attempts)
    assert second is not None and second.attempt == 2
    assert not jobs.finish(deployment.ctx.db, first, "succeeded"), "the first worker lost its lease"
    assert jobs.finish(deployment.ctx.db, second, "failed", error=jobs.error_detail("x", "y"))


def test_a_job_whose_workers_keep_dying_fails_after_max_attempts(tmp_path: Path) -> None:
    d = Deployment(tmp_path, EVALSERVE_MAX_ATTEMPTS="2")
    job_id = d.job(["AP"])
    for worker in ("w1", "w2"):
        assert jobs.claim(d.ctx.db, job_id, worker, 0.01, 2) is not None
        time.sleep(0.05)
    assert jobs.claim(d.ctx.db, job_id, "w3", 0.01, 2) is None
    row = d.row(job_id)
    assert row.state == "failed" and row.error is not None and row.error["code"] == "worker-lost"


def test_a_run_the_evaluation_cannot_use_fails_the_job_with_the_problem(deployment: Deployment) -> None:
    """A run whose rank column is not integer is accepted (a warning), but a job with ties=rank cannot use it."""
    job_id = deployment.job(["AP"], run=b"1 Q0 d1 one 3.0 t\n")
    with deployment.ctx.db.session() as s:
        row = s.get(Job, job_id)
        assert row is not None
        row.request = {**row.request, "ties": "rank"}
    assert run_job(deployment.ctx, job_id) == "failed"
    error = deployment.row(job_id).error
    assert error is not None and error["code"] == "invalid-input"
    assert error["problems"][0]["code"] == "rank-not-integer"


def test_a_run_with_no_judged_topic_fails_the_job_naming_the_run(deployment: Deployment) -> None:
    """No silent zeros over HTTP: the job fails with ``no-topics-scored`` and a problem whose source is the run."""
    job_id = deployment.job(["P@10"], run=b"q1 Q0 d1 1 3.0 t\nq2 Q0 d1 1 1.0 t\n")
    assert run_job(deployment.ctx, job_id) == "failed"
    job = deployment.http.get(f"/v1/jobs/{job_id}", headers={"Authorization": f"Bearer {deployment.token}"}).json
    assert job["state"] == "failed" and "result" not in job.get("links", {})
    error = job["error"]
    assert error["code"] == "no-topics-scored" and "a.run" in error["message"]
    [problem] = error["problems"]
    assert problem["code"] == "no-topics-scored" and problem["source"] == "a.run"
    assert "q1, q2" in problem["message"] and "1, 2" in problem["message"]


def test_judged_topics_missing_from_a_run_are_in_the_results_warnings(deployment: Deployment) -> None:
    job_id = deployment.job(["AP"], run=b"1 Q0 d1 1 3.0 t\n")  # topic 2 is judged but not in the run
    assert run_job(deployment.ctx, job_id) == "succeeded"
    doc = deployment.http.get(f"/v1/jobs/{job_id}/result",
                              headers={"Authorization": f"Bearer {deployment.token}"}).json
    [warning] = doc["meta"]["warnings"]
    assert warning["code"] == "topic-not-in-run" and warning["source"] == "a.run"
    assert warning["message"].startswith("1 of 2 judged topic(s) are missing from the run")
    assert "--topics complete would score them 0" in warning["message"]


def test_blobs_can_live_in_a_directory(tmp_path: Path) -> None:
    d = Deployment(tmp_path / "home", EVALSERVE_BLOB_DIR=str(tmp_path / "blobs"))
    job_id = d.job(["AP"])
    assert run_job(d.ctx, job_id) == "succeeded"
    stored = sorted(p.name for p in (tmp_path / "blobs").rglob("*") if p.is_file())
    # qrels, run, result and what the worker built from it: report content, HTML, LaTeX (plots: when asked for)
    assert d.row(job_id).result_sha256 in stored and len(stored) == 6
