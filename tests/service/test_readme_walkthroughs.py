"""The README and the API guide are the test: the shell and Python blocks of the README's service sections ("Use
the service", "Hosted benchmarks", "Python client", "Run a shared task") and every one of docs/api.md run verbatim,
in order, in one bash shell (a Python block as ``python3 - <<'PYTHON'``), against a live deployment, from an empty
working directory beside ``shared/`` (issue 28: blocks that used files nothing creates, undefined variables,
``uuidgen``, or turned a server's error into a Python traceback). The README's walkthrough gets only what its
server-starting block, which the test's deployment stands in for, sets (``URL`` and ``TOKEN``); docs/api.md's first
block reads the token where ``evalserve serve`` keeps it and the address from ``EVALSERVE_URL``."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.service.live import ROOT, LiveService

SECTIONS = ("## Use the service", "## Hosted benchmarks", "## Python client", "## Run a shared task")
BLOCK = re.compile(r"^```(bash|python)\n(.*?)^```", re.MULTILINE | re.DOTALL)
API_GUIDE = ROOT / "docs" / "api.md"


def blocks(text: str) -> list[str]:
    """The bash and Python blocks of ``text``, as a reader types them into one shell: a Python block as a
    here-document."""
    return [code if kind == "bash" else f"python3 - <<'PYTHON'\n{code}PYTHON\n" for kind, code in BLOCK.findall(text)]


def readme_blocks(section: str) -> list[str]:
    """The blocks of one README section, as written."""
    text = (ROOT / "README.md").read_text()
    start = text.index(section + "\n")
    end = text.find("\n## ", start + len(section))
    return blocks(text[start:end if end >= 0 else None])


def walkthrough() -> str:
    """The sections' blocks in order, without the one that starts the server."""
    return "\n".join(b for section in SECTIONS for b in readme_blocks(section) if "evalserve serve &" not in b)


def api_guide() -> str:
    """Every block of docs/api.md, in order."""
    return "\n".join(blocks(API_GUIDE.read_text()))


def shims(folder: Path) -> Path:
    """``evalserve`` and ``evalserve-client`` commands that run this checkout with this interpreter (an
    installed console script may belong to another checkout)."""
    folder.mkdir()
    for name, module in (("evalserve", "-m evalserve.cli.main"), ("evalserve-client", "-m evalserve_client.cli"),
                         ("python3", "")):
        path = folder / name
        path.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}:{ROOT / "clients" / "python"}" exec "{sys.executable}"'
                        f' {module} "$@"\n')
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return folder


def json_documents(text: str) -> list[dict[str, object]]:
    """Every JSON object that starts a line of ``text`` (curl prints them one after another)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    for line in text.splitlines(keepends=True):
        if line.startswith("{"):
            with contextlib.suppress(json.JSONDecodeError):  # a document cut short on purpose (`cut -c 1-200`)
                found.append(decoder.raw_decode(text, at)[0])
        at += len(line)
    return found


def test_the_blocks_are_found_and_need_only_url_and_token() -> None:
    setup = [b for b in readme_blocks(SECTIONS[0]) if "evalserve serve &" in b]
    assert len(setup) == 1 and "URL=" in setup[0] and "TOKEN=" in setup[0]
    assert "EVALSERVE_DATA_DIR:-" in setup[0], "the token is where serve keeps it, EVALSERVE_DATA_DIR too"
    for script in (walkthrough(), api_guide()):
        assert "curl" in script and "python3 - <<'PYTHON'" in script
        code = "\n".join(re.sub(r"(^|\s)#.*", "", line) for line in script.splitlines())  # comments: output
        assert "..." not in code, "a placeholder the reader cannot type"
        assert "2026-" not in code, "dates are relative to now"
        assert "uuidgen" not in script and "$ADMIN" not in script
    assert "evalserve-client task submit" in walkthrough()


def _reader(tmp_path: Path, shared_data: Path, name: str) -> Path:
    """An empty working directory with ``../shared/data`` beside it, as in a checkout next to ``shared/``."""
    (tmp_path / "shared").mkdir(exist_ok=True)
    with contextlib.suppress(FileExistsError):
        (tmp_path / "shared" / "data").symlink_to(shared_data)
    work = tmp_path / name
    work.mkdir()
    return work


def _run(script: str, work: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=work, env=env, capture_output=True,
                          text=True, timeout=900)
    (work.parent / f"{work.name}.out").write_text(f"{done.stdout}\n--- stderr:\n{done.stderr}")  # to read after
    assert done.returncode == 0, f"{done.stdout[-6000:]}\n{done.stderr[-6000:]}"
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    return done


@pytest.mark.parametrize("backend", ["embedded"])
def test_the_readme_walkthroughs_run_as_written(backend: str, stack: Callable[..., LiveService],
                                                tmp_path: Path, shared_data: Path) -> None:
    service = stack(backend)
    service.start_api()
    service.start_worker()
    work = _reader(tmp_path, shared_data, "reader")
    env = {"PATH": f"{shims(tmp_path / 'bin')}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path),
           "LANG": "C.UTF-8", "URL": service.url, "TOKEN": service.token,
           "EVALSERVE_DATA_DIR": service.env["EVALSERVE_DATA_DIR"]}  # the server's, for `evalserve collections`
    done = _run(walkthrough(), work, env)
    out = done.stdout
    assert sorted(p.name for p in work.iterdir()) == ["bm25.run", "dense.run.gz", "qrels.txt"]
    # "Hosted benchmarks": the published judgments were loaded and the run evaluated against them
    assert "trec-web-2012-adhoc" in out and '"queued"' in out
    # "Use the service": the job's state, then the result document with both runs and the three measures
    documents = json_documents(out)
    result: dict[str, Any] = next(d for d in documents if "meta" in d and "runs" in d)
    assert sorted(result["runs"]) == ["bm25.run", "dense.run"]
    assert set(result["runs"]["bm25.run"]) >= {"AP", "nDCG@10", "alpha_nDCG@20"}
    assert any(d.get("state") in ("queued", "running", "succeeded") for d in documents)
    # "Run a shared task": the submission evaluated and ranked on the leaderboard (CSV at the end)
    table = out[out.rindex("rank,"):]
    rows = list(csv.DictReader(io.StringIO(table)))
    assert len(rows) == 1 and "uogTr" in rows[0].values(), table
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("backend", ["embedded"])
def test_the_api_guide_runs_as_written(backend: str, stack: Callable[..., LiveService], tmp_path: Path,
                                       shared_data: Path) -> None:
    service = stack(backend, EVALSERVE_CATALOGUE_DIR=str(shared_data))
    service.start_api()
    service.start_worker()
    data = Path(service.env["EVALSERVE_DATA_DIR"])
    (data / "admin-token").write_text(service.token + "\n")  # where `evalserve serve` keeps its admin token
    work = _reader(tmp_path, shared_data, "reader")
    env = {"PATH": f"{shims(tmp_path / 'bin')}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path),
           "LANG": "C.UTF-8", "EVALSERVE_URL": service.url, "EVALSERVE_DATA_DIR": str(data)}
    done = _run(api_guide(), work, env)
    out = done.stdout
    # the complete example: the job's result document with both runs
    result: dict[str, Any] = next(d for d in json_documents(out) if "meta" in d and "runs" in d)
    assert sorted(result["runs"]) == ["bm25.run", "dense.run"]
    # the idempotent retry was replayed, not refused
    assert "Idempotent-Replayed: true" in out.replace("idempotent-replayed", "Idempotent-Replayed"), out[-3000:]
    assert "idempotency-key-reused" not in out
    # the shared task: the submission evaluated, the leaderboard (CSV) lists the team
    assert "uogTr" in out[out.rindex("rank,"):]
    # the errors the guide shows on purpose are problem+json, never a traceback
    assert '"code": "invalid-upload"' in out
    # the end-of-task report: built by the worker, its zip listed, its LaTeX source shown
    assert "report/report.html" in out and "report/per-topic.csv" in out and "\\documentclass" in out


@pytest.mark.parametrize("document", ["README.md", "docs/api.md"])
def test_json_id_shows_the_servers_problem_not_a_traceback(document: str) -> None:
    """``COL=$(curl ... | json_id)`` on an error answer (or none) prints what the server said and fails; it used to
    end in a Python traceback (issue 28)."""
    text = (ROOT / document).read_text()
    definition = re.search(r"^json_id\(\) \{.*?; \}$", text, re.MULTILINE | re.DOTALL)
    assert definition is not None, f"{document} defines json_id"
    problem = ('{"type": "https://evalserve.dev/problems/invalid-upload", "status": 422, "code": "invalid-upload",'
               ' "problems": [{"line": 1, "column": 11, "code": "score-not-numeric"}]}')
    html = "<html>Bad Gateway</html>"  # a proxy's answer
    for answer, shown in ((problem, problem), ("", "nothing"), (html, html)):
        done = subprocess.run(["bash", "-c", definition.group(0) + '\nID=$(printf %s "$ANSWER" | json_id)'],
                              env={**os.environ, "ANSWER": answer}, capture_output=True, text=True, timeout=60)
        assert done.returncode == 1, done
        assert done.stderr == f"the server answered: {shown}\n", done.stderr
        assert "Traceback" not in done.stderr
    ok = subprocess.run(["bash", "-c", definition.group(0) + '\necho \'{"id": "col_1"}\' | json_id'],
                        capture_output=True, text=True, timeout=60)
    assert ok.stdout == "col_1\n"
