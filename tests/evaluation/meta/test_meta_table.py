"""ScoreTable: built from evaluator results and from the results JSON document (spec 8, common input)."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.evaluator import RunScores, evaluate
from evaluation.formats import read_qrels, read_run
from evaluation.formats.source import Blob
from evaluation.meta import ScoreTable
from evaluation.problems import InputError, RequestError
from evaluation.report import Report

QRELS = "q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 1\nq3 0 d4 1\n"
RUN_A = "q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\nq2 Q0 d3 1 1 a\nq3 Q0 d9 1 1 a\n"
RUN_B = "q1 Q0 d2 1 3 b\nq2 Q0 d9 1 1 b\nq3 Q0 d4 1 1 b\n"


def scores() -> list[RunScores]:
    qrels = read_qrels(Blob.from_bytes(QRELS.encode(), name="qrels"))
    runs = [read_run(Blob.from_bytes(text.encode(), name=n)) for n, text in (("a", RUN_A), ("b", RUN_B))]
    return evaluate(qrels, runs, ["AP", "P@1"])


def test_from_run_scores_keeps_orders_and_values() -> None:
    table = ScoreTable.from_run_scores(scores())
    assert table.measures == ("AP", "P@1")
    assert table.runs == ("a", "b")
    assert table.topics == ("q1", "q2", "q3")
    assert table.values.shape == (2, 2, 3)
    assert table.values[0, 0].tolist() == pytest.approx([1.0, 1.0, 0.0])
    assert table.values[1, 1].tolist() == [1.0, 0.0, 1.0]
    assert table.means()[0].tolist() == pytest.approx([2 / 3, (0.5 + 0 + 1) / 3])
    assert not table.values.flags.writeable


def test_topics_are_the_intersection_in_first_run_order() -> None:
    a = RunScores("a", ("q3", "q1", "q2"), {"m": np.array([3.0, 1.0, 2.0])})
    b = RunScores("b", ("q1", "q2", "q4"), {"m": np.array([10.0, 20.0, 40.0])})
    table = ScoreTable.from_run_scores([a, b])
    assert table.topics == ("q1", "q2")
    assert table.values[0].tolist() == [[1.0, 2.0], [10.0, 20.0]]
    with pytest.raises(InputError) as raised:
        ScoreTable.from_run_scores([a, b], topics="strict")
    assert raised.value.problems[0].code == "topics-differ"


def test_measure_missing_from_a_run() -> None:
    a = RunScores("a", ("q1",), {"m": np.array([1.0])})
    b = RunScores("b", ("q1",), {"n": np.array([1.0])})
    with pytest.raises(InputError) as raised:
        ScoreTable.from_run_scores([a, b])
    assert raised.value.problems[0].code == "measure-missing"


def test_from_document_round_trip() -> None:
    results = scores()
    doc = Report(results, ["AP", "P@1"], "trec", "common").as_json(per_topic=True)
    table = ScoreTable.from_document(doc)
    direct = ScoreTable.from_run_scores(results)
    assert (table.measures, table.runs, table.topics) == (direct.measures, direct.runs, direct.topics)
    np.testing.assert_array_equal(table.values, direct.values)
    assert ScoreTable.from_document(doc, ["P@1"]).measures == ("P@1",)


def test_from_document_without_per_topic_values() -> None:
    doc = Report(scores(), ["AP"], "trec", "common").as_json(per_topic=False)
    with pytest.raises(InputError) as raised:
        ScoreTable.from_document(doc)
    problem = raised.value.problems[0]
    assert problem.code == "per-topic-missing"
    assert "per-topic" in problem.message
    with pytest.raises(InputError):
        ScoreTable.from_document({"meta": {}, "runs": {}})


def test_select_and_checks() -> None:
    table = ScoreTable.from_run_scores(scores())
    sub = table.select(measures=["P@1"], runs=["b", "a"])
    assert sub.measures == ("P@1",) and sub.runs == ("b", "a")
    np.testing.assert_array_equal(sub.values[0], table.values[1, ::-1])
    np.testing.assert_array_equal(table.measure("P@1"), table.values[1])
    with pytest.raises(RequestError, match="unknown run"):  # a KeyError before typed engine errors
        table.select(runs=["zzz"])
    with pytest.raises(ValueError):
        ScoreTable(("m",), ("a",), ("q1",), np.zeros((1, 2, 1)))
    with pytest.raises(ValueError):
        ScoreTable(("m",), ("a", "a"), ("q1",), np.zeros((1, 2, 1)))
