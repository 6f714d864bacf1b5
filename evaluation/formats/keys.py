"""Interning of labels and exact byte-order keys for document ids, all vectorised."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
U64Array = npt.NDArray[np.uint64]


def intern_labels(values: np.ndarray) -> tuple[tuple[str, ...], IntArray]:
    """Sorted unique labels (decoded UTF-8) and each value's index into them.

    Only the first value of every run of equal neighbours is sorted, so files grouped by topic cost a
    sort of their topics, not of their lines.
    """
    n = values.size
    if n == 0:
        return (), np.zeros(0, dtype=np.int64)
    change = np.flatnonzero(values[1:] != values[:-1]) + 1
    heads = np.concatenate(([0], change))
    labels, inverse = np.unique(values[heads], return_inverse=True)
    lengths = np.diff(np.concatenate((heads, [n])))
    index = np.repeat(inverse.astype(np.int64).ravel(), lengths)
    return tuple(v.decode("utf-8", "replace") for v in labels.tolist()), index


def byte_order_keys(values: np.ndarray) -> list[U64Array]:
    """Big-endian 8-byte chunks of fixed-width byte strings: comparing the chunk tuples compares the
    strings byte-wise, as C ``strcmp`` does (shorter string first on a common prefix)."""
    width = values.dtype.itemsize
    padded = -(-width // 8) * 8
    raw = np.zeros((values.size, padded), dtype=np.uint8)
    raw[:, :width] = values.view(np.uint8).reshape(values.size, width)
    chunks = raw.view(">u8").astype(np.uint64)
    return [chunks[:, j] for j in range(chunks.shape[1])]


def duplicate_rows(group: IntArray, values: np.ndarray) -> tuple[IntArray, IntArray]:
    """Rows whose (group, value) already occurred earlier: returns (duplicate row, first row) pairs."""
    n = values.size
    if n < 2:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    chunks = byte_order_keys(values)
    mix = group.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    for j, c in enumerate(chunks):
        mix = (mix ^ c) * np.uint64(0xBF58476D1CE4E5B9 + 2 * j)
        mix ^= mix >> np.uint64(31)
    order = np.argsort(mix, kind="stable")
    same = mix[order][1:] == mix[order][:-1]
    if not same.any():
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    a, b = order[:-1][same], order[1:][same]
    exact = (group[a] == group[b]) & (values[a] == values[b])
    a, b = a[exact], b[exact]
    # Map every duplicate to the first row of its (group, value).
    first = np.minimum(a, b)
    dup = np.maximum(a, b)
    # chains (three or more copies) resolve to the smallest row through repeated lookups
    lookup = dict(zip(dup.tolist(), first.tolist()))
    roots = [_root(lookup, r) for r in dup.tolist()]
    return dup.astype(np.int64), np.asarray(roots, dtype=np.int64)


def _root(lookup: dict[int, int], row: int) -> int:
    while row in lookup:
        row = lookup[row]
    return row
