"""Sorted distinct values of a 1-D array of integers or bytes: what ``np.unique(a)`` returns, without its first
call's cost -- NumPy's plain ``unique`` asks ``np.ma.is_masked``, which imports ``numpy.ma`` (and ``inspect``):
about 16 ms of every command's start-up, a tenth of an ad hoc evaluation's whole process."""

from __future__ import annotations

import numpy as np


def sorted_distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` for 1-D integer, boolean or bytes arrays (no NaN to fold): sort, keep the first of
    each run of equal values."""
    ordered = np.sort(values.ravel())
    if ordered.size < 2:
        return ordered
    keep = np.empty(ordered.size, dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]
