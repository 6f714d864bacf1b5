"""EvALL and PyEvALL system outputs, written by hand from the formats' documentation, give the numbers of the
equivalent TREC run: the same ``evalserve evaluate`` output under every tie policy, plain or gzip, detected or
named (docs/formats.md); a bad file exits 2 with every problem located."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from evalserve.cli.main import main
from evaluation.formats.run_formats import RUN_FORMATS, detect_run_format, parse_run_as
from evaluation.formats.source import Blob

QRELS = "q1 0 d1 1\nq1 0 d3 2\nq1 0 d9 1\nq2 0 d2 1\nq2 0 d5 3\n"
# the ranking every file below states: q1: d3 d1 d4 d2, q2: d5 d7 d2
TREC = ("q1 Q0 d3 1 4.0 sys\nq1 Q0 d1 2 3.0 sys\nq1 Q0 d4 3 2.0 sys\nq1 Q0 d2 4 1.0 sys\n"
        "q2 Q0 d5 1 3.0 sys\nq2 Q0 d7 2 2.0 sys\nq2 Q0 d2 3 1.0 sys\n")
# EvALL ranking output: "test case <tab> id", the ranking is the order of the lines (quotes as EvALL exports)
EVALL = 'q1\td3\nq1\td1\n"q1"\t"d4"\nq1\td2\nq2\td5\nq2\td7\nq2\td2\n'
# PyEvALL JSON predictions: value = position in the ranking; items need not be in order
PYEVALL_JSON = """[
  {"test_case": "q1", "id": "d4", "value": 3},
  {"test_case": "q1", "id": "d3", "value": 1},
  {"test_case": "q2", "id": "d5", "value": 1},
  {"test_case": "q1", "id": "d1", "value": 2},
  {"test_case": "q2", "id": "d2", "value": 3},
  {"test_case": "q1", "id": "d2", "value": 4},
  {"test_case": "q2", "id": "d7", "value": 2}
]
"""
# PyEvALL TSV predictions, with the optional header line
PYEVALL_TSV = "test_case\tid\tvalue\nq1\td3\t1\nq1\td1\t2\nq1\td4\t3\nq1\td2\t4\nq2\td5\t1\nq2\td7\t2\nq2\td2\t3\n"

MEASURES = ("AP", "nDCG@10", "P@2", "RR", "ERR@10", "Rprec", "Bpref")
FILES = {"sys.evall.tsv": ("evall", EVALL), "sys.json": ("pyevall-json", PYEVALL_JSON),
         "sys.pyevall.tsv": ("pyevall-tsv", PYEVALL_TSV)}


def evaluate(capsys: pytest.CaptureFixture[str], qrels: Path, run: Path, *extra: str) -> tuple[int, str, str]:
    code = main(["evaluate", "--qrels", str(qrels), "--run", str(run), "-m", *MEASURES, "--per-topic", *extra])
    out, err = capsys.readouterr()
    return code, out, err


def scores(out: str) -> dict[str, object]:
    """The results document's scores, whatever the run is named."""
    document = json.loads(out)
    return next(iter(document["runs"].values()))  # type: ignore[no-any-return]


@pytest.fixture
def qrels(tmp_path: Path) -> Path:
    path = tmp_path / "qrels.txt"
    path.write_text(QRELS)
    return path


@pytest.fixture
def trec(tmp_path: Path) -> Path:
    path = tmp_path / "sys.run"
    path.write_text(TREC)
    return path


@pytest.mark.parametrize("ties", ["trec", "rank", "file"])
@pytest.mark.parametrize("name", sorted(FILES))
@pytest.mark.parametrize("how", ["detected", "named", "gzip"])
def test_gives_the_numbers_of_the_equivalent_trec_run(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                        qrels: Path, trec: Path, name: str, how: str,
                                                        ties: str) -> None:
    fmt, text = FILES[name]
    path = tmp_path / (name + (".gz" if how == "gzip" else ""))
    path.write_bytes(gzip.compress(text.encode()) if how == "gzip" else text.encode())
    extra = ["--run-format", fmt] if how == "named" else []
    code, out, err = evaluate(capsys, qrels, path, "--ties", ties, *extra)
    assert code == 0, err
    want_code, want, _ = evaluate(capsys, qrels, trec, "--ties", ties)
    assert want_code == 0
    assert scores(out) == scores(want)
    assert err == ""  # no warning: the file is clean


@pytest.mark.parametrize("name", sorted(FILES))
def test_reads_to_the_same_ranking(name: str) -> None:
    fmt, text = FILES[name]
    run = parse_run_as(Blob.from_bytes(text.encode(), name), fmt).unwrap()
    ranking = {t: [] for t in run.topics}  # type: dict[str, list[tuple[int, bytes]]]
    for topic, rank, doc in zip(run.topic.tolist(), run.rank.tolist(), run.docno.tolist()):
        ranking[run.topics[topic]].append((rank, doc.rstrip(b"\0")))
    assert {t: [d for _, d in sorted(r)] for t, r in ranking.items()} == {
        "q1": [b"d3", b"d1", b"d4", b"d2"], "q2": [b"d5", b"d7", b"d2"]}
    assert run.name == name


@pytest.mark.parametrize(("head", "fmt"), [
    (TREC, "trec"), ("1\tQ0\td1\t1\t2.5\ttag\n", "trec"), ("# a comment\n" + TREC, "trec"),
    (EVALL, "evall"), (PYEVALL_JSON, "pyevall-json"), ("\n  [{", "pyevall-json"),
    (PYEVALL_TSV, "pyevall-tsv"), ("q1\td3\t1\n", "pyevall-tsv"), ("\ufeffq1\td3\n", "evall"),
    ("1 Q0 d1 1\n", "trec"), ("", "trec"),
])
def test_the_format_is_told_from_the_first_line(head: str, fmt: str) -> None:
    assert detect_run_format(head.encode()) == fmt


def test_a_named_format_reads_the_file_as_that_format(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                      qrels: Path) -> None:
    path = tmp_path / "sys.tsv"
    path.write_text(EVALL)
    code, _, err = evaluate(capsys, qrels, path, "--run-format", "pyevall-tsv")
    assert code == 2
    assert f"{path}:1:6: error: lines 1-7: PyEvALL TSV lines have 3 fields; this one has 2 [wrong-column-count]" in err
    code, _, err = evaluate(capsys, qrels, path, "--run-format", "trec")
    assert code == 2 and "[wrong-column-count]" in err


def test_every_problem_of_a_bad_file_is_located_and_the_cli_exits_2(capsys: pytest.CaptureFixture[str],
                                                                     tmp_path: Path, qrels: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('[{"test_case": "q1", "id": "d1", "value": 1},\n {"test_case": "q1", "id": "d1", "value": 2},\n'
                    ' {"test_case": "q1", "id": "d2", "value": "A"}]\n')
    code, out, err = evaluate(capsys, qrels, path)
    assert code == 2 and out == ""
    assert f"{path}:2:22: error: item d1 appears twice in test case q1 (first on line 1) [duplicate-docno]" in err
    assert f"{path}:3:34: error: value \"A\" is not an integer position" in err


def test_tied_positions_are_ranked_in_file_order_with_a_warning(capsys: pytest.CaptureFixture[str],
                                                                tmp_path: Path, qrels: Path, trec: Path) -> None:
    tied = PYEVALL_TSV.replace("q1\td1\t2", "q1\td1\t1")  # d3 and d1 both first: d3 (earlier line) ranks first
    path = tmp_path / "tied.tsv"
    path.write_text(tied)
    code, out, err = evaluate(capsys, qrels, path)
    assert code == 0
    assert f"{path}:3:7: warning: position 1 of test case q1 is also given on line 2" in err
    assert scores(out) == scores(evaluate(capsys, qrels, trec)[1])


def test_run_formats_are_the_documented_ones() -> None:
    assert RUN_FORMATS == ("auto", "trec", "evall", "pyevall-json", "pyevall-tsv")


def _doc_examples() -> list[str]:
    """The example files of docs/formats.md's "EvALL and PyEvALL runs" section (its fenced blocks but commands)."""
    text = (Path(__file__).resolve().parents[3] / "docs" / "formats.md").read_text()
    section = text.split("## EvALL and PyEvALL runs", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL)
    return [body for lang, body in blocks if lang != "bash"]


DOC_EXAMPLES = _doc_examples()


def test_the_formats_page_has_an_example_of_each_format() -> None:
    assert len(DOC_EXAMPLES) == 3


@pytest.mark.parametrize(("example", "fmt"), list(zip(DOC_EXAMPLES, ["evall", "pyevall-json", "pyevall-tsv"])))
def test_the_documented_examples_read_cleanly_in_their_format(example: str, fmt: str) -> None:
    assert detect_run_format(example.encode()) == fmt
    parsed = parse_run_as(Blob.from_bytes(example.encode(), "example"), "auto")
    assert parsed.problems == () and parsed.value is not None
    assert parsed.value.topics == ("q1", "q2") and parsed.value.docno[0].rstrip(b"\0") == b"d3"
