"""trec_eval users feel at home (issue 14): trec_eval's spellings, results keyed by the name as requested,
every bad name in one pass, and ``--format trec_eval`` output byte-comparable with trec_eval's own ``-q`` output.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalserve.cli.main import main
from evaluation.evaluator import evaluate
from evaluation.formats import read_qrels, read_run
from evaluation.formats.source import Blob
from evaluation.measures.registry import default_registry, parse_measure
from evaluation.problems import MeasureError

QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n2 0 d1 2\n2 0 d4 1\n"
RUN = "1 Q0 d1 1 0.9 mytag\n1 Q0 d2 2 0.8 mytag\n1 Q0 d3 3 0.7 mytag\n2 Q0 d4 1 1.0 mytag\n2 Q0 d1 2 0.5 mytag\n"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "sys.run").write_text(RUN)
    return tmp_path / "q.txt", tmp_path / "sys.run"


@pytest.mark.parametrize(("spelling", "canonical"), [
    ("P.10", "P@10"), ("P_10", "P@10"), ("ndcg_cut.10", "nDCG@10"), ("success.1", "Success@1"),
    ("recall.1000", "R@1000"), ("map_cut.5", "AP@5"), ("map", "AP"), ("num_rel_ret", "NumRelRet"),
    ("set_recall", "SetR"), ("iprec_at_recall_0.10", "IPrec(recall=0.1,reach=rounded)"),
    ("iprec_at_recall.0.50", "IPrec(recall=0.5,reach=rounded)"), ("rbp", "RBP(p=0.9,rel=graded_topic)"),
    ("gm_map", "GMAP"), ("infAP", "infAP"), ("RBP(rel=2)", "RBP(rel=2)"),
])
def test_trec_eval_spellings(spelling: str, canonical: str) -> None:
    m = parse_measure(spelling)
    assert (m.name, m.label) == (canonical, spelling)


def test_a_trec_eval_list_names_one_measure_per_value() -> None:
    parsed = default_registry().parse_all(["ndcg_cut.10,20", "P.5,10"])
    assert [(m.label, m.name) for m in parsed] == [
        ("ndcg_cut.10", "nDCG@10"), ("ndcg_cut.20", "nDCG@20"), ("P.5", "P@5"), ("P.10", "P@10")]


def test_results_are_keyed_by_the_requested_name(capsys: pytest.CaptureFixture[str],
                                                 files: tuple[Path, Path]) -> None:
    qrels, run = files
    code, out, _ = cli(capsys, "evaluate", "--qrels", str(qrels), "--run", str(run),
                       "-m", "RBP(p=0.8)", "P.2", "ndcg_cut.1,2", "AP")
    assert code == 0
    doc = json.loads(out)
    assert list(doc["runs"]["sys.run"]) == ["RBP(p=0.8)", "P.2", "ndcg_cut.1", "ndcg_cut.2", "AP"]
    assert doc["meta"]["measures"] == {"RBP(p=0.8)": "RBP", "P.2": "P@2", "ndcg_cut.1": "nDCG@1",
                                       "ndcg_cut.2": "nDCG@2", "AP": "AP"}
    assert doc["meta"]["tags"] == {"sys.run": "mytag"}
    assert doc["runs"]["sys.run"]["P.2"]["mean"] == pytest.approx(0.75)  # topic 1: 1/2, topic 2: 2/2


def test_every_bad_measure_name_is_reported_in_one_pass(capsys: pytest.CaptureFixture[str],
                                                        files: tuple[Path, Path]) -> None:
    qrels, run = files
    code, out, err = cli(capsys, "evaluate", "--qrels", str(qrels), "--run", str(run), "-m", "nDGC@10", "P@1O")
    assert code == 2 and out == ""
    assert "'nDGC'" in err and "'P@1O'" in err, err


@pytest.mark.parametrize("name", ["ndcg_cut_10", "ndcg_cut.10", "P.10", "nDCG@10", "map", "iprec_at_recall_0.10"])
def test_measures_command_resolves_every_accepted_spelling(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, err = cli(capsys, "measures", name, "--format", "json")
    assert code == 0, err
    assert len(json.loads(out)["measures"]) == 1


def test_ir_measures_parameters_rel_threshold_and_judged_only() -> None:
    qrels = read_qrels(Blob.from_bytes(QRELS.encode(), name="q"))
    run = read_run(Blob.from_bytes(RUN.encode(), name="r"))
    scores = evaluate(qrels, [run], ["RBP(rel=2)", "RBP(p=0.8,rel=binary)"])[0]
    # topic 1: only d3 (rank 3) has grade >= 2; topic 2: d1 at rank 2
    assert scores.per_topic("RBP(rel=2)") == pytest.approx({"1": 0.2 * 0.8**2, "2": 0.2 * 0.8})
    with pytest.raises(MeasureError, match=r"judged_only.*Judged@k"):
        parse_measure("P(judged_only=True)@10")


def test_counts_are_summed_and_gm_map_is_a_geometric_mean() -> None:
    qrels = read_qrels(Blob.from_bytes(QRELS.encode(), name="q"))
    run = read_run(Blob.from_bytes(RUN.encode(), name="r"))
    scores = evaluate(qrels, [run], ["num_ret", "num_rel", "gm_map", "map"])[0]
    assert scores.mean("num_ret") == 5 and scores.mean("num_rel") == 4
    ap = scores.per_topic("map")
    assert scores.mean("gm_map") == pytest.approx((ap["1"] * ap["2"]) ** 0.5)


def test_trec_eval_format_equals_trec_eval_output(capsys: pytest.CaptureFixture[str], shared_file) -> None:
    """``-q`` output for map, P.10, ndcg_cut.10, num_rel_ret equals out.test.aq's lines for them, byte for byte
    (labels, order, run tag, 4 decimals, integer counts)."""
    qrels = shared_file("trec_eval-test", "qrels.test")
    run = shared_file("trec_eval-test", "results.test")
    golden = shared_file("trec_eval-test", "out.test.aq")
    code, out, _ = cli(capsys, "evaluate", "--qrels", str(qrels), "--run", str(run), "-m", "map", "-m", "P.10",
                       "-m", "ndcg_cut.10", "-m", "num_rel_ret", "-m", "runid", "-m", "num_q", "--per-topic",
                       "--format", "trec_eval")
    assert code == 0
    wanted = {"runid", "num_q", "map", "P_10", "ndcg_cut_10", "num_rel_ret"}
    expected = [line for line in golden.read_text().splitlines(keepends=True) if line.split()[0] in wanted]
    assert out == "".join(expected)


def test_trec_eval_format_counts_and_sets(capsys: pytest.CaptureFixture[str], shared_file) -> None:
    """The count, set, iprec, infAP and gm_map lines of out.test.aq (gm_map: the ``all`` line only)."""
    qrels = shared_file("trec_eval-test", "qrels.test")
    run = shared_file("trec_eval-test", "results.test")
    golden = shared_file("trec_eval-test", "out.test.aq")
    names = ["num_ret", "num_rel", "num_rel_ret", "gm_map", "set_P", "set_recall", "set_F", "infAP"]
    code, out, _ = cli(capsys, "evaluate", "--qrels", str(qrels), "--run", str(run), "-m", *names,
                       "--per-topic", "--format", "trec_eval")
    assert code == 0
    expected = [line for line in golden.read_text().splitlines(keepends=True)
                if line.split()[0] in names]  # explicit measures: no runid, num_q (as trec_eval -m ...)
    assert out == "".join(expected)


def test_bad_measures_and_bad_files_are_reported_together(capsys: pytest.CaptureFixture[str],
                                                          files: tuple[Path, Path], tmp_path: Path) -> None:
    qrels, _ = files
    bad_run = tmp_path / "bad.run"
    bad_run.write_text("1 Q0 d1 1 abc t\n")
    code, out, err = cli(capsys, "evaluate", "--qrels", str(qrels), "--run", str(bad_run), "-m", "nDGC@10", "P@1O")
    assert code == 2 and out == ""
    assert "[score-not-numeric]" in err
    assert err.count("[invalid-measure]") == 2, err
