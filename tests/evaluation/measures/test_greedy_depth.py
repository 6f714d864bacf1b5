"""The greedy ideal computed only down to a depth is the full ideal's first ranks, bit for bit, and nNRBP's
ideal sum over its first ranks equals the sum over all of them (``nrbp._tail_vanishes``) -- or is taken over
all of them when it would not.

The oracle is the full-depth computation the shortcut replaces (itself checked against ndeval, pyndeval and a
plain-Python greedy elsewhere): property tests on generated judgments, and the real TREC Web 2012 qrels.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation import Evaluator, Qrels, read_qrels, read_run
from evaluation.formats.source import Blob
from evaluation.intent_ranking import intent_slots
from evaluation.measures.diversity import nrbp
from evaluation.measures.diversity._intents import pair_satisfaction
from evaluation.measures.diversity._shared import IdealGains, _greedy

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DOCNOS = tuple(f"d{i}" for i in range(40))


def _prefix_of(full: IdealGains, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``depth`` ranks of every topic of ``full``: (lengths, gains)."""
    lengths = np.minimum(np.diff(full.offsets), depth)
    picked = [np.arange(start, start + n) for start, n in zip(full.offsets[:-1].tolist(), lengths.tolist())]
    return lengths, full.gain[np.concatenate(picked).astype(np.int64)] if picked else full.gain[:0]


def _check_prefixes(qrels: Qrels, alpha: float, depths: tuple[int, ...]) -> None:
    slots = intent_slots(qrels, 1)
    for graded in (None, pair_satisfaction(slots)):
        full = _greedy(slots, alpha, graded)
        for depth in depths:
            part = _greedy(slots, alpha, graded, depth)
            lengths, gains = _prefix_of(full, depth)
            assert np.diff(part.offsets).tolist() == lengths.tolist()
            assert part.gain.tobytes() == gains.tobytes()


@st.composite
def judgments(draw: st.DrawFn) -> Qrels:
    rows = []
    for topic in draw(st.lists(st.sampled_from(["1", "2", "10"]), min_size=1, max_size=3, unique=True)):
        n_intents = draw(st.integers(1, 6))
        for doc in draw(st.lists(st.sampled_from(DOCNOS), min_size=1, max_size=len(DOCNOS), unique=True)):
            for intent in draw(st.lists(st.integers(1, n_intents), min_size=1, max_size=n_intents, unique=True)):
                rows.append(f"{topic} {intent} {doc} {draw(st.sampled_from([0, 1, 1, 2, 3]))}\n")
    return read_qrels(Blob.from_bytes("".join(rows).encode()))


@SETTINGS
@given(qrels=judgments(), alpha=st.sampled_from([0.0, 0.3, 0.5, 0.9]))
def test_a_cut_greedy_is_the_full_greedys_first_ranks(qrels: Qrels, alpha: float) -> None:
    _check_prefixes(qrels, alpha, (1, 2, 3, 7, 20, 1000))


def test_a_cut_greedy_on_trec_web_2012(shared_data: Path) -> None:
    qrels = read_qrels(shared_data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt")
    _check_prefixes(qrels, 0.5, (5, 20, 64))


@pytest.mark.parametrize("beta", [0.5, 0.9, 0.99, 1.0])
@pytest.mark.parametrize("gain", ["binary", "graded"])
def test_nnrbp_from_the_first_ranks_equals_nnrbp_from_all(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch, beta: float, gain: str
) -> None:
    """beta = 0.5 and 0.9: the tail vanishes and 64 ranks give every bit; 0.99 and 1.0: it does not, and the
    whole ranking is summed. Either way the values are those of the whole ranking."""
    qrels = read_qrels(shared_data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt")
    run = read_run(shared_data / "trec-web-2012-runs" / "runs" / "ql-results-catb-filtered.txt")
    name = f"nNRBP(beta={beta},gain={gain})"
    cut = Evaluator.from_names(qrels, [name]).evaluate(run).per_topic(name)
    monkeypatch.setattr(nrbp, "_FIRST_DEPTH", 10**9)  # every rank, as before the shortcut
    whole = Evaluator.from_names(qrels, [name]).evaluate(run).per_topic(name)
    assert cut == whole  # exact, per topic


def test_the_tail_rule_tells_both_cases_apart(shared_data: Path) -> None:
    """On real data the first ranks suffice at beta = 0.5 and do not at beta = 1 (no decay at all)."""
    qrels = read_qrels(shared_data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt")
    run = read_run(shared_data / "trec-web-2012-runs" / "runs" / "ql-results-catb-filtered.txt")
    seen: list[bool] = []
    original = nrbp._tail_vanishes

    def spy(*args: object) -> bool:
        seen.append(original(*args))  # type: ignore[arg-type]
        return seen[-1]

    for beta in (0.5, 1.0):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(nrbp, "_tail_vanishes", spy)
            Evaluator.from_names(qrels, [f"nNRBP(beta={beta})"]).evaluate(run)
    assert seen == [True, False]
