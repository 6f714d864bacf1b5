"""Split jobs with real processes (gunicorn, Celery workers, the broker; embedded default and PostgreSQL + Redis):
a 40-run job over two workers gives the bytes one worker gives, and the document of ``evalserve evaluate``; both
workers took parts (read from the part rows); a part whose worker is SIGKILLed is re-run and the job still gives
the same document.

Which worker takes which part is up to the broker; to make "both took parts" certain rather than likely, the
test freezes (SIGSTOP) the first worker seen holding a part, so the other has to run every other part, and lets it
go (SIGCONT) once they are done. Nothing is timed."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalserve.cli.main import main as cli_main
from evalserve.service.core.config import Settings
from evalserve.service.store.db import Database
from evalserve.service.store.models import JobPart
from tests.service.conftest import BACKENDS
from tests.service.live import FAST_RECOVERY, LiveService
from tests.service.split_runs import write_runs

MEASURES = ["P@10", "AP", "nDCG@10", "RR", "Rprec"]


@pytest.fixture(scope="module")
def files(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    qrels = shared_data / "trec_eval-test" / "qrels.test"
    return qrels, write_runs(qrels.read_bytes(), tmp_path_factory.mktemp("runs"), 40)


@pytest.fixture(scope="module")
def offline(files: tuple[Path, list[Path]]) -> dict[str, Any]:
    """What ``evalserve evaluate`` gives for the same 40 runs."""
    import contextlib
    import io

    qrels, runs = files
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["evaluate", "--qrels", str(qrels), "--format", "json", "--per-topic", "-q", "-m",
                         *MEASURES, *[a for run in runs for a in ("--run", str(run))]]) == 0
    document: dict[str, Any] = json.loads(out.getvalue())
    return document


def submit(http: httpx.Client, files: tuple[Path, list[Path]]) -> str:
    qrels, runs = files
    collection = http.post("/v1/collections", data={"name": "c"}, files={"qrels": (qrels.name, qrels.read_bytes())})
    assert collection.status_code == 201, collection.text
    ids = []
    for run in runs:
        made = http.post("/v1/runs", params={"collection": collection.json()["id"], "name": run.name},
                         content=run.read_bytes())
        assert made.status_code == 201, made.text
        ids.append(made.json()["id"])
    job = http.post("/v1/evaluations", json={"collection": collection.json()["id"], "runs": ids,
                                             "measures": MEASURES})
    assert job.status_code == 202, job.text
    return str(job.json()["id"])


def result(service: LiveService, http: httpx.Client, job_id: str) -> bytes:
    job = service.wait_job(http, job_id, timeout=180)
    assert job["state"] == "succeeded", job
    return http.get(f"/v1/jobs/{job_id}/result", params={"per_topic": "true"}).content


def parts(service: LiveService, job_id: str) -> list[JobPart]:
    db = Database(Settings.from_env(service.env).database_url)
    try:
        with db.session() as s:
            found = list(s.query(JobPart).filter(JobPart.job_id == job_id).order_by(JobPart.index))
            s.expunge_all()
        return found
    finally:
        db.dispose()


def pid_of(worker: str) -> int:
    """The process of a worker name (``host:pid:suffix``)."""
    return int(worker.split(":")[1])


def freeze_a_part_holder(service: LiveService, job_id: str, timeout: float = 120) -> tuple[int, int]:
    """SIGSTOP the first worker process seen running a part of the job, while it still holds that part; returns
    (pid, part index)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for part in parts(service, job_id):
            if part.state == "running" and part.lease_owner:
                pid = pid_of(part.lease_owner)
                os.kill(pid, signal.SIGSTOP)
                again = next(p for p in parts(service, job_id) if p.index == part.index)
                if again.state == "running" and again.lease_owner == part.lease_owner:
                    return pid, part.index
                os.kill(pid, signal.SIGCONT)  # it finished the part meanwhile: look again
        time.sleep(0.005)
    raise AssertionError(f"no part of {job_id} was seen running\n{service.log('worker')}")


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_40_run_job_over_two_workers_gives_one_workers_document(
        stack: Callable[..., LiveService], backend: str, files: tuple[Path, list[Path]],
        offline: dict[str, Any]) -> None:
    service = stack(backend, EVALSERVE_SPLIT_RUNS="10")
    service.start_api()
    with service.client() as http:
        split_env = service.env
        service.env = {**split_env, "EVALSERVE_SPLIT_RUNS": "0"}  # this worker never splits
        single = service.start_worker(concurrency=1, webhooks=False)
        service.env = split_env
        whole = result(service, http, submit(http, files))
        service.workers.remove(single)
        LiveService.kill(single, signal.SIGTERM)

        first, second = (service.start_worker(concurrency=1, webhooks=False) for _ in range(2))
        job_id = submit(http, files)
        frozen, index = freeze_a_part_holder(service, job_id)
        try:  # the other worker has to run every other part
            wait_until(lambda: all(p.state == "succeeded" for p in parts(service, job_id) if p.index != index), 120,
                       "the other worker to run the other parts")
        finally:
            os.kill(frozen, signal.SIGCONT)
        split = result(service, http, job_id)
        done = parts(service, job_id)
    assert len(done) == 4 and all(p.state == "succeeded" and p.attempts == 1 for p in done)
    pids = {pid_of(p.workers[0]) for p in done}
    assert len(pids) == 2 and frozen in pids, [p.workers for p in done]
    assert split == whole, "byte for byte what one worker stores"
    document = json.loads(split)
    assert document == offline and list(document["runs"]) == list(offline["runs"])
    assert first.poll() is None and second.poll() is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_part_whose_worker_is_killed_is_run_again(
        stack: Callable[..., LiveService], backend: str, files: tuple[Path, list[Path]],
        offline: dict[str, Any]) -> None:
    service = stack(backend, EVALSERVE_SPLIT_RUNS="10", **FAST_RECOVERY)
    service.start_api()
    service.start_worker(concurrency=1, webhooks=False)  # supervised: a killed process is replaced
    with service.client() as http:
        job_id = submit(http, files)
        frozen, index = freeze_a_part_holder(service, job_id)
        os.kill(frozen, signal.SIGKILL)  # what the OOM killer sends
        document = json.loads(result(service, http, job_id))
        done = parts(service, job_id)
    assert document == offline
    killed = done[index]
    assert killed.state == "succeeded" and killed.attempts == 2, killed.workers
    assert pid_of(killed.workers[0]) == frozen and pid_of(killed.workers[1]) != frozen
