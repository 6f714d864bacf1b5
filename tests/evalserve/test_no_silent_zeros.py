"""No silent zeros: a run with no judged topic fails (exit 1, ``no-topics-scored``, every such run named), and a
run missing judged topics is warned about -- which topics, how many, what ``--topics complete`` would do -- with
the numbers themselves unchanged. Real data: trec_eval's test files and the TREC Web 2012 runs (50 topics)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from evalserve.cli.main import main

WEB_QRELS = ("trec-web-2009-2014", "2012", "qrels.adhoc.txt")
WEB_RUN = ("trec-web-2012-runs", "runs", "ql-results-cata-filtered.txt")


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def keep_topics(source: Path, target: Path, keep: Callable[[str], bool]) -> Path:
    """A copy of a run with only the lines of the topics ``keep`` accepts."""
    lines = source.read_text().splitlines(keepends=True)
    target.write_text("".join(line for line in lines if keep(line.split()[0])))
    return target


def test_a_run_whose_topics_are_not_judged_exits_1_naming_every_such_run(
    tmp_path: Path, shared_file: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = shared_file("trec_eval-test", "qrels.test")
    results = shared_file("trec_eval-test", "results.test")
    lines = results.read_text().splitlines(keepends=True)
    (tmp_path / "renamed.run").write_text("".join("q" + line for line in lines))  # 301 -> q301: nothing judged
    (tmp_path / "other.run").write_text("".join("9" + line for line in lines))
    code, out, err = run_cli(capsys, "evaluate", "--qrels", str(qrels), "--run", str(results),
                             "--run", str(tmp_path / "renamed.run"), "--run", str(tmp_path / "other.run"),
                             "-m", "P@10", "--format", "trec_eval")
    assert code == 1
    assert out == ""  # no 0.0000 for anyone
    errors = [line for line in err.splitlines() if "[no-topics-scored]" in line]
    assert [line.split(":")[0] for line in errors] == ["renamed.run", "other.run"]
    assert "q301, q302, q303" in errors[0] and "301, 302, 303" in errors[0] and "do not overlap" in errors[0]
    assert "results.test" not in err


def test_no_overlap_is_refused_under_topics_complete_too(
    tmp_path: Path, shared_file: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = shared_file("trec_eval-test", "qrels.test")
    run = tmp_path / "x.run"
    run.write_text("".join("q" + line for line in shared_file("trec_eval-test", "results.test").open()))
    code, out, err = run_cli(capsys, "evaluate", "--qrels", str(qrels), "--run", str(run), "--topics", "complete")
    assert (code, out) == (1, "")
    assert "x.run: error: no topic of run x.run is judged" in err


def test_judged_topics_missing_from_a_run_are_warned_about_and_the_numbers_do_not_change(
    tmp_path: Path, shared_file: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = shared_file(*WEB_QRELS)
    full = shared_file(*WEB_RUN)
    short = keep_topics(full, tmp_path / "short.run", lambda t: int(t) > 190)  # 40 of the 50 topics removed
    code, out, err = run_cli(capsys, "evaluate", "--qrels", str(qrels), "--run", str(full), "--run", str(short),
                             "-m", "AP", "nDCG@20", "P@10", "--per-topic")
    assert code == 0
    doc = json.loads(out)
    [warning] = [w for w in doc["meta"]["warnings"] if w["code"] == "topic-not-in-run"]
    assert warning["source"] == "short.run" and warning["severity"] == "warning"
    message = warning["message"]
    assert message.startswith("40 of 50 judged topic(s) are missing from the run")
    assert "average over the 10 topic(s) it has: 151, 152, 153, 154, 155, 156, 157, 158, 159, 160 ..." in message
    assert "--topics complete would score them 0 and average over all 50 judged topics" in message
    assert f"short.run: warning: {message} [topic-not-in-run]" in err.splitlines()
    # the full run draws no such warning, and the short one's values are the full one's on its topics, exactly
    full_scores, short_scores = doc["runs"][full.name], doc["runs"]["short.run"]
    for measure, item in short_scores.items():
        expected = {t: v for t, v in full_scores[measure]["per_topic"].items() if int(t) > 190}
        assert item["per_topic"] == expected
        assert item["mean"] == pytest.approx(sum(expected.values()) / 10, abs=1e-15)


def test_under_topics_complete_the_warning_says_they_score_0(
    tmp_path: Path, shared_file: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = shared_file("trec_eval-test", "qrels.test")
    short = keep_topics(shared_file("trec_eval-test", "results.test"), tmp_path / "short.run", lambda t: t != "302")
    code, out, err = run_cli(capsys, "evaluate", "--qrels", str(qrels), "--run", str(short), "-m", "AP",
                             "--topics", "complete", "--per-topic")
    assert code == 0
    assert "short.run: warning: 1 of 3 judged topic(s) are missing from the run and score 0: 302" in err
    assert json.loads(out)["runs"]["short.run"]["AP"]["per_topic"]["302"] == 0.0
    code, out, err = run_cli(capsys, "evaluate", "--qrels", str(qrels), "--run", str(short), "-m", "AP", "-q")
    assert (code, err) == (0, "")  # -q silences warnings, as before
    assert "left out of its means" in json.loads(out)["meta"]["warnings"][0]["message"]
