"""``AdhocJudgments.ideal_grades`` (one packed sort) equals the lexsort it replaces: grades per topic, descending."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.model import AdhocJudgments


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(-4, 9)), max_size=80),
       st.sampled_from([0, 1 << 20, 1 << 61]))
def test_ideal_grades_equal_lexsort(rows: list[tuple[int, int]], shift: int) -> None:
    topic = np.array(sorted(t for t, _ in rows), dtype=np.int64) + shift  # topic is sorted in AdhocJudgments
    grade = np.array([g for _, g in rows], dtype=np.int64)
    judgments = AdhocJudgments(np.arange(grade.size), topic, grade, np.zeros(1, dtype=np.int64), np.arange(grade.size))
    expected = grade[np.lexsort((-grade, topic))]
    got = judgments.ideal_grades
    assert got.dtype == expected.dtype
    assert np.array_equal(got, expected)
