"""Leaderboards of shared-task submissions: order, competition ranks, deltas and significance marks, on the four
real TREC Web 2012 runs (one results document per submission) and on generated score tables."""

from __future__ import annotations

import itertools
import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evaluation.formats.source import Blob
from evaluation.leaderboard import Entry, Leaderboard, SignificanceSettings, rank_entries
from evaluation.meta.significance import pairwise_tests
from evaluation.pipeline import load_inputs, run_evaluation
from evaluation.problems import InputError

MEASURES = ("nDCG@20", "ERR@20", "AP", "P@10")
RUN_FILES = (
    "ql-results-cata-filtered.txt",
    "ql-results-cata.txt.gz",
    "ql-results-catb-filtered.txt",
    "ql-results-catb.txt.gz",
)


def _blob(path: Path) -> Blob:
    return Blob.from_bytes(path.read_bytes(), path.name.removesuffix(".gz"))


@pytest.fixture(scope="module")
def web2012(shared_file: Callable[..., Path]) -> dict[str, Any]:
    """One results document (per-topic values) of the four real runs, evaluated as the service does."""
    qrels = _blob(shared_file("trec-web-2009-2014", "2012", "qrels.adhoc.txt"))
    runs = [_blob(shared_file("trec-web-2012-runs", "runs", name)) for name in RUN_FILES]
    report = run_evaluation(load_inputs(qrels, runs), MEASURES, topics="complete")
    document: dict[str, Any] = report.as_json(per_topic=True)
    return document


def split(document: dict[str, Any], baseline: str | None = None) -> list[Entry]:
    """One entry per run of a multi-run document; every entry's run is called "run" (names may collide)."""
    return [
        Entry(f"sub-{i}", name.removesuffix(".txt"), {"meta": document["meta"], "runs": {"run": by_measure}},
              baseline=name == baseline, extra={"file": name})
        for i, (name, by_measure) in enumerate(document["runs"].items())
    ]


def doc(values: dict[str, Sequence[float]], topics: Sequence[str] | None = None) -> dict[str, Any]:
    """A one-run results document from per-topic values per measure."""
    out: dict[str, Any] = {}
    for m, column in values.items():
        names = topics if topics is not None else [f"t{k}" for k in range(len(column))]
        out[m] = {"mean": float(np.mean(column)) if len(column) else 0.0,
                  "per_topic": {t: float(v) for t, v in zip(names, column)}}
    return {"runs": {"run": out}}


def matrix_in_rank_order(board: Leaderboard, entries: Sequence[Entry]) -> np.ndarray:
    by_key = {e.key: e for e in entries}
    return np.array([[by_key[r.key].document["runs"]["run"][board.primary]["per_topic"][t] for t in board.topics]
                     for r in board.rows])


# ---- real data -------------------------------------------------------------------------------------------------


def test_web2012_rows_follow_the_primary_means(web2012: dict[str, Any]) -> None:
    entries = split(web2012, baseline="ql-results-cata.txt")
    board = rank_entries(entries, MEASURES, "nDCG@20")
    means = {e.key: e.document["runs"]["run"]["nDCG@20"]["mean"] for e in entries}
    assert [r.key for r in board.rows] == sorted(means, key=lambda k: -means[k])
    assert [r.rank for r in board.rows] == [1, 2, 3, None]  # the baseline is shown, not ranked
    assert [r.label for r in board.rows] == [
        "ql-results-cata-filtered", "ql-results-catb-filtered", "ql-results-catb", "ql-results-cata"]
    assert len(board.topics) == 50 and all(r.n_topics == 50 for r in board.rows)
    best = board.rows[0].scores["nDCG@20"]
    base = next(r for r in board.rows if r.baseline).scores["nDCG@20"]
    for row in board.rows:
        assert list(row.scores) == list(MEASURES)
        for m in MEASURES:
            assert row.scores[m] == pytest.approx(web2012["runs"][row.extra["file"]][m]["mean"], rel=1e-12)
        assert row.delta_best == row.scores["nDCG@20"] - best
        assert row.delta_baseline == row.scores["nDCG@20"] - base
    assert board.rows[0].delta_best == 0.0
    assert board.rows[3].baseline and board.rows[3].delta_baseline == 0.0
    assert board.rows[0].extra == {"file": "ql-results-cata-filtered.txt"}


@pytest.mark.parametrize(
    ("test", "correction"),
    [("t", "holm"), ("t", None), ("t", "bh"), ("randomisation", "bonferroni"), ("bootstrap", "holm"), ("tukey", None)],
)
def test_web2012_marks_equal_pairwise_tests(web2012: dict[str, Any], test: str, correction: str | None) -> None:
    entries = split(web2012)
    settings_ = SignificanceSettings(test=test, correction=correction, alpha=0.05, resamples=2000, seed=7)
    board = rank_entries(entries, MEASURES, "AP", significance=settings_)
    keys = [r.key for r in board.rows]
    ref = pairwise_tests(matrix_in_rank_order(board, entries), keys, test=test, correction=correction, alpha=0.05,
                         resamples=2000, rng=np.random.default_rng(7))
    assert len(board.pairs) == 6
    better: dict[str, set[str]] = {k: set() for k in keys}
    for mark, (i, j), diff, p, q, sig in zip(board.pairs, ref.pairs.tolist(), ref.mean_difference, ref.p_value,
                                              ref.p_adjusted, ref.significant):
        assert (mark.a, mark.b) == (keys[i], keys[j])
        assert mark.mean_difference == pytest.approx(diff, rel=1e-12, abs=1e-15)
        assert (mark.p_value, mark.p_adjusted, mark.significant) == (p, q, bool(sig))
        if sig:
            better[keys[i] if diff > 0 else keys[j]].add(keys[j] if diff > 0 else keys[i])
    for row in board.rows:
        assert set(row.better_than) == better[row.key]
        assert list(row.better_than) == [k for k in keys if k in better[row.key]]
        assert set(row.worse_than) == {k for k in keys if row.key in better[k]}
    # stochastic tests are reproducible from the seed
    assert rank_entries(entries, MEASURES, "AP", significance=settings_).as_dict() == board.as_dict()


def test_web2012_holm_by_hand(web2012: dict[str, Any]) -> None:
    """The t test and Holm's step-down correction computed by hand with scipy for the six pairs."""
    entries = split(web2012)
    board = rank_entries(entries, MEASURES, "nDCG@20", significance=SignificanceSettings("t", "holm", alpha=0.05))
    x = matrix_in_rank_order(board, entries)
    raw = {(a, b): float(stats.ttest_rel(x[a], x[b]).pvalue) for a, b in itertools.combinations(range(4), 2)}
    ranked = sorted(raw, key=lambda pair: raw[pair])
    holm: dict[tuple[int, int], float] = {}
    running = 0.0
    for k, pair in enumerate(ranked):
        running = max(running, min(1.0, (len(ranked) - k) * raw[pair]))
        holm[pair] = running
    keys = [r.key for r in board.rows]
    for mark in board.pairs:
        pair = (keys.index(mark.a), keys.index(mark.b))
        assert mark.p_value == pytest.approx(raw[pair], rel=1e-9)
        assert mark.p_adjusted == pytest.approx(holm[pair], rel=1e-9)
        assert mark.significant == (holm[pair] < 0.05)
    # the filtered runs beat the unfiltered category A run on these 50 topics
    leader = board.rows[0]
    assert keys[3] in leader.better_than
    assert leader.key in board.rows[3].worse_than


def test_web2012_ascending_order_reverses(web2012: dict[str, Any]) -> None:
    entries = split(web2012)
    desc = rank_entries(entries, MEASURES, "ERR@20")
    asc = rank_entries(entries, MEASURES, "ERR@20", order="asc")
    assert [r.key for r in asc.rows] == [r.key for r in reversed(desc.rows)]
    assert asc.rows[0].delta_best == 0.0 and all(r.delta_best >= 0 for r in asc.rows)
    assert all(r.delta_best <= 0 for r in desc.rows)
    marks = {(r.key, k) for r in desc.rows for k in r.better_than}
    assert {(r.key, k) for r in asc.rows for k in r.worse_than} == marks


def test_web2012_topic_intersection(web2012: dict[str, Any]) -> None:
    entries = split(web2012)
    first = entries[0].document["runs"]["run"]
    dropped = {m: {**item, "per_topic": {t: v for t, v in item["per_topic"].items() if t != "160"}}
               for m, item in first.items()}
    entries[0] = Entry(entries[0].key, entries[0].label, {"runs": {"other-name": dropped}})
    board = rank_entries(entries, MEASURES, "nDCG@20")
    assert len(board.topics) == 49 and "160" not in board.topics
    assert all(r.n_topics == 49 for r in board.rows)


def test_web2012_as_dict_is_json(web2012: dict[str, Any]) -> None:
    board = rank_entries(split(web2012, baseline="ql-results-catb.txt"), MEASURES, "nDCG@20")
    data = board.as_dict()
    assert list(data) == ["measures", "primary", "order", "significance", "topics", "rows", "pairs"]
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert data["significance"] == {"test": "t", "correction": "holm", "alpha": 0.05, "resamples": None, "seed": 0}
    assert list(data["rows"][0]) == ["rank", "key", "label", "baseline", "scores", "delta_best", "delta_baseline",
                                     "better_than", "worse_than", "n_topics", "extra", "better_than_by_measure"]
    assert list(data["pairs"][0]) == ["a", "b", "mean_difference", "p_value", "p_adjusted", "significant"]


# ---- rules on small hand-made tables ---------------------------------------------------------------------------


def test_competition_ranks_and_tie_breaks() -> None:
    entries = [
        Entry("k1", "zeta", doc({"P": [0.4, 0.4], "R": [0.1, 0.1]})),
        Entry("k2", "alpha", doc({"P": [0.5, 0.5], "R": [0.0, 0.0]})),
        Entry("k3", "beta", doc({"P": [0.4, 0.4], "R": [0.2, 0.2]})),
        Entry("k4", "gamma", doc({"P": [0.3, 0.5], "R": [0.1, 0.1]})),  # 0.4 too, up to rounding
        Entry("k0", "gamma", doc({"P": [0.4, 0.4], "R": [0.1, 0.1]})),
        Entry("k5", "delta", doc({"P": [0.1, 0.1], "R": [0.9, 0.9]})),
    ]
    board = rank_entries(entries, ["P", "R"], "P")
    assert [(r.rank, r.key) for r in board.rows] == [
        (1, "k2"), (2, "k3"), (2, "k0"), (2, "k4"), (2, "k1"), (6, "k5")]
    assert board.rows[0].delta_best == 0.0
    assert board.rows[5].delta_best == pytest.approx(-0.4)
    assert all(r.delta_baseline is None for r in board.rows)


def test_tied_leaders_all_have_zero_delta() -> None:
    entries = [Entry("a", "a", doc({"P": [0.3, 0.5]})), Entry("b", "b", doc({"P": [0.4, 0.4]}))]
    board = rank_entries(entries, ["P"], "P")
    assert [r.rank for r in board.rows] == [1, 1]
    assert [r.delta_best for r in board.rows] == [0.0, 0.0]


def test_empty_single_and_one_topic() -> None:
    empty = rank_entries([], ["P"], "P")
    assert empty.rows == () and empty.pairs == () and empty.topics == ()
    assert json.loads(json.dumps(empty.as_dict()))["rows"] == []
    single = rank_entries([Entry("a", "A", doc({"P": [0.2, 0.6]}), baseline=True)], ["P"], "P")
    assert [(r.rank, r.delta_best, r.delta_baseline, r.better_than) for r in single.rows] == [(None, 0.0, 0.0, ())]
    assert single.pairs == ()
    one_topic = rank_entries([Entry("a", "A", doc({"P": [1.0]})), Entry("b", "B", doc({"P": [0.0]}))], ["P"], "P",
                             significance=SignificanceSettings("randomisation", None))
    assert one_topic.pairs == () and all(not r.better_than and not r.worse_than for r in one_topic.rows)
    assert [r.key for r in one_topic.rows] == ["a", "b"]


def test_no_common_topic() -> None:
    entries = [Entry("a", "A", doc({"P": [1.0]}, ["x"])), Entry("b", "B", doc({"P": [0.0]}, ["y"]))]
    board = rank_entries(entries, ["P"], "P")
    assert board.topics == () and board.pairs == ()
    assert all(r.n_topics == 0 and math.isnan(r.scores["P"]) for r in board.rows)
    assert [r.rank for r in board.rows] == [1, 1]
    assert json.loads(json.dumps(board.as_dict(), allow_nan=False))["rows"][0]["scores"] == {"P": None}


def test_constant_differences_are_decided() -> None:
    """Zero-variance differences: a constant gap is significant (p = 0), no gap is not (p = 1)."""
    entries = [Entry("a", "A", doc({"P": [0.5, 0.6, 0.7]})), Entry("b", "B", doc({"P": [0.4, 0.5, 0.6]})),
               Entry("c", "C", doc({"P": [0.4, 0.5, 0.6]}))]
    board = rank_entries(entries, ["P"], "P")
    assert board.rows[0].better_than == ("b", "c")
    assert board.rows[1].worse_than == ("a",) and board.rows[1].better_than == ()


def test_input_errors() -> None:
    good = Entry("a", "A", doc({"P": [0.1, 0.2], "R": [0.3, 0.4]}))
    with pytest.raises(ValueError, match="primary"):
        rank_entries([good], ["P", "R"], "AP")
    with pytest.raises(ValueError, match="order"):
        rank_entries([good], ["P"], "P", order="up")
    with pytest.raises(InputError) as raised:
        rank_entries([good, Entry("b", "B", doc({"P": [0.1, 0.2]}))], ["P", "R"], "P")
    assert raised.value.problems[0].code == "measure-missing" and raised.value.problems[0].source == "b"
    with pytest.raises(ValueError, match="baseline"):
        rank_entries([Entry("a", "A", good.document, baseline=True), Entry("b", "B", good.document, baseline=True)],
                     ["P"], "P")
    with pytest.raises(ValueError, match="key"):
        rank_entries([good, Entry("a", "other", good.document)], ["P"], "P")
    no_topics = {"runs": {"run": {"P": {"mean": 0.1}}}}
    with pytest.raises(InputError) as raised:
        rank_entries([Entry("a", "A", no_topics)], ["P"], "P")
    assert raised.value.problems[0].code == "per-topic-missing"
    two_runs = {"runs": {**doc({"P": [0.1]})["runs"], "second": doc({"P": [0.1]})["runs"]["run"]}}
    for bad in (two_runs, {"runs": {}}, {}):
        with pytest.raises(InputError):
            rank_entries([Entry("a", "A", bad)], ["P"], "P")


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError):
        SignificanceSettings(test="wilcoxon")
    with pytest.raises(ValueError):
        SignificanceSettings(correction="sidak")
    with pytest.raises(ValueError):
        SignificanceSettings(alpha=1.5)
    with pytest.raises(ValueError):
        SignificanceSettings(resamples=0)
    assert SignificanceSettings(test="tukey").correction is None  # Tukey HSD controls the family-wise error itself


# ---- properties ------------------------------------------------------------------------------------------------


@st.composite
def boards(draw: st.DrawFn) -> tuple[list[Entry], tuple[str, ...]]:
    """Entries over a shared set of topics; values on a coarse grid so that ties happen."""
    n = draw(st.integers(0, 7))
    topics = draw(st.integers(1, 6))
    measures = ("P", "R")
    grid = st.integers(0, 4).map(lambda v: v / 4)
    entries = []
    for k in range(n):
        values = {m: draw(st.lists(grid, min_size=topics, max_size=topics)) for m in measures}
        label = draw(st.sampled_from(["x", "y", "z"]))
        entries.append(Entry(f"e{k}", label, doc(values), baseline=k == 0 and draw(st.booleans())))
    return entries, measures


def competition_ranks(sorted_means: list[float]) -> list[int]:
    return [1 + sum(1 for w in sorted_means if w - v > 1e-12) for v in sorted_means]


@settings(max_examples=150, deadline=None)
@given(boards(), st.sampled_from(["desc", "asc"]))
def test_ranks_are_competition_ranks_of_sorted_means(data: tuple[list[Entry], tuple[str, ...]], order: str) -> None:
    entries, measures = data
    board = rank_entries(entries, measures, "P", order=order)
    sign = 1.0 if order == "desc" else -1.0
    primary = [sign * r.scores["P"] for r in board.rows]
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(primary))
    ranked = [r for r in board.rows if not r.baseline]  # a baseline is shown at its place, never ranked
    assert [r.rank for r in ranked] == competition_ranks([sign * r.scores["P"] for r in ranked])
    assert all(r.rank is None for r in board.rows if r.baseline)
    if ranked:
        assert ranked[0].delta_best == 0.0
        assert all(r.delta_best == 0.0 for r in board.rows if r.rank == 1)


@settings(max_examples=100, deadline=None)
@given(boards())
def test_ascending_reverses_descending(data: tuple[list[Entry], tuple[str, ...]]) -> None:
    entries, measures = data
    desc = rank_entries(entries, measures, "P")
    asc = rank_entries(entries, measures, "P", order="asc")
    # the same entries, primary groups in reverse order
    groups_desc = [sorted(r.key for r in desc.rows if r.rank == k)
                   for k in sorted({r.rank for r in desc.rows if r.rank is not None})]
    groups_asc = [sorted(r.key for r in asc.rows if r.rank == k)
                  for k in sorted({r.rank for r in asc.rows if r.rank is not None})]
    assert groups_asc == groups_desc[::-1]
    assert {(r.key, k) for r in desc.rows for k in r.better_than} == {
        (r.key, k) for r in asc.rows for k in r.worse_than}


@settings(max_examples=100, deadline=None)
@given(boards(), st.sampled_from(["t", "randomisation", "bootstrap", "tukey"]))
def test_marks_are_antisymmetric(data: tuple[list[Entry], tuple[str, ...]], test: str) -> None:
    entries, measures = data
    board = rank_entries(entries, measures, "P", significance=SignificanceSettings(test, None, alpha=0.3,
                                                                                    resamples=200))
    better = {(r.key, k) for r in board.rows for k in r.better_than}
    worse = {(k, r.key) for r in board.rows for k in r.worse_than}
    assert better == worse
    assert not better & {(b, a) for a, b in better}
    assert sum(m.significant for m in board.pairs) == len(better)
    ranks = {r.key: r.rank for r in board.rows}
    assert all(ranks[a] <= ranks[b] for a, b in better)  # type: ignore[operator]  # only ranked rows are tested
    n = sum(not e.baseline for e in entries)
    assert len(board.pairs) == (n * (n - 1) // 2 if len(board.topics) >= 2 else 0)


@settings(max_examples=100, deadline=None)
@given(boards(), st.randoms(use_true_random=False), st.sampled_from(["t", "randomisation", "bootstrap", "tukey"]))
def test_permuting_entries_changes_nothing(data: tuple[list[Entry], tuple[str, ...]], rnd: Any, test: str) -> None:
    entries, measures = data
    shuffled = list(entries)
    rnd.shuffle(shuffled)
    settings_ = SignificanceSettings(test, None if test == "tukey" else "holm", resamples=100)
    assert (rank_entries(shuffled, measures, "P", significance=settings_).as_dict()
            == rank_entries(entries, measures, "P", significance=settings_).as_dict())


# ---- size --------------------------------------------------------------------------------------------------------


def test_hundred_entries_two_hundred_topics_is_fast() -> None:
    rng = np.random.default_rng(3)
    topics = [str(t) for t in range(200)]
    quality = rng.random(100)
    entries = [
        Entry(f"s{k:03d}", f"team {k % 37}", doc({"nDCG@10": np.clip(q + 0.3 * rng.standard_normal(200), 0, 1),
                                                  "P@10": rng.random(200)}, topics), baseline=k == 5)
        for k, q in enumerate(quality)
    ]
    started = time.perf_counter()
    board = rank_entries(entries, ["nDCG@10", "P@10"], "nDCG@10")
    elapsed = time.perf_counter() - started
    assert len(board.rows) == 100 and len(board.pairs) == 4851  # the baseline is not tested
    assert elapsed < 1.0, f"{elapsed:.3f}s"
