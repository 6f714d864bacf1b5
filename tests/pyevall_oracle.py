"""PyEvALL, the reference for EvALL's classification measures, in a venv of its own (issue 31).

PyEvALL 0.2.11 pins numpy 1.26 and pandas 2.2, so it cannot share the project's venv: ``pyevall_python()`` builds
(once, into a cache folder keyed by :data:`VERSION`, under a file lock so that xdist workers and other checkouts
build it once) a venv with ``pip install pyevall==VERSION`` and returns its interpreter. ``run_pyevall`` writes
gold and predictions as PyEvALL JSON, runs :data:`_SCRIPT` in that venv and returns PyEvALL's own report dict
(``metrics[class_name] = {results: {test_cases: [{name, average, classes?}], average_per_test_case}, ...}``).
Tests take the ``pyevall`` fixture (tests/evaluation/classification/conftest.py), which skips, saying why,
when PyPI cannot be reached.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

VERSION = "0.2.11"
HOME = Path(tempfile.gettempdir()) / f"evalserve-pyevall-{VERSION}"
LOCK = Path(tempfile.gettempdir()) / "evalserve-pyevall.lock"
INSTALL_TIMEOUT = 900.0

#: Runs in PyEvALL's venv: argv = pred.json gold.json metrics.json params.json; prints the report as JSON.
_SCRIPT = r"""
import json, sys
import numpy as np
from pyevall.evaluation import PyEvALLEvaluation
pred, gold, metrics, params = sys.argv[1:5]
with open(metrics) as f: metrics = json.load(f)
with open(params) as f: params = json.load(f)
params.setdefault("log_level", "none")
evaluator = PyEvALLEvaluation()
evaluator.evaluate(pred, gold, metrics, **params)
def plain(value):
    if isinstance(value, np.generic): return value.item()
    raise TypeError(type(value))
print(json.dumps(evaluator.pyevall_report.report, default=plain))
"""


class PyEvALLUnavailable(RuntimeError):
    """PyEvALL cannot be installed here (the message says why)."""


@cache
def pyevall_python() -> Path:
    """The interpreter of a venv holding pyevall==VERSION, built on first use; PyEvALLUnavailable if impossible."""
    python = HOME / "bin" / "python"
    if _works(python):
        return python
    with LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _works(python):  # another process built it while this one waited
            return python
        build = Path(tempfile.mkdtemp(prefix="evalserve-pyevall-build-"))
        shutil.rmtree(build)
        try:
            subprocess.run([sys.executable, "-m", "venv", str(build)], check=True, capture_output=True)
            subprocess.run([str(build / "bin" / "python"), "-m", "pip", "install", "-q",
                            "--retries", "2", "--timeout", "30", f"pyevall=={VERSION}"],
                           check=True, capture_output=True, timeout=INSTALL_TIMEOUT)
        except subprocess.CalledProcessError as exc:
            shutil.rmtree(build, ignore_errors=True)
            tail = (exc.stderr or b"").decode(errors="replace")[-1500:]
            raise PyEvALLUnavailable(f"pip install pyevall=={VERSION} failed (is PyPI reachable?): {tail}") from exc
        except subprocess.TimeoutExpired as exc:
            shutil.rmtree(build, ignore_errors=True)
            raise PyEvALLUnavailable(f"pip install pyevall=={VERSION} timed out") from exc
        shutil.rmtree(HOME, ignore_errors=True)
        # a venv's scripts name their folder, so build in place under HOME's name would be cleaner; the
        # interpreter is called by path with -m/-c only, which works from a renamed venv
        build.rename(HOME)
    if not _works(python):
        raise PyEvALLUnavailable(f"the venv at {HOME} does not import pyevall")
    return python


def _works(python: Path) -> bool:
    if not python.exists():
        return False
    done = subprocess.run([str(python), "-c", "import pyevall.evaluation"], capture_output=True)
    return done.returncode == 0


def records(labels: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``{test_case: {id: value}}`` as PyEvALL JSON records (file order: test cases, then ids, as given)."""
    return [{"test_case": tc, "id": item, "value": value} for tc, items in labels.items()
            for item, value in items.items()]


def run_pyevall(gold: Sequence[Mapping[str, Any]] | str, pred: Sequence[Mapping[str, Any]] | str,
                metrics: Sequence[str], params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """PyEvALL's report (``{"metrics": ..., "files": ...}``) for ``gold`` and ``pred``: PyEvALL JSON records, or
    a file's text as it is (PyEvALL's TSV/CSV wrappers)."""
    python = pyevall_python()
    with tempfile.TemporaryDirectory(prefix="evalserve-pyevall-") as folder:
        paths = []
        for name, data in (("pred", pred), ("gold", gold), ("metrics", list(metrics)),
                           ("params", dict(params or {}))):
            path = Path(folder) / name
            path.write_text(data if isinstance(data, str) else json.dumps(data))
            paths.append(str(path))
        done = subprocess.run([str(python), "-c", _SCRIPT, *paths], capture_output=True, text=True,
                              timeout=600, cwd=folder)
    if done.returncode != 0:
        raise RuntimeError(f"PyEvALL failed: {done.stderr[-3000:]}")
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def results(report: Mapping[str, Any], metric: str) -> tuple[dict[str, Any], float | None]:
    """``({test_case: {average, classes?}}, mean)`` of one metric in a PyEvALL report."""
    section = report["metrics"][metric]
    found = section.get("results", {})
    per_tc = {tc["name"]: tc for tc in found.get("test_cases", [])}
    return per_tc, found.get("average_per_test_case")
