"""``evalserve serve`` keeps the terminal for what a person needs (the banner, restarts): the API's access log
and the workers' logs go to files under the data directory, which the banner names, unless ``--log-level`` or
``-v`` asks for them on the terminal."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from evalserve.cli.serve import log_files
from evalserve.service.core.config import Settings
from tests.service.live import ROOT, free_port, service_env


def _wait(condition: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def test_logs_go_to_files_the_banner_names(tmp_path: Path) -> None:
    env = service_env(tmp_path, "embedded")
    data = Path(env["EVALSERVE_DATA_DIR"])
    port = free_port()
    terminal = tmp_path / "terminal.txt"
    with terminal.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "evalserve.cli.main", "serve", "--port", str(port),
                                 "--concurrency", "1"], env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        _wait(lambda: "evalserve is running" in terminal.read_text() or proc.poll() is not None, 90, "the banner")
        assert proc.poll() is None, terminal.read_text()
        assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).status_code == 200
        api_log, workers_log = data / "logs" / "api.log", data / "logs" / "workers.log"
        _wait(lambda: "GET /health" in api_log.read_text(), 30, "the access line in api.log")
        _wait(lambda: workers_log.exists() and "ready" in workers_log.read_text(), 90, "a worker's log")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
    shown = terminal.read_text()
    assert f"logs: {api_log} and {workers_log} (-v: on this terminal)" in shown
    assert "GET /health" not in shown and "celery@" not in shown, shown  # neither access lines nor Celery's


def test_log_level_or_verbose_keeps_the_logs_on_the_terminal(tmp_path: Path) -> None:
    settings = Settings.from_env({"EVALSERVE_DATA_DIR": str(tmp_path)})
    quiet = argparse.Namespace(log_level=None, verbose=False)
    assert log_files(settings, quiet) == (tmp_path / "logs" / "api.log", tmp_path / "logs" / "workers.log")
    assert log_files(settings, argparse.Namespace(log_level=None, verbose=True)) is None
    assert log_files(settings, argparse.Namespace(log_level="warning", verbose=False)) is None
