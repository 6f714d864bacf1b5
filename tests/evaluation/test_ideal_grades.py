"""``AdhocJudgments.ideal_grades`` equals the lexsort it replaces -- grades per topic, descending -- whether it counts
them (topics spanning few numbers) or sorts them packed (topics far apart)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.model import AdhocJudgments


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(-4, 9)), max_size=80),
       st.sampled_from([0, 1 << 20, 1 << 61]), st.sampled_from([1, 1000, 1 << 30]))
def test_ideal_grades_equal_lexsort(rows: list[tuple[int, int]], shift: int, spread: int) -> None:
    # topic is sorted in AdhocJudgments; spread far apart, the topics take the packed sort
    topic = np.array(sorted(t for t, _ in rows), dtype=np.int64) * spread + shift
    grade = np.array([g for _, g in rows], dtype=np.int64)
    judgments = AdhocJudgments(np.arange(grade.size), topic, grade, np.zeros(1, dtype=np.int64), np.arange(grade.size))
    expected = grade[np.lexsort((-grade, topic))]
    got = judgments.ideal_grades
    assert got.dtype == expected.dtype
    assert np.array_equal(got, expected)
