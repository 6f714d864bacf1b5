"""A diversity measure on single-intent (ad hoc) judgments gets one ``single-intent`` warning (issue 28:
alpha_nDCG@20 gave 0.994 with no word that it then scores relevance only): in the result's ``meta.warnings``, on
``evalserve evaluate``'s stderr, once per evaluation whatever the number of runs, and never on judgments with
subtopics (``evaluation/measure_notes.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalserve.cli.main import main

ADHOC = "1 0 d1 1\n1 0 d2 1\n1 0 d3 0\n2 0 d4 2\n"
SUBTOPICS = "1 1 d1 1\n1 2 d2 1\n1 2 d3 0\n2 1 d4 2\n"
RUN = "1 Q0 d1 1 3.0 a\n1 Q0 d2 2 2.0 a\n2 Q0 d4 1 1.0 a\n"


def _evaluate(tmp_path: Path, capsys: pytest.CaptureFixture[str], qrels: str, *measures: str,
              runs: int = 1) -> tuple[dict[str, object], str]:
    (tmp_path / "qrels.txt").write_text(qrels)
    args = ["evaluate", "--qrels", str(tmp_path / "qrels.txt"), "-m", *measures]
    for i in range(runs):
        (tmp_path / f"r{i}.run").write_text(RUN)
        args += ["--run", str(tmp_path / f"r{i}.run")]
    capsys.readouterr()
    assert main(args) == 0
    out, err = capsys.readouterr()
    return json.loads(out), err


def _notes(document: dict[str, object]) -> list[dict[str, object]]:
    meta = document["meta"]
    assert isinstance(meta, dict)
    return [w for w in meta["warnings"] if w["code"] == "single-intent"]


def test_diversity_measures_on_adhoc_judgments_are_named_once(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    document, err = _evaluate(tmp_path, capsys, ADHOC, "alpha_nDCG@20", "nDCG@20", "ERR_IA@20", runs=3)
    [note] = _notes(document)
    assert note["severity"] == "warning" and note["source"] == str(tmp_path / "qrels.txt")
    message = str(note["message"])
    assert message.startswith("alpha_nDCG@20, ERR_IA@20: every topic of the judgments has one intent (ad hoc"
                              " qrels), so these diversity measures see no subtopics and score relevance only")
    assert message.split(":", 1)[0] == "alpha_nDCG@20, ERR_IA@20"  # the ad hoc measure is not named
    assert [line for line in err.splitlines() if "[single-intent]" in line] == [
        f"{tmp_path / 'qrels.txt'}: warning: {message} [single-intent]"]


def test_one_measure_reads_in_the_singular(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document, _ = _evaluate(tmp_path, capsys, ADHOC, "alpha_nDCG@20")
    [note] = _notes(document)
    assert "so this diversity measure sees no subtopics and scores relevance only" in str(note["message"])


@pytest.mark.parametrize(("qrels", "measures"), [(SUBTOPICS, ("alpha_nDCG@20",)), (ADHOC, ("nDCG@20", "AP"))],
                         ids=["subtopics", "adhoc-measures"])
def test_no_note_when_the_measures_fit(tmp_path: Path, capsys: pytest.CaptureFixture[str], qrels: str,
                                       measures: tuple[str, ...]) -> None:
    document, err = _evaluate(tmp_path, capsys, qrels, *measures)
    assert _notes(document) == [] and "single-intent" not in err


def test_quiet_hides_it_from_stderr_not_from_the_document(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "qrels.txt").write_text(ADHOC)
    (tmp_path / "a.run").write_text(RUN)
    assert main(["evaluate", "--qrels", str(tmp_path / "qrels.txt"), "--run", str(tmp_path / "a.run"), "-q",
                 "-m", "alpha_nDCG@20"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and len(_notes(json.loads(out))) == 1
