"""Small vectorised helpers for segmented (CSR-like) arrays, shared by the inputs of the measures."""

from __future__ import annotations

import numpy as np

from evaluation.model import IntArray


def expand_ranges(lo: IntArray, hi: IntArray) -> IntArray:
    """Concatenate ``arange(lo[i], hi[i])`` for every i, without a Python loop: one array of ones, each range's
    first element set to its jump from the element before, then running sums in place (no ``arange`` and
    ``repeat`` temporaries of the output's size)."""
    counts = np.asarray(hi, dtype=np.int64) - lo
    keep = counts > 0
    if not keep.all():
        lo, hi, counts = lo[keep], hi[keep], counts[keep]
    if counts.size == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(counts)
    out = np.ones(int(ends[-1]), dtype=np.int64)
    out[0] = lo[0]
    out[ends[:-1]] = lo[1:] - hi[:-1] + 1  # from the last element of the range before to this one's first
    np.cumsum(out, out=out)
    return out


def segment_ids(offsets: IntArray) -> IntArray:
    """The segment number of every element of a segmented array."""
    return np.repeat(np.arange(offsets.size - 1, dtype=np.int64), np.diff(offsets))


def segmented_cumsum(values: np.ndarray, offsets: IntArray, *, exclusive: bool = False) -> np.ndarray:
    """Running sums restarting at every segment, each computed on its own segment only (so a segment's sums
    never carry rounding from the segments before it: equal segments give bit-equal sums). ``exclusive``: the
    sum of the elements before each element of its segment (0 at a segment's start).

    Segments are laid out as rows of a zero-padded matrix when that costs at most a few times the data (one
    vectorised cumsum); otherwise each segment is summed in turn (a loop over segments, not elements).
    """
    v = np.asarray(values, dtype=np.float64)
    lengths = np.diff(offsets)
    out = np.zeros(v.size)
    if v.size == 0:
        return out
    width = int(lengths.max()) + (1 if exclusive else 0)
    if lengths.size * width <= 4 * v.size + 4096:
        grid = np.zeros((lengths.size, width))
        inside = np.arange(width - (1 if exclusive else 0)) < lengths[:, None]
        shifted = grid[:, 1:] if exclusive else grid
        shifted[inside] = v
        np.cumsum(grid, axis=1, out=grid)
        if exclusive:
            grid = grid[:, :-1]
        return np.asarray(grid[inside], dtype=np.float64)
    for start, stop in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
        if stop > start:
            seg = np.cumsum(v[start:stop])
            if exclusive:
                out[start + 1 : stop] = seg[:-1]
            else:
                out[start:stop] = seg
    return out
