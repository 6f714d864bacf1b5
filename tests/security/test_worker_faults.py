"""Workers that heal, on the embedded default, with the real ``evalserve serve`` command: a SIGKILLed evaluation
worker (idle or busy, what the OOM killer sends) or a killed worker main process is restarted by serve and
nothing stalls; ``/health`` says ``degraded`` while no worker is alive; SIGTERM stops serve and every child
within 10 s."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalserve.cli.main import main as cli_main
from evalserve.cli.serve import worker_command
from tests.service.live import FAST_RECOVERY, ROOT, LiveService, free_port, service_env

MEASURES = ["AP", "P@10", "nDCG@10"]


@dataclass
class Served:
    """A running ``evalserve serve``: its process, URL, admin token and environment."""

    proc: subprocess.Popen[bytes]
    url: str
    token: str
    env: dict[str, str]
    log: Path

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60, headers={"Authorization": f"Bearer {self.token}"})

    def children(self) -> dict[int, str]:
        """serve's child processes: pid -> command line."""
        return {pid: cmdline(pid) for pid in child_pids(self.proc.pid)}

    def evaluation_workers(self) -> list[int]:
        return sorted(pid for pid, cmd in self.children().items() if "--pool solo" in cmd)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


def child_pids(pid: int) -> list[int]:
    with contextlib.suppress(OSError):
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    return []


def cmdline(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    return ""


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


def health(url: str) -> tuple[int, dict[str, Any]]:
    response = httpx.get(url + "/health", timeout=5)
    return response.status_code, response.json()


def wait_for(condition: Any, timeout: float, what: str, step: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


@contextlib.contextmanager
def serve(tmp_path: Path, *options: str, **env: str) -> Iterator[Served]:
    """``evalserve serve`` on a free port (embedded default, fast recovery), stopped with SIGTERM afterwards."""
    environ = service_env(tmp_path, "embedded", **{**FAST_RECOVERY, "EVALSERVE_WORKER_HEARTBEAT_SECONDS": "1", **env})
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "evalserve.cli.main", "serve", "--port", str(port), *options],
                                env=environ, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    served = Served(proc, f"http://127.0.0.1:{port}", "", environ, log)
    try:
        wait_for(lambda: "evalserve is running" in log.read_text(errors="replace") or proc.poll() is not None, 90,
                 "serve's banner")
        assert proc.poll() is None, served.tail()
        served.token = (tmp_path / "data" / "admin-token").read_text().strip()
        yield served
    finally:
        stop_serve(proc)


def stop_serve(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to ``serve``, then SIGKILL to every process it started and its group: never leave a process
    behind, even when the test failed."""
    if proc.poll() is None:
        descendants = [p for c in child_pids(proc.pid) for p in (c, *child_pids(c))]
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        finally:
            for pid in descendants:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def trec(shared_data: Path) -> dict[str, Path]:
    base = shared_data / "trec_eval-test"
    return {"qrels": base / "qrels.test", "run": base / "results.test"}


def offline(trec: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """What ``evalserve evaluate`` computes for the same files (the same engine, no service)."""
    capsys.readouterr()
    assert cli_main(["evaluate", "--qrels", str(trec["qrels"]), "--run", str(trec["run"]), "-m", *MEASURES,
                     "--format", "json", "--per-topic", "-q"]) == 0
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


def collection(http: httpx.Client, qrels: Path) -> str:
    created = http.post("/v1/collections", data={"name": qrels.name}, files={"qrels": qrels.open("rb")})
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def submit(http: httpx.Client, collection_id: str, run: Path) -> str:
    job = http.post("/v1/submissions", data={"collection": collection_id, "measures": " ".join(MEASURES),
                                             "per_topic": "true"}, files={"run": (run.name, run.read_bytes())})
    assert job.status_code == 202, job.text
    return str(job.json()["id"])


def wait_jobs(http: httpx.Client, ids: list[str], timeout: float) -> dict[str, dict[str, Any]]:
    """Every job's final state, or an assertion naming the ones still unfinished after ``timeout``."""
    deadline = time.monotonic() + timeout
    done: dict[str, dict[str, Any]] = {}
    while time.monotonic() < deadline and len(done) < len(ids):
        for job_id in ids:
            if job_id not in done:
                job = http.get(f"/v1/jobs/{job_id}").json()
                if job["state"] in ("succeeded", "failed", "cancelled"):
                    done[job_id] = job
        time.sleep(0.3)
    missing = {i: http.get(f"/v1/jobs/{i}").json()["state"] for i in ids if i not in done}
    assert not missing, f"jobs not finished within {timeout} s: {missing}"
    return done


def heavy_job(http: httpx.Client, shared_data: Path) -> httpx.Response:
    """A job that runs a while: many copies of a 49,000-line run (stored once: blobs are content-addressed)."""
    web = shared_data / "trec-web-2012-runs" / "runs" / "ql-results-catb.txt.gz"
    web_collection = collection(http, shared_data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt")
    runs = [http.post("/v1/runs", params={"collection": web_collection, "name": f"copy{i}.run.gz"},
                      content=web.read_bytes()).json()["id"] for i in range(80)]
    job = http.post("/v1/evaluations", json={"collection": web_collection, "runs": runs,
                                             "measures": ["AP", "nDCG@10", "alpha_nDCG@20", "NRBP", "EU"]})
    assert job.status_code == 202, job.text
    return job


def lease_owner_pid(served: Served, job_id: str) -> int | None:
    """The pid of the worker process holding the job's lease (``host:pid:suffix``), read from the database."""
    from evalserve.service.core.config import Settings
    from evalserve.service.store.db import Database
    from evalserve.service.store.models import Job

    db = Database(Settings.from_env(served.env).database_url)
    try:
        with db.session() as s:
            job = s.get(Job, job_id)
            owner = job.lease_owner if job is not None and job.state == "running" else None
    finally:
        db.dispose()
    return int(owner.split(":")[1]) if owner else None


def test_killed_idle_and_busy_workers_are_replaced_and_nothing_stalls(
        tmp_path: Path, trec: dict[str, Path], shared_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = offline(trec, capsys)
    # unsplit, so one worker holds the heavy job (tests/service/test_split_live.py kills a split job's worker)
    with serve(tmp_path, "--concurrency", "2", EVALSERVE_SPLIT_RUNS="0") as served, served.client() as http:
        wait_for(lambda: health(served.url)[1]["workers"]["alive"] == 2, 30, "two live workers")
        idle = served.evaluation_workers()
        assert len(idle) == 2, served.children()

        # an idle pool process killed (what wedged the prefork pool on the embedded broker)
        os.kill(idle[0], signal.SIGKILL)
        wait_for(lambda: len(served.evaluation_workers()) == 2 and idle[0] not in served.evaluation_workers(), 30,
                 "serve to replace the killed idle worker")

        # a busy one killed mid-job
        heavy = heavy_job(http, shared_data)
        busy = wait_for(lambda: lease_owner_pid(served, heavy.json()["id"]), 60, "the heavy job to start")
        assert busy in served.evaluation_workers()
        os.kill(busy, signal.SIGKILL)

        # twenty jobs afterwards: all succeed within 60 s, with the offline results
        trec_collection = collection(http, trec["qrels"])
        started = time.monotonic()
        ids = [submit(http, trec_collection, trec["run"]) for _ in range(20)]
        done = wait_jobs(http, ids, timeout=60)
        assert all(job["state"] == "succeeded" for job in done.values()), done
        assert time.monotonic() - started < 60
        for job_id in ids:
            assert http.get(f"/v1/jobs/{job_id}/result").json() == expected
        # the jobs may all be done before the supervisor's backoff restarts the killed worker: wait for it
        wait_for(lambda: busy not in served.evaluation_workers() and len(served.evaluation_workers()) == 2, 30,
                 "serve to replace the killed busy worker")

        # the interrupted job was re-run from its lease, not lost
        rerun = wait_jobs(http, [heavy.json()["id"]], timeout=240)[heavy.json()["id"]]
        assert rerun["state"] == "succeeded" and rerun["attempts"] == 2, rerun
        assert served.log.read_text(errors="replace").count("exited with signal SIGKILL") == 2


def is_celery(cmd: str) -> bool:
    """A Celery worker's main process as ``serve`` starts it (``python -m evalserve.cli.celery_worker ...``,
    Celery's own command line; ``celery ...`` before)."""
    return " celery " in cmd or "evalserve.cli.celery_worker " in cmd


def test_killed_worker_main_processes_are_restarted_and_the_api_stays_up(
        tmp_path: Path, trec: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    expected = offline(trec, capsys)
    with serve(tmp_path, "--concurrency", "2") as served, served.client() as http:
        wait_for(lambda: health(served.url)[1]["workers"]["alive"] == 2, 30, "two live workers")
        before = served.children()
        celery = [pid for pid, cmd in before.items() if is_celery(cmd)]
        assert len(celery) == 3, before  # two evaluation workers and the webhook worker
        for pid in celery:
            os.kill(pid, signal.SIGKILL)
        statuses = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # the API answers throughout; the workers come back
            statuses.append(health(served.url)[0])
            now = served.children()
            if len([p for p, cmd in now.items() if is_celery(cmd) and p not in celery]) == 3:
                break
            time.sleep(0.2)
        assert set(statuses) == {200}, statuses
        assert len([p for p, cmd in served.children().items() if is_celery(cmd) and p not in celery]) == 3
        assert served.proc.poll() is None
        job = submit(http, collection(http, trec["qrels"]), trec["run"])
        assert wait_jobs(http, [job], timeout=60)[job]["state"] == "succeeded"
        assert http.get(f"/v1/jobs/{job}/result").json() == expected

        # SIGTERM: serve and every child (gunicorn's workers too) gone within 10 s
        everyone = [served.proc.pid, *[p for c in child_pids(served.proc.pid) for p in (c, *child_pids(c))]]
        started = time.monotonic()
        served.proc.send_signal(signal.SIGTERM)
        served.proc.wait(timeout=10)
        wait_for(lambda: not any(alive(p) for p in everyone), max(0.5, 10 - (time.monotonic() - started)),
                 "every child of serve to exit")
        assert served.proc.returncode == 0


def test_health_is_degraded_while_no_worker_is_alive(tmp_path: Path) -> None:
    with serve(tmp_path, "--no-worker", EVALSERVE_HEALTH_WORKER_STALE_SECONDS="5") as served:
        status, report = health(served.url)
        assert status == 200 and report["status"] == "degraded", report
        assert report["workers"]["alive"] == 0 and report["problems"], report
        worker = LiveService(served.env, logs=tmp_path)
        proc = worker.start_worker(concurrency=1)
        try:
            report = wait_for(lambda: (r := health(served.url)[1])["status"] == "ok" and r, 60, "a heartbeat")
            assert report["workers"]["alive"] == 1 and report["workers"]["newest_heartbeat_age_seconds"] < 5
            LiveService.kill(proc, signal.SIGKILL)  # the worker and its processes, without warning
            report = wait_for(lambda: (r := health(served.url)[1])["status"] == "degraded" and r, 60,
                              "the heartbeat to go stale")
            assert report["workers"]["alive"] == 0 and health(served.url)[0] == 200
        finally:
            LiveService.kill(proc, signal.SIGKILL)
    assert worker_command(1)[:4] == [sys.executable, "-m", "evalserve.cli.main", "worker"]


def test_single_process_workers_enforce_the_job_time_limit(tmp_path: Path, shared_data: Path) -> None:
    """Celery applies time limits only in its prefork pool: the solo workers apply their own."""
    with serve(tmp_path, "--concurrency", "1", EVALSERVE_JOB_TIME_LIMIT_SECONDS="0.5") as served, \
            served.client() as http:
        job = heavy_job(http, shared_data).json()["id"]
        done = wait_jobs(http, [job], timeout=120)[job]
        assert done["state"] == "failed" and done["error"]["code"] == "time-limit", done
        assert done["attempts"] == 1
        assert "exited with" not in served.log.read_text(errors="replace"), "the soft limit needs no restart"
