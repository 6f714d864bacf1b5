"""The offline Python API (``evaluation.api``): ``evaluate`` returns the CLI's JSON document, ``iter_calc`` its
per-topic values one record at a time, ``to_dataframe`` either as a pandas frame; inputs may be paths, bytes or
parsed objects; problems raise as the CLI reports them; ``import evaluation`` loads neither scipy nor pandas.
The README's "From Python" block is run as it is written."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from evalserve.cli.main import main
from evaluation import (
    InputError,
    MeasureError,
    NothingScored,
    TopicValue,
    evaluate,
    iter_calc,
    read_qrels,
    read_run,
    to_dataframe,
)

ROOT = Path(__file__).resolve().parents[2]
MEASURES = ["AP", "P@10", "nDCG@10", "RR", "Rprec", "Bpref"]


@pytest.fixture
def trec(shared_file: Callable[..., Path]) -> tuple[Path, Path]:
    return shared_file("trec_eval-test", "qrels.test"), shared_file("trec_eval-test", "results.test")


def cli_document(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main(["evaluate", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


@pytest.mark.parametrize("per_topic", [False, True])
def test_evaluate_returns_the_cli_document(trec: tuple[Path, Path], tmp_path: Path, per_topic: bool,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    qrels, results = trec
    second = tmp_path / "second.run.gz"
    second.write_bytes(gzip.compress(b"".join(line for line in results.open("rb") if not line.startswith(b"302"))))
    flags = ["--per-topic"] if per_topic else []
    expected = cli_document(capsys, "--qrels", str(qrels), "--run", str(results), "--run", str(second),
                            "-m", *MEASURES, *flags)
    got = evaluate(qrels, [str(results), second], MEASURES, per_topic=per_topic)
    assert got == expected
    assert got["meta"]["warnings"][0]["code"] == "topic-not-in-run"  # second.run lacks topic 302


def test_iter_calc_yields_every_per_topic_value_of_the_document(trec: tuple[Path, Path]) -> None:
    qrels, results = trec
    doc = evaluate(qrels, [results], ["AP", "ndcg_cut_10"], per_topic=True)
    records = iter_calc(qrels, [results], ["AP", "ndcg_cut_10"])
    first = next(records)
    assert isinstance(first, TopicValue)
    rows = [first, *records]
    measures = list(doc["runs"]["results.test"])
    assert [(r.topic, r.measure) for r in rows] == [(t, m) for t in ("301", "302", "303") for m in measures]
    assert all(r.run == "results.test" for r in rows)
    assert {(r.measure, r.topic): r.value for r in rows} == {
        (m, t): v for m, item in doc["runs"]["results.test"].items() for t, v in item["per_topic"].items()}


def test_inputs_may_be_bytes_or_parsed_objects_and_a_mapping_names_runs(trec: tuple[Path, Path]) -> None:
    qrels, results = trec
    by_path = evaluate(qrels, [results], ["AP"], per_topic=True)["runs"]["results.test"]
    runs = {"raw": results.read_bytes(), "zipped": gzip.compress(results.read_bytes()), "parsed": read_run(results)}
    doc = evaluate(read_qrels(qrels), runs, ["AP"], per_topic=True)
    assert list(doc["runs"]) == ["raw", "zipped", "parsed"]
    assert all(scores == by_path for scores in doc["runs"].values())
    assert set(doc["meta"]["inputs"]) == {"raw", "zipped"}  # hashes of what was read; parsed objects have none
    unnamed = evaluate(qrels.read_bytes(), [results.read_bytes(), read_run(results)], ["AP"])
    assert list(unnamed["runs"]) == ["<run 1>", "results.test"]


def test_problems_raise_together_before_any_value(trec: tuple[Path, Path], tmp_path: Path) -> None:
    qrels, results = trec
    bad = tmp_path / "bad.run"
    bad.write_text("301 Q0 d1 1 abc t\n")
    with pytest.raises(InputError) as caught:
        iter_calc(qrels, [bad, tmp_path / "missing.run", results], ["AP"])  # fails at the call, not on next()
    assert [p.code for p in caught.value.problems] == ["score-not-numeric", "file-not-found"]
    with pytest.raises(MeasureError):
        evaluate(qrels, [results], ["nDGC@10"])
    with pytest.raises(NothingScored) as nothing:
        evaluate(qrels, {"renamed": b"q301 Q0 d1 1 1.0 t\n"}, ["AP"])
    assert [(p.code, p.source) for p in nothing.value.problems] == [("no-topics-scored", "renamed")]


def test_to_dataframe_is_long_format(trec: tuple[Path, Path]) -> None:
    pytest.importorskip("pandas")
    qrels, results = trec
    doc = evaluate(qrels, [results], ["AP", "P@10"], per_topic=True)
    frame = to_dataframe(doc)
    assert list(frame.columns) == ["run", "measure", "topic", "value"]
    assert list(frame["topic"][:4]) == ["301", "302", "303", "all"]
    assert frame.set_index(["measure", "topic"])["value"][("AP", "all")] == doc["runs"]["results.test"]["AP"]["mean"]
    assert len(to_dataframe(evaluate(qrels, [results], ["AP"]))) == 1  # means only
    records = to_dataframe(iter_calc(qrels, [results], ["AP", "P@10"]))
    assert len(records) == 6 and set(records["topic"]) == {"301", "302", "303"}


def test_to_dataframe_without_pandas_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(ImportError, match=r"to_dataframe needs pandas.*pip install pandas"):
        to_dataframe({"runs": {}})


def python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_importing_the_engine_loads_neither_scipy_nor_pandas() -> None:
    done = python("import sys, evaluation; from evaluation import evaluate, iter_calc, to_dataframe\n"
                  "print(sorted(m for m in ('scipy', 'pandas') if m in sys.modules))")
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr


def readme_python_block() -> str:
    """The ```python block of the README's "From Python" section."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### From Python"):]
    start = section.index("```python\n") + len("```python\n")
    return section[start:section.index("```\n", start)]


def test_the_readme_python_example_runs_as_written() -> None:
    pytest.importorskip("pandas")
    done = python(readme_python_block())
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "0.5916143292841622 0.9034132608257275"  # bm25 AP mean, neural nDCG@10 on topic 401
    assert lines[1] == "[]" and lines[2] == "bm25.run 401 AP 0.5541"
    assert lines[-1].startswith("all ")
