"""``evalserve serve`` supervising truthfully (issue 29), with the real command on both backends: with the broker
down it keeps a working API up well past its old 60 s give-up (scaled down by ``EVALSERVE_SERVE_START_SECONDS``),
says on its terminal what is down and when it is back, and every job accepted meanwhile runs once it is back; an
evaluation worker over ``EVALSERVE_WORKER_MAX_RSS_MB`` after a big job is replaced (back under the setting within
10 s) without the job running twice; ``/health`` counts a SIGKILLed worker gone within 2 s."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalserve.service.jobrun.memory import resident_bytes
from tests.security.test_worker_faults import (
    Served,
    collection,
    health,
    heavy_job,
    offline,
    stop_serve,
    submit,
    wait_for,
    wait_jobs,
)
from tests.service.live import (
    FAST_RECOVERY,
    ROOT,
    free_port,
    postgres_available,
    postgres_database,
    redis_available,
    service_env,
)

BACKENDS = ["embedded", "redis-postgres"]
#: how long serve must keep serving with the broker down (the suite: 10 s past a give-up scaled to 3 s; the
#: issue's 5 minutes with the real give-up: EVALSERVE_BROKER_DOWN_HOLD_SECONDS=300, run by hand)
BROKER_DOWN_HOLD_SECONDS = float(os.environ.get("EVALSERVE_BROKER_DOWN_HOLD_SECONDS", "10"))


@pytest.fixture(scope="module")
def trec(shared_data: Path) -> dict[str, Path]:
    base = shared_data / "trec_eval-test"
    return {"qrels": base / "qrels.test", "run": base / "results.test"}


@contextlib.contextmanager
def serve(tmp_path: Path, backend: str, *options: str, before: Any = None, **env: str) -> Iterator[Served]:
    """``evalserve serve`` on a free port for ``backend`` (fast recovery, heartbeats every second), stopped with
    SIGTERM afterwards; ``before(environ)`` runs before it starts (to make the broker unreachable)."""
    if backend == "redis-postgres" and not (postgres_available() and redis_available()):
        pytest.skip("PostgreSQL and Redis on localhost are needed (they run on the CI machine)")
    with contextlib.ExitStack() as cleanup:
        url = cleanup.enter_context(postgres_database()) if backend == "redis-postgres" else None
        environ = service_env(tmp_path, backend, url,
                              **{**FAST_RECOVERY, "EVALSERVE_WORKER_HEARTBEAT_SECONDS": "1", **env})
        if before is not None:
            before(environ)
        port = free_port()
        log = tmp_path / "serve.log"
        with log.open("ab") as out:
            proc = subprocess.Popen([sys.executable, "-m", "evalserve.cli.main", "serve", "--port", str(port),
                                     *options], env=environ, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        served = Served(proc, f"http://127.0.0.1:{port}", "", environ, log)
        served.started = time.monotonic()  # type: ignore[attr-defined]
        try:
            wait_for(lambda: "evalserve is running" in log.read_text(errors="replace") or proc.poll() is not None,
                     120, "serve's banner")
            assert proc.poll() is None, served.tail()
            served.token = (tmp_path / "data" / "admin-token").read_text().strip()
            yield served
        finally:
            stop_serve(proc)


class Broker:
    """A broker the test can keep away and bring back: the embedded broker's file replaced by a directory
    (SQLite cannot open it), or ``REDIS_URL`` pointing at a closed port where a Redis of the test's own is
    started later."""

    def __init__(self, backend: str, tmp_path: Path) -> None:
        self.backend, self.tmp_path = backend, tmp_path
        self.port = free_port()
        self.redis: subprocess.Popen[bytes] | None = None

    def env(self) -> dict[str, str]:
        return {"REDIS_URL": f"redis://127.0.0.1:{self.port}/0"} if self.backend == "redis-postgres" else {}

    def make_unreachable(self, environ: dict[str, str]) -> None:
        if self.backend == "embedded":
            (Path(environ["EVALSERVE_DATA_DIR"]) / "broker.db").mkdir(parents=True)

    def bring_back(self) -> None:
        if self.backend == "embedded":
            (self.tmp_path / "data" / "broker.db").rmdir()  # SQLite creates the file at the next connection
            return
        redis_server = shutil.which("redis-server")
        if redis_server is None:
            pytest.skip("redis-server is needed to bring a Redis back on the closed port")
        self.redis = subprocess.Popen([redis_server, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                                       "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> None:
        if self.redis is not None:
            self.redis.terminate()
            self.redis.wait(timeout=10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_serve_keeps_the_api_up_while_the_broker_is_down(
        tmp_path: Path, backend: str, trec: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    expected = offline(trec, capsys)
    broker = Broker(backend, tmp_path)
    # the old give-up (60 s) scaled down to 3 s: serve must still serve well past it; with the full
    # 5 minutes (EVALSERVE_BROKER_DOWN_HOLD_SECONDS=300, run by hand: docs/deploy.md) the give-up is not scaled
    scaled = {"EVALSERVE_SERVE_START_SECONDS": "3"} if BROKER_DOWN_HOLD_SECONDS < 60 else {}
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(broker.stop)
        served = cleanup.enter_context(serve(tmp_path, backend, "--concurrency", "1", before=broker.make_unreachable,
                                             **scaled, **broker.env()))
        http = cleanup.enter_context(served.client())
        status, report = health(served.url)
        assert status == 503 and report["database"] == "ok" and report["broker"].startswith("unavailable"), report
        assert any(p.startswith("broker unavailable") for p in report["problems"]), report
        said = served.log.read_text(errors="replace")
        assert "broker" in said and "is unavailable" in said and "the API keeps accepting jobs" in said, said
        assert "the API did not start" not in said

        # jobs accepted while the broker is down (the admin token: exempt from limits kept in Redis)
        col = collection(http, trec["qrels"])
        ids = [submit(http, col, trec["run"]) for _ in range(5)]
        assert {http.get(f"/v1/jobs/{i}").json()["state"] for i in ids} == {"queued"}

        # still serving past three times the scaled-down give-up (or for 5 minutes), answering all along
        while time.monotonic() - served.started < BROKER_DOWN_HOLD_SECONDS:  # type: ignore[attr-defined]
            time.sleep(min(5.0, BROKER_DOWN_HOLD_SECONDS / 10))
            assert served.proc.poll() is None, served.tail()
            assert health(served.url)[0] == 503
        status, report = health(served.url)
        assert status == 503 and report["broker"].startswith("unavailable"), report
        ids.append(submit(http, col, trec["run"]))
        assert "the API did not start" not in served.log.read_text(errors="replace")

        # the broker comes back: every job accepted meanwhile runs, once, with the offline numbers
        broker.bring_back()
        done = wait_jobs(http, ids, timeout=180)
        assert {job["state"] for job in done.values()} == {"succeeded"}, done
        assert all(job["attempts"] == 1 for job in done.values()), done
        for job_id in ids:
            assert http.get(f"/v1/jobs/{job_id}/result").json() == expected
        wait_for(lambda: health(served.url)[0] == 200, 30, "/health to say the broker is back")
        wait_for(lambda: "answers again" in served.log.read_text(errors="replace"), 30,
                 "serve to say the broker is back")
        assert served.proc.poll() is None


def rss_mb(pid: int) -> float:
    found = resident_bytes(pid)
    return (found or 0) / 2**20


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_idle_worker_gives_its_memory_back_after_a_big_job(
        tmp_path: Path, backend: str, shared_data: Path, trec: dict[str, Path],
        capsys: pytest.CaptureFixture[str]) -> None:
    expected = offline(trec, capsys)
    limit = 400.0  # MB: a fresh worker holds about half of it; the job below takes it well past
    with serve(tmp_path, backend, "--concurrency", "1", EVALSERVE_WORKER_MAX_RSS_MB=str(int(limit)),
               EVALSERVE_SPLIT_RUNS="0") as served, served.client() as http:
        wait_for(lambda: health(served.url)[1]["workers"]["alive"] == 1, 60, "a live worker")
        [worker] = served.evaluation_workers()
        baseline = rss_mb(worker)
        assert baseline < limit, baseline

        peak = [0.0]
        running = threading.Event()

        def watch() -> None:
            while not running.is_set():
                for pid in served.evaluation_workers():
                    peak[0] = max(peak[0], rss_mb(pid))
                time.sleep(0.05)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        job_id = heavy_job(http, shared_data).json()["id"]
        job = wait_jobs(http, [job_id], timeout=300)[job_id]
        finished = time.monotonic()
        assert job["state"] == "succeeded" and job["attempts"] == 1, job
        seen: list[dict[int, float]] = []
        while time.monotonic() - finished < 10:
            seen.append({pid: rss_mb(pid) for pid in served.evaluation_workers()})
            if seen[-1] and all(0 < mb < limit for mb in seen[-1].values()):
                break
            time.sleep(0.2)
        workers_log = (tmp_path / "data" / "logs" / "workers.log").read_text(errors="replace")
        assert seen[-1] and all(0 < mb < limit for mb in seen[-1].values()), (
            f"not back under {limit} MB within 10 s: {seen[::5]}\n{served.tail()}\n{workers_log[-3000:]}")
        back_after = time.monotonic() - finished
        running.set()
        watcher.join()
        assert peak[0] > limit, f"the job did not cross the setting: peak {peak[0]:.0f} MB"
        log = served.log.read_text(errors="replace")
        assert "exited with" not in log, "giving memory back is not a crash"
        recycled = "gave its memory back after a job" in log
        now = {pid: round(rss_mb(pid)) for pid in served.evaluation_workers()}
        assert (worker not in now) == recycled, (now, log)
        print(f"worker RSS: idle {baseline:.0f} MB, peak {peak[0]:.0f} MB, back under {limit:.0f} MB"
              f" {back_after:.1f} s after the job ended ({'recycled' if recycled else 'trimmed'}: {now} MB)")

        # nothing ran twice and the fresh worker works
        assert http.get(f"/v1/jobs/{job_id}").json()["attempts"] == 1
        small = submit(http, collection(http, trec["qrels"]), trec["run"])
        assert wait_jobs(http, [small], timeout=120)[small]["state"] == "succeeded"
        assert http.get(f"/v1/jobs/{small}/result").json() == expected


@pytest.mark.parametrize("backend", BACKENDS)
def test_health_counts_a_killed_worker_gone_within_two_seconds(tmp_path: Path, backend: str) -> None:
    # heartbeats every 5 s and a stale limit of 30 s, the defaults: only the supervisor's notice can be this fast
    with serve(tmp_path, backend, "--concurrency", "2", EVALSERVE_WORKER_HEARTBEAT_SECONDS="5",
               EVALSERVE_HEALTH_WORKER_STALE_SECONDS="30") as served:
        wait_for(lambda: health(served.url)[1]["workers"]["alive"] == 2, 60, "two live workers")
        victim = served.evaluation_workers()[0]
        killed = time.monotonic()
        os.kill(victim, signal.SIGKILL)
        seen = wait_for(lambda: health(served.url)[1]["workers"]["alive"] == 1 and time.monotonic(), 5,
                        "/health to count the killed worker gone", step=0.05)
        assert seen - killed < 2.0, f"/health counted the killed worker gone after {seen - killed:.2f} s"
        print(f"/health counted the killed worker gone {seen - killed:.2f} s after SIGKILL ({backend})")
        # the supervisor replaces it and /health counts it again
        wait_for(lambda: health(served.url)[1]["workers"]["alive"] == 2, 60, "the replacement's heartbeat")
        assert victim not in served.evaluation_workers()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_recycled_worker_loses_no_job_and_runs_none_twice(
        tmp_path: Path, backend: str, trec: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """A setting below any worker's size: every job ends with a recycle, after its message was acknowledged."""
    expected = offline(trec, capsys)
    with serve(tmp_path, backend, "--concurrency", "1", EVALSERVE_WORKER_MAX_RSS_MB="1") as served, \
            served.client() as http:
        col = collection(http, trec["qrels"])
        ids = [submit(http, col, trec["run"]) for _ in range(4)]
        done = wait_jobs(http, ids, timeout=180)
        assert {job["state"] for job in done.values()} == {"succeeded"}, done
        assert all(job["attempts"] == 1 for job in done.values()), done
        for job_id in ids:
            assert http.get(f"/v1/jobs/{job_id}/result").json() == expected
        log_file = tmp_path / "data" / "logs" / "workers.log"

        def received() -> list[str]:
            text = log_file.read_text(errors="replace")
            return [line.split("evalserve.evaluate[")[1].split("]")[0] for line in text.splitlines()
                    if "evalserve.evaluate[" in line and line.endswith("received")]

        def recycles() -> int:
            return served.log.read_text(errors="replace").count("gave its memory back after a job")

        # each process takes one message (the job, or a sweeper's harmless duplicate), then is replaced: it
        # stops before it takes another one
        time.sleep(3)  # a message redelivered after its worker stopped would come now
        wait_for(lambda: recycles() == len(received()) or None, 30, "one recycle per message")
        assert len(received()) >= 4 and len(set(received())) == len(received()), received()  # none came back
        assert "exited with" not in served.log.read_text(errors="replace")
        assert all(http.get(f"/v1/jobs/{i}").json()["attempts"] == 1 for i in ids)
