"""``clients/examples/mirror_leaderboard.py`` run as a user runs it (a subprocess, no token for a public task)
against real deployments: ``--once`` writes exactly the CSV the server serves and leaves an unchanged file alone;
on a schedule it follows a new submission, survives the API being down for a while, and stops cleanly on Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from evalserve_client import Client

from tests.client.test_tasks_client import World, make_world, new_task, truncated_runs
from tests.service.live import LiveService, free_port

ROOT = Path(__file__).resolve().parents[2]
MIRROR = ROOT / "clients" / "examples" / "mirror_leaderboard.py"


@pytest.fixture(scope="module")
def world(live: LiveService, web2012: dict[str, Path], shared_data: Path,
          tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(live, web2012["qrels"], truncated_runs(shared_data, tmp_path_factory.mktemp("runs")))


def mirror(*args: str) -> list[str]:
    return [sys.executable, str(MIRROR), *args]


def environment() -> dict[str, str]:
    """The caller's environment without an evalserve server or token: the script gets them as options."""
    return {k: v for k, v in os.environ.items() if k not in ("EVALSERVE_URL", "EVALSERVE_TOKEN")}


def served_csv(live: LiveService, task_id: str) -> bytes:
    """The leaderboard as served once the worker stored the newest (no ``Evalserve-Stale``)."""
    deadline = time.monotonic() + 60
    with httpx.Client(base_url=live.url, timeout=60) as http:
        while True:
            response = http.get(f"/v1/tasks/{task_id}/leaderboard", params={"format": "csv"})
            if response.headers.get("Evalserve-Stale") != "true" or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    assert response.status_code == 200, response.text
    return response.content


def submit(world: World, who: str, task_id: str, run: str) -> None:
    """``who`` registers (if need be) and submits ``run``; returns when it is evaluated."""
    with world.client(who) as c:
        if c.task(task_id)["role"] == "public":
            c.register(task_id, f"team-{who}")
        c.wait_for_submission(task_id, c.submit_to_task(task_id, world.runs[run]), timeout=120)


def eventually(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def test_once_writes_the_csv_the_server_serves_and_leaves_an_unchanged_file_alone(world: World,
                                                                                  tmp_path: Path) -> None:
    with world.client("organiser") as organiser:
        task_id = new_task(organiser, world.collection)["id"]
    submit(world, "ann", task_id, "catb")
    board = tmp_path / "board.csv"
    once = mirror("--url", world.live.url, "--task", task_id, "--output", str(board), "--once")
    done = subprocess.run(once, capture_output=True, text=True, env=environment(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert board.read_bytes() == served_csv(world.live, task_id)
    (line,) = done.stderr.splitlines()
    assert line.endswith(f"mirror_leaderboard: {board} updated: 1 row ({board.stat().st_size} bytes)")
    assert board.stat().st_mode & 0o777 == 0o644 & ~_umask()

    written = board.stat().st_mtime_ns
    again = subprocess.run(once, capture_output=True, text=True, env=environment(), timeout=120)
    assert (again.returncode, again.stderr) == (0, ""), "nothing changed: nothing written, nothing logged"
    assert board.stat().st_mtime_ns == written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board.csv"], "no temporary file left behind"

    down = subprocess.run(mirror("--url", f"http://127.0.0.1:{free_port()}", "--task", task_id, "--output",
                                 str(tmp_path / "other.csv"), "--once"),
                          capture_output=True, text=True, env=environment(), timeout=120)
    assert down.returncode == 1 and "cannot reach the evalserve server" in down.stderr
    assert "Traceback" not in down.stderr and not (tmp_path / "other.csv").exists()
    unknown = subprocess.run(mirror("--url", world.live.url, "--task", "task_nonexistent", "--output",
                                    str(tmp_path / "other.csv")),
                             capture_output=True, text=True, env=environment(), timeout=120)
    assert unknown.returncode == 2 and "giving up: the server refused the request (404 not-found)" in unknown.stderr


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def test_on_a_schedule_it_follows_changes_survives_an_outage_and_stops_on_ctrl_c(world: World,
                                                                                tmp_path: Path) -> None:
    """The last test of the module: it stops and restarts the deployment's API."""
    with world.client("organiser") as organiser:
        task_id = new_task(organiser, world.collection)["id"]
    submit(world, "ann", task_id, "catb")
    board = tmp_path / "board.csv"
    log = tmp_path / "mirror.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(mirror("--url", world.live.url, "--task", task_id, "--output", str(board),
                                       "--every", "1"), stdout=sink, stderr=subprocess.STDOUT, env=environment())
    try:
        first = served_csv(world.live, task_id)
        # generous bounds, never waited out when things work: under load (2 cores, a CI run beside) a tick's
        # fetch can wait on an API that is starting or stopping (gunicorn's graceful timeout is 5 s)
        eventually(lambda: board.exists() and board.read_bytes() == first, 120, "the first mirror")

        world.live.stop_api()  # the server goes away for a while: the mirror logs and keeps going
        eventually(lambda: "cannot reach the evalserve server" in log.read_text(), 120, "a failed fetch logged")
        world.live.start_api()
        assert proc.poll() is None, log.read_text()

        submit(world, "ben", task_id, "cata")
        second = served_csv(world.live, task_id)
        assert second != first and second.count(b"\n") == 3
        eventually(lambda: board.read_bytes() == second, 120, "the mirror to follow the new submission")
        # the mirror replaces the file, then logs it: wait for the line too, or Ctrl-C can fall in between
        eventually(lambda: log.read_text().count(" updated: ") >= 2, 120, "the mirror to log the new submission")
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=90)  # slack for a loaded machine
    output = log.read_text()
    assert code == 0, output
    lines = output.splitlines()
    assert "Traceback" not in output and lines[-1].endswith("mirror_leaderboard: stopped")
    assert lines[0].endswith(f"mirroring the leaderboard of {task_id} from {world.live.url} into {board} every 1 s")
    assert [line.split(": ", 1)[1] for line in lines if " updated: " in line] == [
        f"{board} updated: 1 row ({len(first)} bytes)", f"{board} updated: 2 rows ({len(second)} bytes)"], \
        "one line per change"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board.csv", "mirror.log"]
    with Client(world.live.url, None) as anonymous:
        assert anonymous.leaderboard(task_id, format="csv").encode() == board.read_bytes()
