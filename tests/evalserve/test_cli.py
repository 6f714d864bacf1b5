"""The ``evalserve`` command, run in-process through ``main(argv)``: exit codes, problem lines, output formats.

Bad inputs come from the malformed-input corpus (``tests/data/bad/``, its ``MANIFEST.tsv`` says what each
file must report); good inputs are tiny files written here, with values worked out by hand.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from evalserve.cli.main import main
from evaluation.report import engine_version

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"

QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 1\n2 0 d1 1\n3 0 d9 1\n"
RUN_A = "1 Q0 d1 1 0.9 a\n1 Q0 d2 2 0.8 a\n1 Q0 d3 3 0.7 a\n2 Q0 d1 1 1.0 a\n"
RUN_B = "1 Q0 d3 1 0.9 b\n1 Q0 d1 2 0.8 b\n2 Q0 d5 1 1.0 b\n2 Q0 d1 2 0.5 b\n"
# by hand: a.run AP 1 = (1/1 + 2/3)/2, AP 2 = 1, P@2 = 1/2 on both; b.run AP 1 = 1, AP 2 = 1/2, P@2 = 1, 1/2
EXPECTED = {
    "a.run": {"AP": {"1": 5 / 6, "2": 1.0}, "P@2": {"1": 0.5, "2": 0.5}},
    "b.run": {"AP": {"1": 1.0, "2": 0.5}, "P@2": {"1": 1.0, "2": 0.5}},
}


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    """qrels, a plain run in a sub-directory and a gzip run."""
    (tmp_path / "sys").mkdir()
    files = {"qrels": tmp_path / "q.txt", "a": tmp_path / "sys" / "a.run", "b": tmp_path / "b.run.gz"}
    files["qrels"].write_text(QRELS)
    files["a"].write_text(RUN_A)
    files["b"].write_bytes(gzip.compress(RUN_B.encode(), mtime=0))
    return files


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def manifest(file: str, reader: str) -> list[dict[str, str]]:
    with (BAD / "MANIFEST.tsv").open(newline="") as f:
        return [r for r in csv.DictReader(f, delimiter="\t") if (r["file"], r["reader"]) == (file, reader)]


def problem_line(path: Path, row: dict[str, str]) -> re.Pattern[str]:
    where = str(path) + "".join(f":{row[k]}" for k in ("line", "column") if row[k] != "-")
    return re.compile(rf"^{re.escape(where)}: {row['expect']}: .+ \[{re.escape(row['code'])}\]$", re.MULTILINE)


# ----------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("file", "reader"),
    [
        ("run-many-problems.run", "run"),
        ("run-score-not-numeric.run", "run"),
        ("run-crlf-error.run", "run"),
        ("truncated.gz", "run"),
        ("qrels-many-problems.qrels", "qrels"),
        ("qrels-ntcir-bad-label.qrels", "qrels"),
        ("evall-wrong-column-count.tsv", "evall"),
        ("truncated.gz", "qrels"),
    ],
)
def test_bad_input_prints_every_problem_and_exits_2(
    capsys: pytest.CaptureFixture[str], inputs: dict[str, Path], file: str, reader: str
) -> None:
    path = BAD / file
    qrels, run = (str(inputs["qrels"]), str(path)) if reader == "run" else (str(path), str(inputs["a"]))
    code, out, err = run_cli(capsys, "evaluate", "--qrels", qrels, "--run", run, "-m", "AP")
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    rows = manifest(file, reader)
    assert rows
    for row in rows:
        if row["line"] == "-" and row["expect"] == "warning":
            continue  # file-level warnings are printed too, but not bound to a line
        assert problem_line(path, row).search(err), (row, err)
    n_errors = sum(r["expect"] == "error" for r in rows)
    assert len(re.findall(r": error: ", err)) == n_errors


def test_problems_of_every_input_are_reported_in_one_pass(capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = BAD / "qrels-grade-not-integer.qrels", BAD / "run-score-nan.run"
    code, _, err = run_cli(capsys, "evaluate", "--qrels", str(qrels), "--run", str(run), "--run", str(run) + "x")
    assert code == 2
    lines = err.splitlines()
    assert sum(line.startswith(f"{qrels}:") for line in lines) == 3
    assert sum(line.startswith(f"{run}:") for line in lines) == 3
    assert any(line.startswith(f"{run}x: error: ") and line.endswith("[file-not-found]") for line in lines)


def test_capped_errors_are_counted(capsys: pytest.CaptureFixture[str], inputs: dict[str, Path],
                                   tmp_path: Path) -> None:
    path = tmp_path / "many.run"
    path.write_text("".join(f"1 Q0 d{i} 1 x{i} t\n" for i in range(130)))
    code, _, err = run_cli(capsys, "evaluate", "--qrels", str(inputs["qrels"]), "--run", str(path))
    assert code == 2
    lines = err.splitlines()
    assert len([line for line in lines if line.startswith(f"{path}:")]) == 100
    assert lines[-1] == "... and 30 more errors"


def test_repeated_errors_are_one_line(capsys: pytest.CaptureFixture[str], inputs: dict[str, Path]) -> None:
    path = BAD / "run-too-many-errors.run"
    code, _, err = run_cli(capsys, "evaluate", "--qrels", str(inputs["qrels"]), "--run", str(path))
    assert code == 2
    assert err.splitlines() == [f"{path}:2:13: error: lines 2-131: score 'x' is not a number [score-not-numeric]"]


def test_unknown_measure_exits_2_with_a_suggestion(
    capsys: pytest.CaptureFixture[str], inputs: dict[str, Path]
) -> None:
    code, out, err = run_cli(
        capsys, "evaluate", "--qrels", str(inputs["qrels"]), "--run", str(inputs["a"]), "-m", "APP"
    )
    assert code == 2
    assert out == ""
    assert "APP" in err and "did you mean" in err and "AP" in err
    assert "Traceback" not in err


def test_same_run_name_twice_exits_2(capsys: pytest.CaptureFixture[str], inputs: dict[str, Path]) -> None:
    other = inputs["qrels"].parent / "a.run"
    other.write_text(RUN_A)
    code, _, err = run_cli(capsys, "evaluate", "--qrels", str(inputs["qrels"]), "--run", str(inputs["a"]),
                           "--run", str(other))
    assert code == 2
    assert "[duplicate-run-name]" in err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["evaluate", "--run", "x.run"])  # --qrels missing
    assert info.value.code == 2
    assert main([]) == 2  # no command: help, exit 2
    assert "usage" in capsys.readouterr().out


# ----------------------------------------------------------------------------------------- good input


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def evaluate_json(capsys: pytest.CaptureFixture[str], files: dict[str, Path], *extra: str) -> dict[str, Any]:
    code, out, err = run_cli(
        capsys, "evaluate", "--qrels", str(files["qrels"]), "--run", str(files["a"]), "--run", str(files["b"]),
        "-m", "AP", "P@2", *extra,
    )
    assert code == 0, err
    result: dict[str, Any] = json.loads(out)
    return result


def test_json_contract(capsys: pytest.CaptureFixture[str], inputs: dict[str, Path]) -> None:
    doc = evaluate_json(capsys, inputs)
    meta = doc["meta"]
    assert meta["ties"] == "trec" and meta["topics"] == "common"
    assert meta["evalserve_version"] == engine_version()
    assert meta["inputs"] == {
        "q.txt": sha256(inputs["qrels"]),
        "a.run": sha256(inputs["a"]),
        "b.run.gz": sha256(inputs["b"]),  # the bytes as given
    }
    # run name = file name without directories and without .gz; runs and measures in the order given
    assert list(doc["runs"]) == ["a.run", "b.run"]
    for name, measures in EXPECTED.items():
        assert list(doc["runs"][name]) == ["AP", "P@2"]
        for measure, per_topic in measures.items():
            entry = doc["runs"][name][measure]
            assert set(entry) == {"mean"}  # per_topic only when asked for
            assert entry["mean"] == pytest.approx(sum(per_topic.values()) / len(per_topic), abs=1e-12)


def test_json_per_topic_and_policies(capsys: pytest.CaptureFixture[str], inputs: dict[str, Path]) -> None:
    doc = evaluate_json(capsys, inputs, "--per-topic", "--ties", "rank", "--topics", "complete")
    assert (doc["meta"]["ties"], doc["meta"]["topics"]) == ("rank", "complete")
    for name, measures in EXPECTED.items():
        for measure, per_topic in measures.items():
            entry = doc["runs"][name][measure]
            want = {**per_topic, "3": 0.0}  # complete: the qrels topic missing from the run scores 0
            assert entry["per_topic"] == pytest.approx(want, abs=1e-12)
            assert entry["mean"] == pytest.approx(sum(want.values()) / 3, abs=1e-12)


def test_trec_eval_format(capsys: pytest.CaptureFixture[str], inputs: dict[str, Path]) -> None:
    code, out, _ = run_cli(capsys, "evaluate", "--qrels", str(inputs["qrels"]), "--run", str(inputs["a"]),
                           "-m", "AP", "P@2", "runid", "num_q", "--format", "trec_eval", "--per-topic")
    assert code == 0
    rows = [line.split("\t") for line in out.splitlines()]
    assert all(len(r) == 3 for r in rows), out
    table = {(m.strip(), q): v for m, q, v in rows}
    # trec_eval's labels and the run tag (issue 14), as trec_eval prints them
    assert table["runid", "all"] == "a"
    assert table["num_q", "all"] == "2"
    assert table["map", "1"] == "0.8333"
    assert table["map", "2"] == "1.0000"
    assert table["map", "all"] == "0.9167"
    assert table["P_2", "all"] == "0.5000"
    # explicit measures without runid / num_q print neither, as trec_eval -m map
    code, out, _ = run_cli(capsys, "evaluate", "--qrels", str(inputs["qrels"]), "--run", str(inputs["a"]),
                           "-m", "AP", "--format", "trec_eval")
    assert code == 0 and out == "map                   \tall\t0.9167\n"


def test_tsv_format(capsys: pytest.CaptureFixture[str], inputs: dict[str, Path]) -> None:
    code, out, _ = run_cli(capsys, "evaluate", "--qrels", str(inputs["qrels"]), "--run", str(inputs["a"]),
                           "--run", str(inputs["b"]), "-m", "AP", "P@2", "--format", "tsv", "--per-topic")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "run\tmeasure\ttopic\tvalue"
    got = {}
    for line in lines[1:]:
        run, measure, topic, value = line.split("\t")
        got[run, measure, topic] = float(value)
    for name, measures in EXPECTED.items():
        for measure, per_topic in measures.items():
            for topic, value in per_topic.items():
                assert got[name, measure, topic] == pytest.approx(value, abs=1e-12)
            assert got[name, measure, "all"] == pytest.approx(sum(per_topic.values()) / 2, abs=1e-12)
    assert len(got) == 2 * 2 * 3


def test_output_file(capsys: pytest.CaptureFixture[str], inputs: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    code, out, _ = run_cli(capsys, "evaluate", "--qrels", str(inputs["qrels"]), "--run", str(inputs["a"]),
                           "-m", "AP", "-o", str(target))
    assert code == 0 and out == ""
    assert json.loads(target.read_text())["runs"]["a.run"]["AP"]["mean"] == pytest.approx(11 / 12)


def test_run_from_stdin(
    capsys: pytest.CaptureFixture[str], inputs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Stdin:
        buffer = io.BytesIO(RUN_A.encode())

    monkeypatch.setattr(sys, "stdin", Stdin())
    code, out, err = run_cli(capsys, "evaluate", "--qrels", str(inputs["qrels"]), "--run", "-", "-m", "AP")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["meta"]["inputs"]["<stdin>"] == hashlib.sha256(RUN_A.encode()).hexdigest()
    assert doc["runs"]["<stdin>"]["AP"]["mean"] == pytest.approx(11 / 12)


def test_warnings_go_to_stderr_and_keep_exit_0(
    capsys: pytest.CaptureFixture[str], inputs: dict[str, Path]
) -> None:
    path = BAD / "run-multiple-tags.run"
    argv = ["evaluate", "--qrels", str(inputs["qrels"]), "--run", str(path), "-m", "P@2"]
    code, out, err = run_cli(capsys, *argv)
    assert code == 0
    assert re.search(rf"^{re.escape(str(path))}: warning: .+ \[multiple-tags\]$", err, re.MULTILINE)
    assert [w["code"] for w in json.loads(out)["meta"]["warnings"]].count("multiple-tags") == 1
    code, out, err = run_cli(capsys, *argv, "-q")
    assert code == 0 and "multiple-tags" not in err


# ----------------------------------------------------------------------------------------- other commands


def test_measures_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "measures", "--format", "json")
    assert code == 0
    entries = json.loads(out)["measures"]
    names = {e["name"] for e in entries}
    assert {"AP", "P", "nDCG", "RR"} <= names
    assert all({"name", "summary", "parameters", "reference"} <= set(e) for e in entries)


def test_measures_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "measures", "AP")
    assert code == 0
    assert out.startswith("AP")


def test_demo(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "demo")
    assert code == 0, err
    assert "bm25.run" in out and "neural.run" in out
    assert "Traceback" not in err


def test_demo_files_writes_the_walkthroughs_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "demo", "--files", str(tmp_path / "try"))
    assert code == 0 and out == "", err
    assert sorted(p.name for p in (tmp_path / "try").iterdir()) == ["bm25.run", "dense.run.gz", "qrels.txt"]
    assert run_cli(capsys, "evaluate", "--qrels", str(tmp_path / "try" / "qrels.txt"), "--run",
                   str(tmp_path / "try" / "dense.run.gz"), "-m", "AP")[0] == 0
