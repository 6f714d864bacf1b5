"""A one-shot engine command (``evalserve evaluate``, ``demo``) loads NumPy with ``numpy_env.ONE_SHOT_ENV``: no
BLAS thread pool spinning on the cores its own threads need, small pages for its short-lived arrays
(bench/RESULTS.md has the whole-process figures). Structural checks in a fresh interpreter, as a user's shell
runs the command; nothing is timed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalserve.cli.commands import COMMANDS, is_one_shot
from evalserve.cli.main import main
from evalserve.cli.numpy_env import ONE_SHOT_ENV, prepare_one_shot

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "evalserve" / "samples"
EVALUATE = ["evaluate", "--qrels", str(SAMPLES / "sample.qrels"), "--run", str(SAMPLES / "bm25.run"), "-m", "AP"]

#: runs ``main(argv)``, then writes the exit code, the variables and how many threads the process has left
PROBE = """
import contextlib, io, json, os, sys
from evalserve.cli.main import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main(sys.argv[3:])
import threading, time
for thread in threading.enumerate():  # the evaluation's own threads, ended but maybe not yet reaped
    if thread is not threading.main_thread():
        thread.join(10)
deadline = time.monotonic() + 10  # a thread gone from Python may linger in /proc a moment; a BLAS pool stays
while os.path.isdir("/proc/self/task") and len(os.listdir("/proc/self/task")) > 1 and time.monotonic() < deadline:
    time.sleep(0.05)
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "env": {k: os.environ.get(k) for k in json.loads(sys.argv[2])},
               "threads": len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else None}, f)
"""


def probe(tmp_path: Path, argv: list[str], **env_set: str) -> dict[str, object]:
    """``evalserve ARGV`` in a fresh interpreter, ``ONE_SHOT_ENV``'s variables unset unless given."""
    out = tmp_path / "probe.json"
    env = {k: v for k, v in os.environ.items() if k not in ONE_SHOT_ENV}
    env.update(env_set, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", PROBE, str(out), json.dumps(list(ONE_SHOT_ENV)), *argv], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(out.read_text())
    return result


def test_evaluate_loads_numpy_without_a_blas_pool_and_with_small_pages(tmp_path: Path) -> None:
    found = probe(tmp_path, [*EVALUATE, "-o", str(tmp_path / "out.json")])
    assert found["code"] == 0
    assert found["env"] == {"OPENBLAS_NUM_THREADS": "1", "NUMPY_MADVISE_HUGEPAGE": "0"}
    if found["threads"] is not None:  # the evaluation's own threads have ended; no BLAS worker was started
        assert found["threads"] == 1


def test_a_users_own_setting_wins(tmp_path: Path) -> None:
    found = probe(tmp_path, [*EVALUATE, "-o", str(tmp_path / "out.json")], NUMPY_MADVISE_HUGEPAGE="1")
    assert found["env"] == {"OPENBLAS_NUM_THREADS": "1", "NUMPY_MADVISE_HUGEPAGE": "1"}


def test_other_commands_keep_numpys_defaults(tmp_path: Path) -> None:
    found = probe(tmp_path, ["measures"])
    assert found["code"] == 0
    assert found["env"] == {"OPENBLAS_NUM_THREADS": None, "NUMPY_MADVISE_HUGEPAGE": None}


def test_the_one_shot_commands_are_the_single_evaluations() -> None:
    assert {c.name for c in COMMANDS if c.one_shot} == {"evaluate", "demo", "trec_eval", "ndeval", "gdeval"}
    assert is_one_shot("evaluate") and not is_one_shot("meta") and not is_one_shot(None)


def test_a_process_that_has_loaded_numpy_keeps_its_environment(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    """In process (tests, notebooks) NumPy is loaded already: the variables would change nothing here and would
    leak into child processes, so neither ``prepare_one_shot`` nor ``main`` touches the environment."""
    import numpy  # noqa: F401 - loaded, as in any process that has used the engine

    for name in ONE_SHOT_ENV:
        monkeypatch.delenv(name, raising=False)
    assert prepare_one_shot() == {}
    assert main([*EVALUATE, "-o", str(tmp_path / "out.json")]) == 0
    assert not set(ONE_SHOT_ENV) & set(os.environ)
