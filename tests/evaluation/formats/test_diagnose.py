"""Whole-file diagnoses (issue 28, a newcomer's trip-ups): a comma-separated run or qrels, and a run and judgments
given the other way round, each get ONE problem saying so instead of one "6 fields; this one has 1" per line --
in the readers (``evaluation.formats.diagnose``), hence in ``evalserve evaluate`` and over HTTP alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalserve.cli.main import main
from evaluation.formats import parse_qrels, parse_run
from evaluation.formats.source import Blob

RUN = "".join(f"30{i // 10} Q0 doc{i} {i % 10 + 1} {10 - i % 10}.5 myrun\n" for i in range(100))
QRELS = "".join(f"30{i // 10} 0 doc{i} {i % 3}\n" for i in range(100))


def _blob(text: str, name: str) -> Blob:
    return Blob.from_bytes(text.encode(), name=name)


def _commas(text: str) -> str:
    return text.replace(" ", ",")


def test_a_comma_separated_run_is_one_problem() -> None:
    parsed = parse_run(_blob(_commas(RUN), "sys.csv"))
    assert parsed.value is None and parsed.omitted_errors == 0
    [problem] = parsed.problems
    assert (problem.code, problem.line, problem.column) == ("wrong-column-count", 1, 4)
    assert problem.message == (
        "this looks comma-separated (line 1: '300,Q0,doc0,1,10.5,myrun'; 100 lines have the wrong number of"
        " fields); TREC run files are whitespace-separated `qid Q0 docno rank score tag`")


def test_a_comma_separated_qrels_is_one_problem() -> None:
    parsed = parse_qrels(_blob(_commas(QRELS), "qrels.csv"))
    [problem] = parsed.problems
    assert problem.message.startswith("this looks comma-separated (line 1: '300,0,doc0,0'")
    assert problem.message.endswith("TREC qrels files are whitespace-separated `qid iter docno rel`")


def test_a_csv_header_among_good_lines_is_named_too() -> None:
    parsed = parse_run(_blob("qid,Q0,docno,rank,score,tag\n" + RUN, "sys.run"))
    [problem] = parsed.problems
    assert problem.line == 1 and "comma-separated (line 1: 'qid,Q0,docno,rank,score,tag')" in problem.message


def test_a_run_given_as_judgments_asks_whether_they_were_swapped() -> None:
    [problem] = parse_qrels(_blob(RUN, "sys.run")).problems
    assert problem.code == "wrong-column-count" and problem.line == 1
    assert problem.message == (
        "this looks like a TREC run (`qid Q0 docno rank score tag`), not judgments (line 1: '300 Q0 doc0 1 10.5"
        " myrun'): were the run and the judgments swapped? TREC qrels lines are `qid iter docno rel`")


@pytest.mark.parametrize("qrels", [QRELS, QRELS.replace(" 0 doc", " doc").replace(" 1\n", " L1\n")],
                         ids=["trec", "ntcir"])
def test_judgments_given_as_a_run_ask_whether_they_were_swapped(qrels: str) -> None:
    [problem] = parse_run(_blob(qrels, "qrels.txt")).problems
    assert problem.message.startswith("this looks like judgments (`qid iter docno rel`), not a run (line 1: ")
    assert "were the run and the judgments swapped?" in problem.message


def test_a_few_short_lines_are_not_called_swapped() -> None:
    """Some good lines: not a file of the other layout; the bad ones are listed (as ranges)."""
    parsed = parse_run(_blob(RUN + "301 0 docx 1\n301 0 docy 1\n", "sys.run"))
    assert [(p.line, p.end_line, p.message) for p in parsed.problems] == [
        (101, 102, "lines 101-102: TREC run lines have 6 fields; this one has 4")]


def test_evaluate_prints_one_line_for_a_csv_run_and_for_swapped_files(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "sys.run").write_text(RUN)
    (tmp_path / "sys.csv").write_text(_commas(RUN))
    code = main(["evaluate", "--qrels", str(tmp_path / "qrels.txt"), "--run", str(tmp_path / "sys.csv"), "-m", "AP"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines() == [
        f"{tmp_path / 'sys.csv'}:1:4: error: this looks comma-separated (line 1: '300,Q0,doc0,1,10.5,myrun'; 100"
        " lines have the wrong number of fields); TREC run files are whitespace-separated `qid Q0 docno rank"
        " score tag` [wrong-column-count]"]
    code = main(["evaluate", "--qrels", str(tmp_path / "sys.run"), "--run", str(tmp_path / "qrels.txt"), "-m", "AP"])
    err = capsys.readouterr().err
    assert code == 2
    lines = err.splitlines()
    assert 1 <= len(lines) <= 2 and all("were the run and the judgments swapped?" in line for line in lines)
