"""``JudgedRanking.count_within`` (P@k, Success@k, NumRelRet@k read from each topic's top k only) gives exactly
``segment_sum(marked & within(k))``: topics shorter and longer than k, topics not retrieved, every k (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.judged_ranking import judge_ranking
from evaluation.model import Qrels, Run
from evaluation.ranking import rank_run


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=8), st.integers(1, 40), st.randoms(use_true_random=False))
def test_counts_in_the_top_k_equal_the_masked_sums(depths: list[int], cutoff: int, rng) -> None:  # type: ignore[no-untyped-def]
    topics = tuple(f"t{i}" for i in range(len(depths)))
    docnos = np.array([f"d{j:02d}".encode() for j in range(40)])  # sorted, as Qrels keeps them
    topic = np.repeat(np.arange(len(depths)), depths)
    docno = np.concatenate([docnos[:d] for d in depths]) if topic.size else docnos[:0]
    run = Run("r", topics, topic, docno, np.array([rng.random() for _ in range(topic.size)]), np.ones(topic.size, int))
    judged_rows = [(t, j, rng.choice([0, 1, 2])) for t in range(len(depths)) for j in range(40) if rng.random() < 0.4]
    if not judged_rows:
        judged_rows = [(0, 0, 1)]
    qt, qd, qg = (np.array(c) for c in zip(*judged_rows))
    qrels = Qrels(topics, ("0",), docnos, qt, np.zeros(qt.size, dtype=np.int64), qd, qg)
    retrieved = tuple(t for t, d in zip(topics, depths) if d)
    if not retrieved:
        return
    run = Run("r", retrieved, np.repeat(np.arange(len(retrieved)), [d for d in depths if d]), docno, run.score,
              run.rank)
    data = judge_ranking(qrels, rank_run(run), retrieved)
    for level in (1, 2):
        marked = data.relevant(level)
        expected = data.segment_sum(marked & data.within(cutoff))
        assert np.array_equal(data.count_within(marked, cutoff), expected)
        assert np.array_equal(data.count_within(marked, None), data.segment_sum(marked))
