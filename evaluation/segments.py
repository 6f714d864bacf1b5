"""Small vectorised helpers for segmented (CSR-like) arrays, shared by the inputs of the measures."""

from __future__ import annotations

import numpy as np

from evaluation.model import IntArray


def expand_ranges(lo: IntArray, hi: IntArray) -> IntArray:
    """Concatenate ``arange(lo[i], hi[i])`` for every i, without a Python loop."""
    counts = hi - lo
    total = int(counts.sum()) if counts.size else 0
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    before = np.concatenate(([0], np.cumsum(counts)[:-1]))
    return (np.arange(total) + np.repeat(lo - before, counts)).astype(np.int64)


def segment_ids(offsets: IntArray) -> IntArray:
    """The segment number of every element of a segmented array."""
    return np.repeat(np.arange(offsets.size - 1, dtype=np.int64), np.diff(offsets))
