"""Fault tests on real processes: nothing accepted is lost when a worker is killed mid-job, the API restarts
between submit and poll, or Redis restarts (losing its queued messages) -- the database is the source of truth,
leases expire and the sweeper re-publishes (``service.jobs``, ``service.jobrun.recovery``)."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.service.live import FAST_RECOVERY, LiveService, free_port

#: slow enough that a job is still running when the test kills its worker
HEAVY_MEASURES = ["AP", "nDCG@10", "alpha_nDCG@20", "nERR_IA@20", "NRBP", "AP_IA", "RBU", "D_nDCG@20", "EU"]


@pytest.fixture(scope="module")
def files(shared_data: Path) -> dict[str, Path]:
    return {"qrels": shared_data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt",
            "run": shared_data / "trec-web-2012-runs" / "runs" / "ql-results-catb.txt.gz"}


def _collection(http: httpx.Client, files: dict[str, Path]) -> str:
    created = http.post("/v1/collections", data={"name": "web2012"}, files={"qrels": files["qrels"].open("rb")})
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def _heavy_job(http: httpx.Client, files: dict[str, Path], copies: int) -> str:
    """A job over many copies of a 49,000-line run (stored once: blobs are content-addressed)."""
    collection = _collection(http, files)
    data = files["run"].read_bytes()
    runs = [http.post("/v1/runs", params={"collection": collection, "name": f"copy{i}.run.gz"}, content=data)
            for i in range(copies)]
    assert all(r.status_code == 201 for r in runs)
    job = http.post("/v1/evaluations", json={"collection": collection, "runs": [r.json()["id"] for r in runs],
                                             "measures": HEAVY_MEASURES})
    assert job.status_code == 202, job.text
    return str(job.json()["id"])


def _reference(http: httpx.Client, files: dict[str, Path], service: LiveService) -> dict[str, object]:
    """The result of a one-run job, to compare the recovered jobs with."""
    collection = _collection(http, files)
    job = http.post("/v1/submissions", data={"collection": collection, "measures": " ".join(HEAVY_MEASURES)},
                    files={"run": ("copy0.run.gz", files["run"].read_bytes())})
    done = service.wait_job(http, job.json()["id"])
    assert done["state"] == "succeeded", done
    result: dict[str, object] = http.get(f"/v1/jobs/{done['id']}/result").json()["runs"]["copy0.run"]
    return result


@pytest.mark.parametrize("backend", ["embedded", "redis-postgres"])
def test_a_worker_killed_mid_job_loses_nothing(stack: Callable[..., LiveService], files: dict[str, Path],
                                               backend: str) -> None:
    # unsplit: one worker holds the whole job (test_split_live.py kills the worker of a split job's part)
    service = stack(backend, **FAST_RECOVERY, EVALSERVE_SPLIT_RUNS="0")
    service.start_api()
    with service.client() as http:
        job_id = _heavy_job(http, files, copies=30)
        worker = service.start_worker()
        running = service.wait_job(http, job_id, states=("running", "succeeded"), timeout=60)
        assert running["state"] == "running", "the job finished before it could be interrupted; make it heavier"
        LiveService.kill(worker, signal.SIGKILL)  # the worker's supervisor and its processes, without warning
        assert http.get(f"/v1/jobs/{job_id}").json()["state"] == "running", "nobody finished it"
        service.start_worker()  # a fresh worker: its sweeper finds the expired lease and re-publishes the job
        done = service.wait_job(http, job_id, timeout=180)
        assert done["state"] == "succeeded", done
        assert done["attempts"] == 2
        result = http.get(f"/v1/jobs/{job_id}/result").json()
        assert len(result["runs"]) == 30
        assert result["runs"]["copy29.run"] == _reference(http, files, service)


@pytest.mark.parametrize("backend", ["embedded", "redis-postgres"])
def test_the_api_restarted_between_submit_and_poll_loses_nothing(stack: Callable[..., LiveService],
                                                                 files: dict[str, Path], backend: str) -> None:
    service = stack(backend, **FAST_RECOVERY)
    service.start_api()
    with service.client() as http:
        collection = _collection(http, files)
        job = http.post("/v1/submissions", data={"collection": collection, "measures": "AP nDCG@10"},
                        files={"run": files["run"].open("rb")})
        assert job.status_code == 202
    service.stop_api(signal.SIGKILL)  # nothing graceful: what was acknowledged must already be durable
    service.start_worker()
    service.start_api()
    with service.client() as http:
        done = service.wait_job(http, job.json()["id"])
        assert done["state"] == "succeeded", done
        assert http.get(f"/v1/collections/{collection}").status_code == 200
        assert set(http.get(f"/v1/jobs/{done['id']}/result").json()["runs"]) == {"ql-results-catb.txt"}


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[Callable[[str], str]]:
    """A Redis server of this test's own (so restarting it disturbs nobody): ``control("start"|"stop")``."""
    port = free_port()
    procs: list[subprocess.Popen[bytes]] = []

    def control(action: str) -> str:
        if action == "start":
            procs.append(subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                           "--appendonly", "no", "--dir", str(tmp_path)],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            deadline = time.monotonic() + 10
            import redis

            while time.monotonic() < deadline:
                try:
                    if redis.Redis(port=port, socket_timeout=1).ping():
                        break
                except redis.RedisError:
                    time.sleep(0.1)
        else:
            for p in procs:
                p.kill()
                p.wait()
            procs.clear()
        return f"redis://127.0.0.1:{port}/0"

    yield control
    control("stop")


def test_jobs_queued_when_redis_restarts_are_re_enqueued_from_the_database(
        stack: Callable[..., LiveService], files: dict[str, Path], private_redis: Callable[[str], str]) -> None:
    url = private_redis("start")
    service = stack("redis-postgres", **FAST_RECOVERY, REDIS_URL_OVERRIDE=url)
    service.env["REDIS_URL"] = url
    service.start_api()
    with service.client() as http:
        collection = _collection(http, files)
        ids = [http.post("/v1/submissions", data={"collection": collection, "measures": "AP"},
                         files={"run": (f"r{i}.run", files["run"].read_bytes())}).json()["id"] for i in range(3)]
        private_redis("stop")  # the queued messages are gone with it (no persistence)
        private_redis("start")
        late = http.post("/v1/submissions", data={"collection": collection, "measures": "AP"},
                         files={"run": ("late.run", files["run"].read_bytes())})
        assert late.status_code == 202
        service.start_worker()
        for job_id in [*ids, late.json()["id"]]:
            assert service.wait_job(http, job_id, timeout=120)["state"] == "succeeded"


def test_a_submission_while_the_broker_is_down_is_kept_and_run_later(
        stack: Callable[..., LiveService], files: dict[str, Path], private_redis: Callable[[str], str]) -> None:
    url = private_redis("start")
    service = stack("redis-postgres", **FAST_RECOVERY)
    service.env["REDIS_URL"] = url
    service.start_api()
    with service.client() as http:
        collection = _collection(http, files)
        private_redis("stop")
        job = http.post("/v1/submissions", data={"collection": collection, "measures": "AP"},
                        files={"run": files["run"].open("rb")})
        assert job.status_code == 202, "accepted: the job is durable in the database"
        assert http.get("/health").status_code == 503
        private_redis("start")
        service.start_worker()
        assert service.wait_job(http, job.json()["id"], timeout=120)["state"] == "succeeded"


def test_a_running_job_reports_progress_and_can_be_cancelled(stack: Callable[..., LiveService],
                                                             files: dict[str, Path]) -> None:
    service = stack("embedded", **FAST_RECOVERY, EVALSERVE_SPLIT_RUNS="0")  # per-run stages of one worker
    service.start_api()
    with service.client() as http:
        job_id = _heavy_job(http, files, copies=80)
        service.start_worker()
        seen: list[tuple[str, float]] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            job = http.get(f"/v1/jobs/{job_id}").json()
            if job["state"] == "running" and job["stage"].startswith(("reading run", "evaluating run")):
                seen.append((job["stage"], job["progress"]))
                if seen[-1][1] > 0:
                    break
            assert job["state"] in ("queued", "running"), job
            time.sleep(0.05)
        assert seen and 0 < seen[-1][1] < 0.9 and " of 80: " in seen[-1][0], seen
        assert http.delete(f"/v1/jobs/{job_id}").json()["state"] in ("running", "cancelled")
        done = service.wait_job(http, job_id, timeout=60)
        assert done["state"] == "cancelled", done
        assert done["attempts"] == 1
        assert http.get(f"/v1/jobs/{job_id}/result").status_code == 409
