"""The README is the test: its "Use the service" and "Run a shared task" shell blocks run verbatim with bash
against a live deployment, with only what the README tells the reader to set (``URL`` and ``TOKEN``, from the
block that starts the server, which the test's deployment stands in for) and an empty working directory."""

from __future__ import annotations

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

import pytest

from tests.service.live import ROOT, LiveService

SECTIONS = ("## Use the service", "## Run a shared task")
BLOCK = re.compile(r"^```bash\n(.*?)^```", re.MULTILINE | re.DOTALL)


def readme_blocks(section: str) -> list[str]:
    """The bash blocks of one README section, as written."""
    text = (ROOT / "README.md").read_text()
    start = text.index(section + "\n")
    end = text.find("\n## ", start + len(section))
    return BLOCK.findall(text[start:end if end >= 0 else None])


def walkthrough() -> str:
    """The two sections' blocks in order, as a reader types them into one shell, without the one that starts
    the server."""
    blocks = [b for section in SECTIONS for b in readme_blocks(section) if "evalserve serve &" not in b]
    return "\n".join(blocks)


def shims(folder: Path) -> Path:
    """``evalserve`` and ``evalserve-client`` commands that run this checkout with this interpreter (an
    installed console script may belong to another checkout)."""
    folder.mkdir()
    for name, module in (("evalserve", "evalserve.cli.main"), ("evalserve-client", "evalserve_client.cli")):
        path = folder / name
        path.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}:{ROOT / "clients" / "python"}" exec "{sys.executable}"'
                        f' -m {module} "$@"\n')
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return folder


def json_documents(text: str) -> list[dict[str, object]]:
    """Every JSON object that starts a line of ``text`` (curl prints them one after another)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    for line in text.splitlines(keepends=True):
        if line.startswith("{"):
            found.append(decoder.raw_decode(text, at)[0])
        at += len(line)
    return found


def test_the_blocks_are_found_and_need_only_url_and_token() -> None:
    setup = [b for b in readme_blocks(SECTIONS[0]) if "evalserve serve &" in b]
    assert len(setup) == 1 and "URL=" in setup[0] and "TOKEN=" in setup[0]
    script = walkthrough()
    assert "curl" in script and "evalserve-client task submit" in script
    assert "..." not in script, "a placeholder the reader cannot type"
    assert "2026-" not in script, "dates are relative to now"


@pytest.mark.parametrize("backend", ["embedded"])
def test_the_readme_walkthroughs_run_as_written(backend: str, stack: Callable[..., LiveService],
                                                tmp_path: Path) -> None:
    service = stack(backend)
    service.start_api()
    service.start_worker()
    work = tmp_path / "reader"
    work.mkdir()
    env = {"PATH": f"{shims(tmp_path / 'bin')}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path),
           "LANG": "C.UTF-8", "URL": service.url, "TOKEN": service.token}
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", walkthrough()], cwd=work, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    out = done.stdout
    assert sorted(p.name for p in work.iterdir()) == ["bm25.run", "dense.run.gz", "qrels.txt"]
    # "Use the service": the job's state, then the result document with both runs and the three measures
    documents = json_documents(out)
    result = next(d for d in documents if "meta" in d and "runs" in d)
    assert sorted(result["runs"]) == ["bm25.run", "dense.run"]
    assert set(result["runs"]["bm25.run"]) >= {"AP", "nDCG@10", "alpha_nDCG@20"}
    assert any(d.get("state") in ("queued", "running", "succeeded") for d in documents)
    # "Run a shared task": the submission evaluated and ranked on the leaderboard (CSV at the end)
    table = out[out.rindex("rank,"):]
    rows = list(csv.DictReader(io.StringIO(table)))
    assert len(rows) == 1 and "uogTr" in rows[0].values(), table
    assert "Traceback" not in done.stderr
