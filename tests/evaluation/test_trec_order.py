"""``ranking.rank_run(policy="trec")`` against a plain sort (topic, score descending, docno descending byte-wise),
on runs written the ways tools write them: ranked within topics whose blocks come in any topic order, with tied
scores here and there, or not ranked at all (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.model import Run
from evaluation.ranking import rank_run


def reference(topic: list[int], score: list[float], docno: list[bytes]) -> list[int]:
    rows = sorted(range(len(topic)), key=lambda i: docno[i], reverse=True)  # docno descending ...
    return sorted(rows, key=lambda i: (topic[i], -score[i]))  # ... within score descending within topic


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[int], list[float], list[bytes]]:
    """Blocks of rows of one topic each (topics in a drawn order), scores drawn from a few values (ties) and
    sorted descending within a block unless ``shuffled``."""
    n_topics = draw(st.integers(1, 6))
    order = draw(st.permutations(range(n_topics)))
    shuffled = draw(st.booleans())
    topic: list[int] = []
    score: list[float] = []
    docno: list[bytes] = []
    for t in order:
        size = draw(st.integers(1, 12))
        values = draw(st.lists(st.sampled_from([3.0, 2.5, 2.0, 1.0, -0.0, 0.0, -1.5]), min_size=size, max_size=size))
        names = draw(st.lists(st.binary(min_size=1, max_size=12).filter(lambda b: b"\0" not in b), min_size=size,
                              max_size=size, unique=True))
        if not shuffled:
            values.sort(reverse=True)
        topic += [t] * size
        score += values
        docno += names
    return topic, score, docno


@settings(max_examples=300, deadline=None)
@given(runs())
def test_trec_order_is_the_plain_sort(case: tuple[list[int], list[float], list[bytes]]) -> None:
    topic, score, docno = case
    n_topics = max(topic) + 1
    run = Run("r", tuple(f"t{i}" for i in range(n_topics)), np.array(topic, dtype=np.int64),
              np.array(docno, dtype=f"S{max(len(d) for d in docno)}"), np.array(score), np.arange(len(topic)))
    ranking = rank_run(run, "trec")
    assert ranking.order.tolist() == reference(topic, score, docno)
    assert ranking.offsets.tolist() == np.concatenate(([0], np.cumsum(np.bincount(topic, minlength=n_topics)))).tolist()
    if ranking.in_file_order:
        assert ranking.order.tolist() == list(range(len(topic)))
