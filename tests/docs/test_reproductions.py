"""bench/reproduce_meta.py keeps working (in a tiny configuration) and docs/reproductions.md shows how to run it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "reproduce_meta.py"
DOC = ROOT / "docs" / "reproductions.md"
DATA = Path("/work/shared/data")
TINY = ["--synthetic", "3", "--resamples", "50", "--grid", "small", "--scenarios", "official,short_lists",
        "--seed", "7"]

needs_data = pytest.mark.skipif(
    not (DATA / "trec-web-2012-runs" / "runs").is_dir() or not (DATA / "trec-web-2009-2014" / "2012").is_dir(),
    reason="the shared TREC Web 2012 data is not available",
)


def _run(out: Path, *extra: str) -> tuple[dict[str, Any], str]:
    cmd = [sys.executable, str(SCRIPT), "--data", str(DATA), "--out", str(out), *TINY, *extra]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((out / "reproduce_meta.json").read_text()), done.stdout


def test_the_doc_gives_the_commands() -> None:
    text = DOC.read_text()
    assert "python3 bench/reproduce_meta.py" in text
    for option in ("--seed", "--depths", "--ntcir"):
        assert option in text, option
    assert "reproduce_meta" in (ROOT / "bench" / "README.md").read_text()


@needs_data
def test_tiny_configuration(tmp_path: Path) -> None:
    extra = ["--ntcir", "--ntcir-runs", "3"] if (DATA / "ntcir-www" / "wwwE.qrels").is_file() else []
    doc, stdout = _run(tmp_path / "a", *extra)
    runs = [r["name"] for r in doc["runs"]]
    assert len(runs) == 4 + 3 and len(set(runs)) == len(runs)
    assert all((tmp_path / "a" / "runs" / f"{r}.txt").is_file() for r in runs if r.startswith("syn"))

    mu = doc["mu"]
    assert set(mu["scenarios"]) == {"official", "short_lists"}
    for scenario in mu["scenarios"].values():
        assert set(scenario["mu"]) == set(mu["measures"])
        finite = [v for v in scenario["mu"].values() if v is not None]
        assert finite and all(v <= 1.0 + 1e-12 for v in finite)  # MU is at most 1 (spec 8.1)
        assert scenario["pairs"] == 7 * 6 * scenario["topics"]
        assert 0 <= scenario["tied_on_every_measure"] <= scenario["unanimous_for_the_set"] <= scenario["pairs"]

    power = doc["discriminative_power"]["trec2012"]
    assert all(check["holds"] for check in power["identities"].values())  # AP, Q and RR as NCU members
    for found in power["measures"].values():
        assert found["pairs"] == 7 * 6 // 2 and 0 <= found["significant_pairs"] <= found["pairs"]
        assert len(found["asl"]) == found["pairs"]
    assert all(v["pairs"] == 6 for v in power["real_runs_only"].values())
    if extra:
        assert len(doc["discriminative_power"]["ntcir_www1"]["runs"]) == 3

    assert "### MU: best variant per measure family" in stdout and "### Discriminative power" in stdout

    again, _ = _run(tmp_path / "b", *extra)  # seeded: the same arguments give the same results
    assert again == doc
