"""Properties of the preference measures (spec 6, 9): the greedy ideal scores nPrf = 1, F=min never exceeds
F=avg, utilities do not depend on the order of judgments, unjudged documents add nothing and condition nothing,
pooled estimates are not averages of per-profile ones, and the stopping models' edge cases."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.evaluator import Evaluator
from evaluation.formats import Blob, parse_qrels, parse_run
from evaluation.measures.registry import parse_measure
from evaluation.model import Qrels, Run
from evaluation.preference import (
    PreferenceJudgments,
    UtilityTable,
    estimate_utilities,
    evaluate_profiles,
    greedy_ideal,
    nprf,
    prf,
    rank_utilities,
)
from evaluation.problems import MeasureError
from evaluation.side_inputs import SideInputs

STOPS = ["rbp", "dcg", "rr", "uniform", "none"]


def random_judgments(seed: int, topics: int = 3, users: int = 3, n: int = 300) -> PreferenceJudgments:
    rng = np.random.default_rng(seed)
    records: list[tuple[str, str, str | None, str, str, str]] = []
    for t in range(topics):
        docs = [f"d{i:02d}" for i in range(int(rng.integers(4, 12)))]
        for _ in range(n):
            a, b, x = rng.choice(len(docs), 3, replace=False)
            top = docs[x] if rng.random() < 0.6 else None
            winner = docs[a] if rng.random() < 0.5 + 0.04 * (b - a) else docs[b]
            records.append((f"t{t}", f"u{int(rng.integers(users))}", top, docs[a], docs[b], winner))
    return PreferenceJudgments.from_records(records)


def _qrels(topics: list[str]) -> Qrels:
    return parse_qrels(Blob.from_bytes("".join(f"{t} 0 d00 1\n" for t in topics).encode(), "q")).unwrap()


def _run(rankings: dict[str, list[str]]) -> Run:
    text = "".join(f"{t} Q0 {d} {i + 1} {100 - i} r\n" for t, docs in rankings.items() for i, d in enumerate(docs))
    return parse_run(Blob.from_bytes(text.encode(), "run")).unwrap()


def _ideal_rankings(table: UtilityTable, aggregate: str) -> dict[str, list[str]]:
    ideal = greedy_ideal(table, aggregate)
    return {t: ideal.documents(table, t) for t in table.topics}


@pytest.mark.parametrize("seed", range(6))
def test_the_greedy_ideal_scores_one(seed: int) -> None:
    table = estimate_utilities(random_judgments(seed))
    for aggregate in ("avg", "min"):
        rankings = _ideal_rankings(table, aggregate)
        for stop in STOPS:
            for cutoff in (None, 1, 3, 5) if stop != "uniform" else (1, 3, 5):
                got = nprf(table, rankings, stop=stop, F=aggregate, cutoff=cutoff)
                assert all(v == 1.0 for v in got.values()), (stop, aggregate, cutoff, got)


@pytest.mark.parametrize("seed", range(6))
def test_min_never_exceeds_avg_and_values_are_non_negative(seed: int) -> None:
    table = estimate_utilities(random_judgments(seed))
    rng = np.random.default_rng(seed)
    for t, topic in enumerate(table.topics):
        docs = [*table.documents(topic), "unjudged1", "unjudged2"]
        order = [docs[i] for i in rng.permutation(len(docs))]
        local = table.locate(t, np.array([d.encode() for d in order]))
        offsets = np.array([0, len(order)])
        avg = rank_utilities(table, np.array([t]), offsets, local, "avg")
        low = rank_utilities(table, np.array([t]), offsets, local, "min")
        assert (low <= avg).all() and (low >= 0).all() and (avg <= 1).all()
        for stop in STOPS:
            assert prf(table, {topic: order}, stop=stop, cutoff=7)[topic] >= 0
            assert nprf(table, {topic: order}, stop=stop, cutoff=7)[topic] >= 0


def test_utilities_do_not_depend_on_the_order_of_judgments() -> None:
    judgments = random_judgments(3)
    shuffled = judgments.take(np.random.default_rng(0).permutation(len(judgments)))
    a, b = estimate_utilities(judgments), estimate_utilities(shuffled)
    assert np.array_equal(a.unconditional, b.unconditional)
    assert np.array_equal(a.conditional, b.conditional, equal_nan=True)


def test_unjudged_documents_add_nothing_and_condition_nothing() -> None:
    table = estimate_utilities(random_judgments(4))
    topic = table.topics[0]
    docs = table.documents(topic)[:4]
    with_gap = [docs[0], "nowhere", docs[1], docs[2], docs[3]]
    local = table.locate(0, np.array([d.encode() for d in with_gap]))
    for aggregate in ("avg", "min"):
        gap = rank_utilities(table, np.array([0]), np.array([0, 5]), local, aggregate)
        plain = rank_utilities(table, np.array([0]), np.array([0, 4]), np.delete(local, 1), aggregate)
        assert gap[1] == 0.0 and np.array_equal(np.delete(gap, 1), plain)


def test_pooled_estimates_are_not_averages_of_profiles() -> None:
    # user A: a beats b twice; user B: b beats a once. Pooled U(a) = 2/3; the mean of the profiles' U(a) is 1/2.
    records = [("1", "A", None, "a", "b", "a"), ("1", "A", None, "a", "b", "a"), ("1", "B", None, "a", "b", "b")]
    judgments = PreferenceJudgments.from_records(records)
    assert estimate_utilities(judgments).utility("1", "a") == pytest.approx(2 / 3)
    assert estimate_utilities(judgments, profile=1).utility("1", "a") == 1.0
    assert estimate_utilities(judgments, profile=2).utility("1", "a") == 0.0
    assert estimate_utilities(judgments, users=["B"]).utility("1", "b") == 1.0
    scores = evaluate_profiles(judgments, {"1": ["a", "b"]}, normalised=False, stop="none")
    assert scores.pooled["1"] == pytest.approx(2 / 3 + 1 / 3)
    assert [p["1"] for p in scores.profiles] == [1.0, 1.0]  # each profile's own ideal order is (a, b) or (b, a)
    assert scores.profile_means() == [1.0, 1.0]


def test_pooled_equals_the_merged_judgments() -> None:
    judgments = random_judgments(8)
    parts = [judgments.take(judgments.user_rank() == i) for i in (1, 2, 3)]
    merged = PreferenceJudgments.merge(parts)
    a, b = estimate_utilities(judgments), estimate_utilities(merged)
    assert np.array_equal(a.docnos, b.docnos)
    assert np.array_equal(a.unconditional, b.unconditional)
    assert np.array_equal(a.conditional, b.conditional, equal_nan=True)


def test_min_app() -> None:
    records = [("1", "u", None, "a", "b", "a"), ("1", "u", None, "a", "c", "a"), ("1", "u", "c", "a", "b", "a"),
               ("1", "u", "c", "a", "b", "b")]
    judgments = PreferenceJudgments.from_records(records)
    two = estimate_utilities(judgments, min_app=2)
    assert two.utility("1", "a") == 1.0 and two.utility("1", "b") == 0.0  # b appeared once: no estimate
    assert two.conditional_utility("1", "a", "c") == 0.5 and two.conditional_utility("1", "b", "c") == 0.5
    three = estimate_utilities(judgments, min_app=3)
    assert three.utility("1", "a") == 0.0 and three.conditional_utility("1", "a", "c") is None
    assert greedy_ideal(three).documents(three, "1") == []  # nothing has an estimate


def test_stopping_edge_cases(tv1: UtilityTable) -> None:
    run = {"1": ["p", "q", "r", "s"]}
    u = [5 / 6, 0.25, 0.75, 0.25]
    assert prf(tv1, run, stop="none", cutoff=3)["1"] == pytest.approx(sum(u[:3]))
    assert prf(tv1, run, stop="none")["1"] == pytest.approx(sum(u))
    # uniform at K = 6 on 4 documents: P(k) = 1/6 for k <= 4 only, so rank i weighs (4 - i + 1)/6
    assert prf(tv1, run, stop="uniform", cutoff=6)["1"] == pytest.approx(sum(x * (4 - i) / 6 for i, x in
                                                                              enumerate(u)))
    assert prf(tv1, run, stop="rbp", theta=1.0)["1"] == pytest.approx(5 / 6)
    # a ranking shorter than K: the stopping mass beyond its end does not count (spec Appendix D)
    short = {"1": ["p", "q"]}
    assert prf(tv1, short, cutoff=10)["1"] == pytest.approx(u[0] * (1 - 0.8**2) + u[1] * (0.8 - 0.8**2))
    assert prf(tv1, {"1": []}, cutoff=10)["1"] == 0.0 and nprf(tv1, {"2": ["p"]})["2"] == 0.0
    with pytest.raises(MeasureError, match="needs a cutoff"):
        parse_measure("nPrf(stop=uniform)")
    with pytest.raises(ValueError, match="needs a cutoff"):
        prf(tv1, run, stop="uniform")


@pytest.mark.parametrize("seed", range(4))
def test_the_measures_equal_the_library(seed: int) -> None:
    judgments = random_judgments(seed, topics=4)
    rng = np.random.default_rng(seed)
    table = estimate_utilities(judgments)
    rankings = {}
    for topic in table.topics[:3]:  # the fourth topic has judgments but is not in the run
        docs = [*table.documents(topic), *(f"x{i}" for i in range(3))]
        rankings[topic] = [docs[i] for i in rng.permutation(len(docs))]
    run = _run(rankings)
    names = ["Prf", "nPrf", "nPrf(stop=rr,F=min)@5", "Prf(stop=dcg)@3", "nPrf(stop=uniform)@8",
             "nPrf(stop=none)@4", "nPrf(theta=0.5,profile=2)@6", "Prf(min_app=3)@10"]
    side = SideInputs({"preference_judgments": judgments})
    scores = Evaluator.from_names(_qrels(list(judgments.topics)), names, side=side, topics="complete").evaluate(run)
    for name in names:
        measure = parse_measure(name)
        p = measure.params
        chosen = estimate_utilities(judgments, profile=p["profile"], min_app=p["min_app"])
        score = nprf if name.startswith("n") else prf
        expected = score(chosen, rankings, stop=p["stop"], theta=p["theta"], F=p["F"], cutoff=measure.cutoff)
        got = scores.per_topic(measure.name)
        assert got[table.topics[3]] == 0.0  # missing from the run: empty ranking (topics=complete)
        for topic in rankings:
            assert got[topic] == pytest.approx(expected[topic], abs=1e-12), (name, topic)


def test_missing_inputs_are_named() -> None:
    qrels, run = _qrels(["1"]), _run({"1": ["d00"]})
    with pytest.raises(MeasureError, match=r"--preference-judgments FILE.*--user-profiles FILE.*profile=trec"):
        Evaluator.from_names(qrels, ["nPrf@5"]).evaluate(run)
    got = Evaluator.from_names(qrels, ["nPrf(profile=trec)@5"]).evaluate(run)  # one document: U = 0 -> 0
    assert got.values["nPrf(profile=trec)@5"].tolist() == [0.0]
