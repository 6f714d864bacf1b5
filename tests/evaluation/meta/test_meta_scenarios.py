"""The simulated scenarios of spec 8.2: seeded perturbations of judgments, intent weights and runs that the
evaluator scores as usual, and the ``scenarios`` meta-evaluation method (MU on each)."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.evaluator import evaluate
from evaluation.formats import read_qrels, read_run
from evaluation.formats.source import Blob
from evaluation.meta import (
    SCENARIOS,
    ScoreTable,
    metric_unanimity,
    random_grades,
    random_intent_weights,
    score_scenario,
    simulate,
    truncate_runs,
)
from evaluation.meta.methods import run_method
from evaluation.meta.scenarios import scenario_rng, scenario_table
from evaluation.model import Qrels, Run
from evaluation.ranking import rank_run
from evaluation.sources import Sources

MEASURES = ["AP", "nDCG@10", "alpha_nDCG@10", "nDCG_IA@10", "S_Recall@10"]


def qrels() -> Qrels:
    lines = []
    for t in range(1, 4):
        for i in range(1, 4):
            for d in range(1, 9):
                if (t + i + d) % 3 != 0:
                    lines.append(f"q{t} {i} d{d} {(t * i + d) % 4}")
    return read_qrels(Blob.from_bytes("\n".join(lines).encode() + b"\n", name="qrels"))


def run(name: str, seed: int, length: int = 8) -> Run:
    rng = np.random.default_rng(seed)
    lines = [
        f"q{t} Q0 d{d} {r + 1} {s:.6f} {name}"
        for t in range(1, 4)
        for r, (d, s) in enumerate(zip(rng.permutation(np.arange(1, length + 1)), np.sort(rng.random(length))[::-1]))
    ]
    return read_run(Blob.from_bytes("\n".join(lines).encode() + b"\n", name=name))


def test_random_grades() -> None:
    q = qrels()
    drawn = random_grades(q, np.random.default_rng(1))
    positive = q.grade > 0
    assert ((drawn.grades[positive] > 0) & (drawn.grades[positive] <= q.grade[positive])).all()
    np.testing.assert_array_equal(drawn.grades[~positive], q.grade[~positive])
    coded = drawn.qrels.grade
    assert ((coded[positive] >= 1) & (coded[positive] <= q.grade[positive])).all()  # binary relevance kept
    np.testing.assert_array_equal(coded[~positive], q.grade[~positive])
    np.testing.assert_array_equal(coded, np.ceil(drawn.grades).astype(np.int64))
    again = random_grades(q, np.random.default_rng(1))
    np.testing.assert_array_equal(again.grades, drawn.grades)
    fine = random_grades(q, np.random.default_rng(1), resolution=100)
    np.testing.assert_array_equal(fine.grades, drawn.grades)
    assert (fine.qrels.grade[positive] <= 100 * q.grade[positive]).all()
    assert q.grade is not drawn.qrels.grade and (q.grade == qrels().grade).all()  # the input is not changed


def test_random_intent_weights() -> None:
    q = qrels()
    weights = random_intent_weights(q, np.random.default_rng(2))
    assert set(weights.weights) == set(q.topics)
    for per_topic in weights.weights.values():
        assert set(per_topic) == {"1", "2", "3"}
        assert sum(per_topic.values()) == pytest.approx(1.0)
        assert all(v > 0 for v in per_topic.values())
    assert random_intent_weights(q, np.random.default_rng(2)).weights == weights.weights


def test_truncation_keeps_a_prefix_of_each_ranking() -> None:
    runs = [run("a", 1, 30), run("b", 2, 30)]
    cut = truncate_runs(runs, np.random.default_rng(3))
    for before, after in zip(runs, cut):
        assert after.topics == before.topics
        full, short = rank_run(before), rank_run(after)
        for t in range(len(before.topics)):
            a = before.docno[full.order[full.offsets[t] : full.offsets[t + 1]]].tolist()
            b = after.docno[short.order[short.offsets[t] : short.offsets[t + 1]]].tolist()
            assert b == a[: len(b)]


def test_truncation_lengths_are_uniform_and_capped() -> None:
    many = [run(f"r{i}", i, 60) for i in range(40)]
    rng = np.random.default_rng(4)
    lengths = np.concatenate([np.bincount(r.topic, minlength=3) for r in truncate_runs(many, rng)])
    assert lengths.min() >= 0 and lengths.max() <= 60
    assert 0.35 < lengths.mean() / 60 < 0.65
    short = np.concatenate([np.bincount(r.topic, minlength=3) for r in truncate_runs(many, rng, max_length=50)])
    assert short.max() <= 50
    tiny = truncate_runs([run("t", 9, 3)], np.random.default_rng(5), max_length=50)[0]
    assert np.bincount(tiny.topic, minlength=3).max() <= 3  # capped at |d|


def test_an_empty_ranking_scores_zero() -> None:
    q = qrels()
    r = run("a", 1)
    cut = truncate_runs([r], np.random.default_rng(0), max_length=0)[0]
    assert len(cut) == 0 and cut.topics == r.topics
    result = evaluate(q, [cut], MEASURES)[0]
    assert result.topics == q.topics
    for m in result.values:
        assert (result.values[m] == 0).all()


def test_simulate_every_scenario() -> None:
    q = qrels()
    runs = [run(n, i) for i, n in enumerate("abcd")]
    for name in SCENARIOS:
        inputs = simulate(name, q, runs, np.random.default_rng(7))
        assert (inputs.grades is None) == (name == "aspect_weights")
        assert (inputs.intent_weights is None) == (name == "graded_relevance")
        kept = sum(len(r) for r in inputs.runs)
        if name == "random_truncation":
            assert kept < sum(len(r) for r in runs)
        else:  # the short-list cap of 50 leaves these 8-document rankings whole
            assert kept == sum(len(r) for r in runs)
        table = score_scenario(inputs, MEASURES)
        assert isinstance(table, ScoreTable) and table.values.shape == (len(MEASURES), 4, 3)
        assert np.isfinite(table.values).all()
        mu = metric_unanimity(table).mu
        assert mu.shape == (len(MEASURES),)
        again = score_scenario(simulate(name, q, runs, np.random.default_rng(7)), MEASURES)
        np.testing.assert_array_equal(again.values, table.values)
    with pytest.raises(ValueError):
        simulate("nope", q, runs, np.random.default_rng(0))


def test_weights_change_intent_aware_scores_only() -> None:
    q = qrels()
    runs = [run("a", 1)]
    base = score_scenario(simulate("aspect_weights", q, runs, np.random.default_rng(0)), ["AP", "nDCG_IA@10"])
    plain = ScoreTable.from_run_scores(evaluate(q, runs, ["AP", "nDCG_IA@10"]))
    np.testing.assert_array_equal(base.values[0], plain.values[0])
    assert not np.array_equal(base.values[1], plain.values[1])


def test_scenario_table_draws_from_its_own_generator() -> None:
    """One generator per (seed, scenario): a scenario's scores do not depend on the others run with it."""
    sources = Sources(qrels(), tuple(run(n, i, 30) for i, n in enumerate("abcd")))
    for k, name in enumerate(SCENARIOS):
        table = scenario_table(sources, MEASURES, name, 3)
        by_hand = score_scenario(simulate(name, sources.qrels, sources.runs, np.random.default_rng([3, k])), MEASURES)
        np.testing.assert_array_equal(table.values, by_hand.values)
    with pytest.raises(ValueError):
        scenario_rng(0, "nope")


def test_the_scenarios_method_document() -> None:
    sources = Sources(qrels(), tuple(run(n, i, 30) for i, n in enumerate("abcd")))
    table = ScoreTable.from_run_scores(sources.evaluate(MEASURES))
    doc = run_method("scenarios", table, {"scenarios": ["short_lists", "graded_relevance"], "seed": 4},
                     sources=sources)
    assert doc["meta"] == {"method": "scenarios", "measures": MEASURES, "runs": 4, "topics": 3}
    assert doc["simulated"] == ["short_lists", "graded_relevance"] and doc["seed"] == 4 and doc["strict"] is False
    official = run_method("unanimity", table)["unanimity"]
    for name in ("short_lists", "graded_relevance"):
        mu = metric_unanimity(scenario_table(sources, MEASURES, name, 4)).as_dict()
        for m in MEASURES:
            assert doc["scenarios"][m]["official"] == official[m]
            assert doc["scenarios"][m][name] == pytest.approx(mu[m], abs=0)
    assert doc["pairs"] == {"official": 4 * 3 * 3, "short_lists": 36, "graded_relevance": 36}
    every = run_method("scenarios", table, {"seed": 4}, sources=sources)
    assert every["simulated"] == list(SCENARIOS)
    assert every["scenarios"]["AP"]["short_lists"] == doc["scenarios"]["AP"]["short_lists"]
    narrow = run_method("scenarios", table, {"against": ["AP", "nDCG@10"], "strict": True}, sources=sources)
    assert narrow["against"] == ["AP", "nDCG@10"] and narrow["strict"] is True
    with pytest.raises(ValueError, match="evaluates perturbed judgments and runs"):
        run_method("scenarios", table)
