"""``segments.expand_ranges`` (top-k indices, intent pairs, a ranked file's blocks in topic order) against the
plain concatenation of ``arange``s: empty ranges, ranges in any order, overlapping ranges (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.segments import expand_ranges


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 6)), max_size=12))
def test_expand_ranges_is_the_concatenated_aranges(ranges: list[tuple[int, int]]) -> None:
    lo = np.array([a for a, _ in ranges], dtype=np.int64)
    hi = np.array([a + n for a, n in ranges], dtype=np.int64)
    expected = [i for a, n in ranges for i in range(a, a + n)]
    got = expand_ranges(lo, hi)
    assert got.dtype == np.int64
    assert got.tolist() == expected
