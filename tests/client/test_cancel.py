"""Cancelling and waiting on a real deployment whose jobs stay queued (its API runs, no worker does): a cancelled
job ends a wait with ``JobFailed``, a wait that runs out raises ``WaitTimeout``, and the command line reports
both with exit code 1."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from evalserve_client import Client, JobFailed, WaitTimeout
from evalserve_client.cli import main as client_main

from tests.service.conftest import BACKENDS
from tests.service.live import LiveService

QRELS = b"101 0 doc1 1\n101 0 doc2 0\n"
RUN = b"101 Q0 doc1 1 0.5 tag\n101 Q0 doc2 2 0.4 tag\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_cancel_a_waited_job(backend: str, stack: Callable[..., LiveService], tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    service = stack(backend)
    service.start_api()  # and no worker: jobs stay queued until cancelled
    with Client(service.url, service.token) as client:
        collection = client.create_collection(("qrels.txt", QRELS), name="c")

        with pytest.raises(WaitTimeout) as late:
            client.evaluate(collection, [("a.run", RUN)], ["AP"], timeout=0.5)
        assert late.value.job["state"] == "queued"

        job = client.evaluate(collection, [("b.run", RUN)], ["AP"], wait=False)
        outcome: list[BaseException] = []
        seen: list[str] = []

        def wait() -> None:
            try:
                client.wait(job, progress=lambda j: seen.append(j["state"]))
            except BaseException as exc:
                outcome.append(exc)

        waiter = threading.Thread(target=wait)
        waiter.start()
        cancelled = client.cancel(job["id"])
        assert cancelled["state"] == "cancelled" and cancelled["id"] == job["id"]
        waiter.join(timeout=60)
        assert not waiter.is_alive()
        (failed,) = outcome
        assert isinstance(failed, JobFailed)
        assert failed.state == "cancelled" and failed.job["id"] == job["id"] and seen[-1] == "cancelled"

        # the command line: a cancelled job has no results, a wait that runs out says how to follow the job
        run = tmp_path / "c.run"
        run.write_bytes(RUN)
        server = ["--server", service.url, "--token", service.token]
        capsys.readouterr()
        assert client_main(["result", job["id"], *server]) == 1
        assert "(409 job-cancelled)" in capsys.readouterr().err
        assert client_main(["result", job["id"], "--wait", *server]) == 1
        assert capsys.readouterr().err.strip().endswith("the job was cancelled [cancelled]")
        assert client_main(["submit", *server, "--collection", collection["id"], "--run", str(run), "-m", "AP",
                            "--timeout", "0.5"]) == 1
        out, err = capsys.readouterr()
        assert out == "" and len(err.splitlines()) == 1 and "is still queued after 0.5 s" in err
        queued = err.split("job ")[1].split()[0]
        assert client_main(["cancel", queued, *server]) == 0
        assert json.loads(capsys.readouterr().out)["state"] == "cancelled"
