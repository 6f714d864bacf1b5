"""``evalserve hierarchy``: synthesise fingerprints, build hierarchies as JSON, and reuse the file with
``--hierarchy``: the same HD#-nDCG as building them during the evaluation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalserve.cli.main import main


def test_build_once_and_reuse(shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = str(shared_data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt")
    run = str(shared_data / "trec-web-2012-runs" / "runs" / "ql-results-catb.txt.gz")
    fingerprints, hierarchies = tmp_path / "fp.txt", tmp_path / "h.json"
    assert main(["hierarchy", "fingerprints", "--qrels", qrels, "-o", str(fingerprints)]) == 0
    assert main(["hierarchy", "build", "--qrels", qrels, "--fingerprints", str(fingerprints),
                 "-o", str(hierarchies)]) == 0
    assert len(json.loads(hierarchies.read_text())["topics"]) == 50
    capsys.readouterr()
    common = ["evaluate", "--qrels", qrels, "--run", run, "-m", "HDsharp_nDCG@20", "-q"]
    assert main([*common, "--hierarchy", str(hierarchies)]) == 0
    reused = json.loads(capsys.readouterr().out)["runs"]
    assert main([*common, "--fingerprints", str(fingerprints)]) == 0
    built = json.loads(capsys.readouterr().out)["runs"]
    assert reused == built
    assert main(["hierarchy", "build", "--qrels", qrels]) == 2
    assert "[missing-inputs]" in capsys.readouterr().err
