"""A one-shot command's process ends without the interpreter's teardown (``evalserve.cli.fast_exit``), yet loses
nothing on the way: what it printed, its exit code and its atexit handlers all survive. Each case runs in a fresh
interpreter, as the console script does; nothing is timed (bench/RESULTS.md has the whole-process figures)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "evalserve" / "samples"


def python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_buffered_output_the_exit_code_and_atexit_handlers_survive() -> None:
    done = python(
        "import atexit, sys\n"
        "from evalserve.cli.fast_exit import finish\n"
        "atexit.register(lambda: print('handler ran'))\n"
        "sys.stdout.write('unflushed ')\n"
        "sys.stderr.write('to stderr')\n"
        "finish(3)\n"
        "print('never')\n"
    )
    assert done.returncode == 3
    assert done.stdout == "unflushed handler ran\n"
    assert done.stderr == "to stderr"


def test_a_running_non_daemon_thread_is_waited_for_as_sys_exit_would() -> None:
    done = python(
        "import threading, time\n"
        "from evalserve.cli.fast_exit import finish\n"
        "threading.Thread(target=lambda: (time.sleep(0.2), print('thread done', flush=True))).start()\n"
        "finish(4)\n"
    )
    assert done.returncode == 4
    assert done.stdout == "thread done\n"


def test_a_closed_standard_output_falls_back_to_the_interpreters_own_exit() -> None:
    done = python(
        "import os, sys\n"
        "from evalserve.cli.fast_exit import finish\n"
        "sys.stdout.write('x' * 100)\n"
        "os.close(1)\n"
        "finish(0)\n"
    )
    assert done.returncode != 0  # Python reports the lost output (exit 120), as without finish
    assert "Exception ignored" in done.stderr


@pytest.mark.parametrize("to_stdout", [False, True])
def test_the_console_script_writes_the_whole_result_and_its_exit_code(tmp_path: Path, to_stdout: bool) -> None:
    out = tmp_path / "out.json"
    argv = ["evaluate", "--qrels", str(SAMPLES / "sample.qrels"), "--run", str(SAMPLES / "bm25.run"), "-m", "AP",
            "--per-topic", *([] if to_stdout else ["-o", str(out)])]
    done = python("import sys; sys.argv[0] = 'evalserve'; from evalserve.cli.main import run; run()", *argv)
    assert done.returncode == 0, done.stderr
    text = done.stdout if to_stdout else out.read_text()
    assert json.loads(text)["runs"]  # the whole document, parsed
    bad = python("import sys; from evalserve.cli.main import run; run()", "evaluate", "--qrels",
                 str(tmp_path / "missing"), "--run", str(SAMPLES / "bm25.run"))
    assert bad.returncode == 2
    assert "missing" in bad.stderr


def test_the_console_script_entry_point_is_run() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'evalserve = "evalserve.cli.entry:run"' in pyproject  # (entry: the warm engine first, then main.run)
