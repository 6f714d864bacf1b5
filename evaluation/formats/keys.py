"""Interning of labels, exact byte-order keys and hashing of byte strings, all vectorised.

Byte strings are handled as rows of little-endian uint64 words (zero padded; fields never contain a zero
byte, so the padding is unambiguous). Hashes only ever pick candidates: every match they suggest is verified
on the words themselves, so results never depend on the hash function.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from evaluation.formats.distinct import sorted_distinct
from evaluation.formats.lexer import words_of
from evaluation.task_pool import TaskPool, in_order

IntArray = npt.NDArray[np.int64]
U64Array = npt.NDArray[np.uint64]
BoolArray = npt.NDArray[np.bool_]

_U = np.uint64
# odd multipliers (from splitmix64 / murmur3 / golden ratio) for the per-word linear hash
_WORD_MULT = (
    0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0xFF51AFD7ED558CCD,
    0xC4CEB9FE1A85EC53, 0xD6E8FEB86659FD93, 0xA0761D6478BD642F, 0xE7037ED1A0B428DB,
)
GROUP_MULT = _U(0x8EBC6AF09C88C6E3)
_SLOT_MULT = _U(0x9E3779B97F4A7C15)
_FILTER_BITS = 2  # a group's filter has 2**_FILTER_BITS bits per slot of its table
_FILTER_PER_SLOT = 1 << _FILTER_BITS
SLOTS_PER_ENTRY = 4  # hash table size per entry (at least; rounded up to a power of two per group)


def intern_labels(values: np.ndarray) -> tuple[tuple[str, ...], IntArray]:
    """Sorted unique labels (decoded UTF-8) and each value's index into them.

    Only the first value of every run of equal neighbours is sorted, so files grouped by topic cost a
    sort of their topics, not of their lines.
    """
    return intern_words(words_of(values))


def intern_words(words: U64Array) -> tuple[tuple[str, ...], IntArray]:
    """``intern_labels`` for strings given as (n, k) little-endian words (see ``lexer.words_of``)."""
    if words.shape[0] == 0:
        return (), np.zeros(0, dtype=np.int64)
    return intern_runs(*label_runs(words))


def label_runs(words: U64Array) -> tuple[U64Array, IntArray]:
    """Rows of words (at least one) as runs of equal neighbours: each run's words and its length (a file grouped by
    topic has one run per topic, whatever its number of lines)."""
    n = words.shape[0]
    change = words[1:, 0] != words[:-1, 0]
    for j in range(1, words.shape[1]):
        change |= words[1:, j] != words[:-1, j]
    heads = np.concatenate(([0], np.flatnonzero(change) + 1))
    return words[heads], np.diff(np.append(heads, n))


def intern_runs(head_words: U64Array, lengths: IntArray) -> tuple[tuple[str, ...], IntArray]:
    """Labels and per-row index of rows given as runs: each run's string (as words) and its length.

    Labels sort byte-wise (as ``np.unique`` sorts ``S`` arrays): the words' big-endian values are compared.
    Runs with equal strings may repeat.
    """
    big = head_words.byteswap()
    if big.shape[1] > 1 and not bool(big[:, 1:].any()):
        big = big[:, :1]  # short labels: one word each
    if big.shape[1] == 1 and big.shape[0] > _MANY_HEADS:  # e.g. a run whose lines are not grouped by topic
        unique = _distinct(big[:, 0])
        unique.sort()
        labels = unique.byteswap().view("S8")  # the words again (zero padding drops out of ``S`` values)
        index = np.repeat(_position_in(unique, big[:, 0]), lengths)
        return tuple(v.decode("utf-8", "replace") for v in labels.tolist()), index
    if big.shape[1] == 1:
        _, first, inverse = np.unique(big[:, 0], return_index=True, return_inverse=True)
    else:
        order = np.lexsort(big.T[::-1])
        ranked = big[order]
        new = np.ones(order.size, dtype=bool)
        new[1:] = (ranked[1:] != ranked[:-1]).any(axis=1)
        inverse = np.empty(order.size, dtype=np.int64)
        inverse[order] = np.cumsum(new) - 1
        first = order[new]
    labels = np.ascontiguousarray(head_words[first]).view(f"S{8 * head_words.shape[1]}").ravel()
    index = np.repeat(inverse.astype(np.int64).ravel(), lengths)
    return tuple(v.decode("utf-8", "replace") for v in labels.tolist()), index


_MANY_HEADS = 4096  # above this many runs, labels of one word are found by scattering, not by sorting them all


def _position_in(unique: U64Array, values: U64Array) -> IntArray:
    """Index of each value in ``unique`` (sorted, holding every value): one table lookup each when a slot
    function without collisions on ``unique`` is found among a few, else a binary search."""
    bits = max((2 * unique.size * unique.size).bit_length(), 4)  # collision-free for most multipliers
    if bits <= 20:
        for mult in _WORD_MULT:
            slot = (unique * _U(mult)) >> _U(64 - bits)
            if sorted_distinct(slot).size == unique.size:
                lookup = np.zeros(1 << bits, dtype=np.int64)
                lookup[slot.view(np.int64)] = np.arange(unique.size)
                where = values * _U(mult)
                where >>= _U(64 - bits)
                return lookup[where.view(np.int64)]
    return np.searchsorted(unique, values)


def _distinct(values: U64Array) -> U64Array:
    """The distinct values, in no particular order: each round scatters the values into a table of about twice
    as many slots and keeps every slot's winner; values unlike their slot's winner go to the next round."""
    found: list[U64Array] = []
    key = values
    for mult in _WORD_MULT:
        m = key.size
        bits = max((2 * m - 1).bit_length(), 4)
        slot = key * _U(mult)
        slot >>= _U(64 - bits)
        where = slot.view(np.int64)
        table = np.empty(1 << bits, dtype=np.int32)
        rows = np.arange(m, dtype=np.int32)
        table[where] = rows
        winner = table[where]
        found.append(key[winner == rows])
        key = key[key[winner] != key]
        if key.size == 0:
            return np.concatenate(found)
    return sorted_distinct(np.concatenate((*found, key)))


def unique_strings(values: np.ndarray) -> tuple[np.ndarray, IntArray]:
    """``np.unique(values, return_inverse=True)`` for an ``S`` array, equal results, sorted on words.

    NumPy sorts ``S`` arrays with byte-string comparisons; packed word keys (see
    ``descending_within_groups``) sort hundreds of thousands of document ids several times faster.
    """
    if values.size == 0:
        return values.copy(), np.zeros(0, dtype=np.int64)
    first, inverse = unique_word_rows(words_of(values))
    return np.take(values, first), inverse  # (take: several times faster than [] for S items)


def unique_word_rows(words: U64Array) -> tuple[IntArray, IntArray]:
    """For strings given as (n, k) words (``lexer.words_of``): the row where each distinct string first
    occurs, in the strings' byte-wise order, and each row's index among them (``np.unique``'s inverse).

    Runs of equal neighbours (a diversity qrels lists each document once per intent, one line after the
    other) are sorted once, by their first value.
    """
    n = words.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    compact = compact_keys(words)
    change = np.ones(n, dtype=bool)
    change[1:] = ~rows_equal(compact[1:], compact[:-1])
    heads = np.flatnonzero(change)
    if heads.size < n:
        first, inverse = _unique_rows(compact[heads])
        return heads[first], np.repeat(inverse, np.diff(np.append(heads, n)))
    return _unique_rows(compact)


def _unique_rows(compact: U64Array) -> tuple[IntArray, IntArray]:
    """``unique_word_rows`` of rows given as their ``compact_keys``."""
    n = compact.shape[0]
    new = np.ones(n, dtype=bool)
    packed = _with_positions(compact, n)
    if packed is not None:  # one sort of key and position packed in a word; positions are distinct
        packed.sort()
        position_bits = _U(max(int(n - 1).bit_length(), 1))
        key = packed >> position_bits
        new[1:] = key[1:] != key[:-1]
        order = (packed & ((_U(1) << position_bits) - _U(1))).view(np.int64)
    else:
        order = _order_within_groups(np.zeros(n, dtype=np.int64), compact)
        ranked = np.take(compact, order, axis=0)
        same = ranked[1:, 0] == ranked[:-1, 0]
        for j in range(1, ranked.shape[1]):
            same &= ranked[1:, j] == ranked[:-1, j]
        new[1:] = ~same
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return order[new], inverse


def _with_positions(compact: U64Array, n: int) -> U64Array | None:
    """Each row's one-word compact key with its position in the low bits it leaves free (``compact_keys``
    fills words from the top), or None when the keys take more than one word or leave too few bits."""
    if compact.shape[1] != 1:
        return None
    position_bits = max(int(n - 1).bit_length(), 1)
    used = int(np.bitwise_or.reduce(compact[:, 0]))
    if used & ((1 << position_bits) - 1):
        return None
    packed: U64Array = compact[:, 0] | np.arange(n, dtype=np.uint64)
    return packed


def compact_keys(words: U64Array) -> U64Array:
    """Shorter sort keys with the same byte-wise order and equalities as the strings in ``words``.

    Bits every string shares are dropped (they never decide a comparison) and the others are packed, most
    significant first, into big-endian words: document ids such as ``clueweb09-en0108-67-02526`` shrink from
    4 words to 41 bits, so one sort pass of packed keys orders them instead of several.
    """
    n, k = words.shape
    out = np.zeros((n, 1), dtype=np.uint64)
    if n == 0:
        return out
    pieces: list[tuple[U64Array, int, int]] = []  # (big-endian or little-endian column, lowest bit, width)
    for j in range(k):
        varying = int(np.bitwise_or.reduce(words[:, j] ^ words[0, j]))
        big_runs = _bit_runs(int.from_bytes(varying.to_bytes(8, "little"), "big"))
        byte_runs = [(8 * b + low, width) for b in range(8) for low, width in _bit_runs((varying >> (8 * b)) & 0xFF)]
        if len(byte_runs) == len(big_runs):  # runs within bytes (digits): read the words as they are
            pieces.extend((words[:, j], low, width) for low, width in byte_runs)
        elif big_runs:
            column = words[:, j].byteswap()
            pieces.extend((column, low, width) for low, width in big_runs)
    total = sum(width for _, _, width in pieces)
    if total > 64:
        out = np.zeros((n, -(-total // 64)), dtype=np.uint64)
    col, free = 0, 64  # the word being filled and its bits still free (filled from the top)
    for column, low, width in pieces:
        part = column >> _U(low) if low else column.copy()
        if width < 64:
            part &= _U((1 << width) - 1)
        if width <= free:
            part <<= _U(free - width)
            out[:, col] |= part
            free -= width
        else:  # split across two words
            rest = width - free
            out[:, col] |= part >> _U(rest)
            col, free = col + 1, 64 - rest
            part &= _U((1 << rest) - 1)
            part <<= _U(free)
            out[:, col] |= part
        if free == 0:
            col, free = col + 1, 64
    return out


def _bit_runs(bits: int) -> list[tuple[int, int]]:
    """(lowest bit, width) of each run of set bits in a 64-bit value, most significant run first."""
    runs = []
    while bits:
        top = bits.bit_length()  # the run's highest bit is top - 1
        low = ((~bits) & ((1 << top) - 1)).bit_length()  # the first clear bit below the run
        runs.append((low, top - low))
        bits &= (1 << low) - 1
    return runs


def hash_words(words: U64Array) -> U64Array:
    """A 64-bit hash of each row of words; appending zero words does not change it (widths may differ)."""
    h = words[:, 0] * _U(_WORD_MULT[0])
    for j in range(1, words.shape[1]):
        h += words[:, j] * _U(_WORD_MULT[j % len(_WORD_MULT)] ^ (j // len(_WORD_MULT)) * 2)
    return h


def rows_equal(a: U64Array, b: U64Array) -> BoolArray:
    """Row-wise equality of two word matrices of possibly different widths (missing words are zero)."""
    common = min(a.shape[1], b.shape[1])
    same: BoolArray = a[:, 0] == b[:, 0]
    for j in range(1, common):
        same &= a[:, j] == b[:, j]
    for longer in (a, b):
        for j in range(common, longer.shape[1]):
            same &= longer[:, j] == 0
    return same


def byte_order_keys(values: np.ndarray) -> list[U64Array]:
    """Big-endian 8-byte chunks of fixed-width byte strings: comparing the chunk tuples compares the
    strings byte-wise, as C ``strcmp`` does (shorter string first on a common prefix)."""
    width = values.dtype.itemsize
    padded = -(-width // 8) * 8
    raw = np.zeros((values.size, padded), dtype=np.uint8)
    raw[:, :width] = values.view(np.uint8).reshape(values.size, width)
    chunks = raw.view(">u8").astype(np.uint64)
    return [chunks[:, j] for j in range(chunks.shape[1])]


def has_duplicates(group: IntArray, hashes: U64Array, pool: TaskPool | None = None) -> bool:
    """Whether two rows might share (group, value), given each value's ``hash_words``: False is certain.

    When every group's rows are contiguous (a run read topic by topic), batches of whole groups are checked
    one at a time, each in a table that stays in cache (with a ``pool``, on its threads); otherwise all rows
    are checked at once.
    """
    n = hashes.size
    if n < 2:
        return False
    edges = np.flatnonzero(group[1:] != group[:-1]) + 1
    heads = group[np.concatenate(([0], edges))]
    if edges.size >= n // 4 or sorted_distinct(heads).size < heads.size:
        return _scattered_duplicates(hashes + group.astype(np.uint64) * GROUP_MULT)
    bounds = [0, n]
    if edges.size:  # cut at the first group edge past every multiple of _BATCH rows
        at = np.searchsorted(edges, np.arange(_BATCH, n, _BATCH))
        bounds[1:1] = sorted_distinct(edges[at[at < edges.size]]).tolist()
    checks = [partial(_batch_duplicates, group, hashes, lo, hi) for lo, hi in pairwise(bounds) if hi - lo > 1]
    return any(in_order(pool, checks))


def _batch_duplicates(group: IntArray, hashes: U64Array, lo: int, hi: int) -> bool:
    return _scattered_duplicates(hashes[lo:hi] + group[lo:hi].astype(np.uint64) * GROUP_MULT)


_BATCH = 1 << 16  # rows per batch of whole groups in ``has_duplicates``


def _scattered_duplicates(key: U64Array) -> bool:
    """Whether two keys are equal (``key`` may be reordered).

    Scatters every key into a table of about twice as many slots: a row that keeps its slot has no equal key
    elsewhere; a row that loses it is compared with the slot's winner and, when their keys differ, scattered
    again with another multiplier. About 1.3 scatters per row instead of a sort (several times faster).
    """
    for mult in _WORD_MULT:  # a fresh slot function each round; each round keeps about a fifth of the rows
        m = key.size
        if m < 2:
            return False
        bits = max((2 * m - 1).bit_length(), 4)
        slot = key * _U(mult)
        slot >>= _U(64 - bits)
        where = slot.view(np.int64)  # below 2**bits: the same values
        table = np.empty(1 << bits, dtype=np.int32)  # only slots written below are read
        rows = np.arange(m, dtype=np.int32)
        table[where] = rows  # of several rows on one slot, one is kept
        winner = table[where]
        lost = np.flatnonzero(winner != rows)
        if lost.size == 0:
            return False
        if bool((key[winner[lost]] == key[lost]).any()):
            return True
        key = key[lost]
    key.sort()
    return bool((key[1:] == key[:-1]).any())


def duplicate_rows(group: IntArray, values: np.ndarray) -> tuple[IntArray, IntArray]:
    """Rows whose (group, value) already occurred earlier: returns (duplicate row, first row) pairs."""
    n = values.size
    empty = np.zeros(0, dtype=np.int64)
    if n < 2:
        return empty, empty
    # Quick exclusion: with no two equal (group, value) hashes there is no duplicate.
    if not has_duplicates(group, hash_words(words_of(values))):
        return empty, empty
    chunks = byte_order_keys(values)
    mix = group.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    for j, c in enumerate(chunks):
        mix = (mix ^ c) * np.uint64(0xBF58476D1CE4E5B9 + 2 * j)
        mix ^= mix >> np.uint64(31)
    order = np.argsort(mix, kind="stable")
    same = mix[order][1:] == mix[order][:-1]
    if not same.any():
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


def descending_within_groups(cls: IntArray, words: U64Array) -> IntArray:
    """Permutation sorting rows by (class ascending, string descending byte-wise), stable on equal strings.

    ``cls`` must be nondecreasing (rows already grouped) with dense values from 0; ``words`` holds each
    row's string as little-endian words. Sorts packed uint64 keys -- class, the next unread bits of the
    string (complemented, so that ascending order is descending strings) and the row's position -- and
    repeats on the rows still tied, reading further into the strings, until none are tied.
    """
    if cls.size < 2:
        return np.arange(cls.size, dtype=np.int64)
    return _order_within_groups(cls, ~words.byteswap())  # complemented: ascending order = descending strings


def order_within_groups(cls: IntArray, big: U64Array) -> IntArray:
    """Permutation sorting rows by (class, ``big`` row as unsigned words, most significant first), stable on
    ties; ``cls`` holds dense class numbers from 0, in any order."""
    if cls.size and bool((big == big[0]).all()):
        return np.argsort(cls, kind="stable")  # equal rows: the classes alone decide
    return _order_within_groups(cls, big)


def _order_within_groups(cls: IntArray, big: U64Array) -> IntArray:
    """Permutation sorting rows by (class, ``big`` row as unsigned big-endian words), stable on ties."""
    m = cls.size
    perm = np.arange(m, dtype=np.int64)
    if m < 2:
        return perm
    ncols = big.shape[1]
    col = 0  # skip the leading bits every string shares
    while col < ncols and bool((big[:, col] == big[0, col]).all()):
        col += 1
    if col == ncols:
        return perm  # all strings equal: keep the order
    offset = col * 64 + 64 - int(np.bitwise_or.reduce(big[:, col] ^ big[0, col])).bit_length()
    nbits = ncols * 64
    pos = perm.copy()  # positions (into perm) of the rows still tied, ascending
    group = cls.astype(np.uint64)  # their classes, renumbered densely as ties narrow
    found = _by_class_rows(cls, big, offset, perm) or _packed_pass(perm, pos, group, big, offset)
    while found is not None:  # each pass reads the next bits of the rows still tied
        tie, width = found
        offset += width
        if not tie.any():
            break
        in_tie = np.zeros(pos.size, dtype=bool)
        in_tie[1:] = tie
        in_tie[:-1] |= tie
        keep = np.flatnonzero(in_tie)
        pos = pos[keep]
        fresh = np.ones(keep.size, dtype=bool)  # dense renumbering of the surviving classes
        fresh[1:] = ~tie[keep[1:] - 1] | (keep[1:] != keep[:-1] + 1)
        group = (np.cumsum(fresh) - 1).astype(np.uint64)
        # past the last bit, rows still tied are equal: they stand in row order already, each tie group together
        found = _packed_pass(perm, pos, group, big, offset) if offset < nbits else None
    return perm


def _packed_pass(perm: IntArray, pos: IntArray, group: U64Array, big: U64Array,
                 offset: int) -> tuple[BoolArray, int] | None:
    """One pass of ``_order_within_groups`` over the rows at ``pos`` of ``perm``: one sort of packed keys --
    class, the next bits of the string from ``offset``, position -- reordering ``perm`` there in place. Returns
    which neighbours are still tied and how many bits were read; None when no bits fitted beside class and
    position (the rows are then in class order, the ties left as they stood)."""
    bits = max(int(pos.size - 1).bit_length(), 1)
    gbits = max(int(group.max()).bit_length(), 1)
    width = 64 - bits - gbits
    rows = perm[pos]
    key = group << _U(64 - gbits)
    if width > 0:
        key |= _bits_at(big, rows, offset, width) << _U(bits)
    key |= np.arange(pos.size, dtype=np.uint64)
    key.sort()
    perm[pos] = rows[(key & _U((1 << bits) - 1)).astype(np.int64)]
    if width <= 0:
        return None
    head = key >> _U(bits)
    return head[1:] == head[:-1], width


#: ``_by_class_rows`` pads every class to the largest one's size: to at most this many times the rows
ROWS_PADDING = 2


def _by_class_rows(cls: IntArray, big: U64Array, offset: int, perm: IntArray) -> tuple[BoolArray, int] | None:
    """The first pass of ``_order_within_groups`` as one short sort per class, the classes being the rows of a
    matrix of keys -- the next bits of the row's string from ``offset``, then its place within its class --
    padded with all-ones keys (which sort last) and sorted along its rows. NumPy sorts a thousand keys several
    times faster per key than fifty thousand, and no key bits go to the class. None when there is one class,
    more than 2**16, or classes so uneven that the matrix would hold over ``ROWS_PADDING`` times the rows.

    Writes the permutation into ``perm``; returns which neighbours in it are still tied (same class, same bits)
    and how many bits were read."""
    m = cls.size
    counts = np.bincount(cls)
    n_cls, longest = counts.size, int(counts.max())
    if n_cls < 2 or n_cls > 1 << 16 or n_cls * longest > ROWS_PADDING * m:
        return None
    pbits = max((longest - 1).bit_length(), 1)
    width = min(64 - pbits, big.shape[1] * 64 - offset)
    by_cls = np.argsort(cls.astype(np.uint16), kind="stable")  # grouped by class, in row order (a radix sort)
    starts = np.zeros(n_cls, dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    first = np.repeat(starts, counts)  # of each grouped row, where its class starts
    within = np.arange(m, dtype=np.int64) - first
    grouped_cls = cls[by_cls]
    key = within.astype(np.uint64)
    if width > 0:
        key |= _bits_at(big, by_cls, offset, width) << _U(pbits)
    keys = np.full((n_cls, longest), ~_U(0), dtype=np.uint64)
    keys[grouped_cls, within] = key
    keys.sort(axis=1)
    if n_cls * longest == m:
        key = keys.reshape(-1)
    else:
        key = keys[np.arange(longest, dtype=np.int64) < counts[:, None]]
    perm[:] = by_cls[first + (key & _U((1 << pbits) - 1)).astype(np.int64)]
    head = key >> _U(pbits)
    tie = (head[1:] == head[:-1]) & (grouped_cls[1:] == grouped_cls[:-1])
    return tie, max(width, 0)


def _bits_at(big: U64Array, rows: IntArray, offset: int, width: int) -> U64Array:
    """``width`` bits of the given rows' big-endian bit strings from bit ``offset`` (ones past the end)."""
    col, shift = divmod(offset, 64)
    ncols = big.shape[1]
    top = big[rows, col] << _U(shift) if col < ncols else np.full(rows.size, ~_U(0), dtype=np.uint64)
    if shift:
        top |= (big[rows, col + 1] if col + 1 < ncols else _U((1 << 64) - 1)) >> _U(64 - shift)
    return top >> _U(64 - width)


class GroupedHashIndex:
    """Hash tables from (group, 64-bit key) to entry numbers, one small open-addressing table per group.

    Entries of a group share a contiguous table (at least 4 slots per entry, linear probing), so probes
    for rows that come grouped -- a run's rows, topic by topic -- stay within a few kilobytes of memory.
    Built and probed in bulk. Keys only pick candidates: ``find`` confirms each one with ``verify``.
    Each group also has a presence filter (one byte per bit, four bits per slot) addressed by the same hash
    bits as its table, two more of them: most absent keys stop at one lookup that stays near the group's others.
    """

    def __init__(self, group: IntArray, keys: U64Array, n_groups: int) -> None:
        m = keys.size
        counts = np.bincount(group, minlength=n_groups) if m else np.zeros(n_groups, dtype=np.int64)
        bits = np.maximum(np.ceil(np.log2(np.maximum(counts, 1) * float(SLOTS_PER_ENTRY))), 2).astype(np.int64)
        sizes = np.left_shift(1, bits)
        self._base = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
        self._shift = (64 - bits).astype(np.uint64)
        self._mask = (sizes - 1).astype(np.int64)
        total = int(sizes.sum()) if n_groups else 0
        # each slot holds a 32-bit tag of the key (0: free) and its entry, side by side
        self._table = np.zeros((total, 2), dtype=np.uint32)
        self._keys = self._table[:, 0]
        self._entry = self._table[:, 1]
        stored = keys | _U(1)
        tags = _tags(stored)
        self._filter = np.zeros(_FILTER_PER_SLOT * total, dtype=bool)
        self._filter_base = self._base << _FILTER_BITS
        self._filter_shift = self._shift - _U(_FILTER_BITS)
        at = self._filter_slot(group, stored)
        self._filter[at] = True
        local = self._local(group, at)
        pending = np.arange(m, dtype=np.int64)
        while pending.size:
            g = group[pending]
            at = self._base[g] + local[pending]
            free = self._keys[at] == 0
            claim, claim_at = pending[free], at[free]
            self._entry[claim_at] = claim  # of several claims on one slot, one wins
            won = self._entry[claim_at] == claim
            self._keys[claim_at[won]] = tags[claim[won]]
            losers = np.concatenate((pending[~free], claim[~won]))
            local[losers] = (local[losers] + 1) & self._mask[group[losers]]
            pending = losers

    def _filter_slot(self, group: IntArray, stored: U64Array) -> IntArray:
        """Each key's bit in its group's filter: the top bits of its hash, two more than pick its table slot."""
        mixed = stored * _SLOT_MULT  # one new array, updated in place (runs have millions of rows)
        mixed >>= self._filter_shift[group]
        at = mixed.view(np.int64)  # below 2**62: the same values
        at += self._filter_base[group]
        return at

    def _local(self, group: IntArray, filter_slot: IntArray) -> IntArray:
        """Each key's home slot within its group's table, from its filter slot (its top bits)."""
        local = filter_slot - self._filter_base[group]
        local >>= _FILTER_BITS
        return local

    def find(
        self, group: IntArray, keys: U64Array, verify: Callable[[IntArray, IntArray], BoolArray]
    ) -> IntArray:
        """Entry of each (group, key) (-1 when absent or group < 0); ``verify(rows, entries)`` confirms.

        Probes by key alone, then verifies every match in one batch; a match that fails (equal 64-bit
        keys, different strings: practically never) resumes probing past its slot.
        """
        n = keys.size
        found = np.full(n, -1, dtype=np.int64)
        if n == 0 or self._keys.size == 0:
            return found
        stored = keys | _U(1)
        at = self._filter_slot(group, stored)
        maybe = self._filter[at]
        if not bool((group >= 0).all()):
            maybe &= group >= 0
        probes = np.flatnonzero(maybe)
        group, stored = group[probes], stored[probes]
        local = self._local(group, at[probes])
        tags = _tags(stored)
        slot = self._probe(group, tags, local, None)
        todo = np.flatnonzero(slot >= 0)
        while todo.size:
            entries = self._entry[slot[slot >= 0]].astype(np.int64)
            rows = probes[todo]
            ok = verify(rows, entries)
            found[rows[ok]] = entries[ok]
            if ok.all():
                break
            todo = todo[~ok]  # equal keys, different strings: probe on past that slot
            local[todo] = (local[todo] + 1) & self._mask[group[todo]]
            slot = self._probe(group[todo], tags[todo], local, todo)
            todo = todo[slot >= 0]
        return found

    def _probe(
        self, group: IntArray, stored: npt.NDArray[np.uint32], local: IntArray, todo: IntArray | None
    ) -> IntArray:
        """Slot holding each probe's key, or -1 after reaching a free slot; ``local`` (indexed by ``todo``,
        or whole when None) is advanced past occupied slots holding other keys."""
        base = self._base[group]
        at = base + (local if todo is None else local[todo])
        slot_key = self._keys[at]
        result = np.where(slot_key == stored, at, -1)
        onward = np.flatnonzero((slot_key != 0) & (slot_key != stored))
        while onward.size:
            where = onward if todo is None else todo[onward]
            step = (local[where] + 1) & self._mask[group[onward]]
            local[where] = step
            at = base[onward] + step
            slot_key = self._keys[at]
            hit = slot_key == stored[onward]
            result[onward[hit]] = at[hit]
            onward = onward[(slot_key != 0) & ~hit]
        return result


def _tags(stored: U64Array) -> npt.NDArray[np.uint32]:
    """The 32-bit, never zero, tag of each key kept in the hash tables (the high half, best mixed)."""
    tags = (stored >> _U(32)).astype(np.uint32)
    tags |= np.uint32(1)
    return tags
