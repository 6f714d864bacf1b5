"""``keys.order_within_groups`` and ``descending_within_groups`` against NumPy's stable lexsort (hypothesis), on
classes of even and uneven sizes -- so both the packed first pass and the one by rows of a matrix
(``_by_class_rows``) are taken -- with strings of one to three words that share leading bits, tie often, or tie
completely."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.formats import keys
from evaluation.formats.keys import descending_within_groups, order_within_groups

#: word values drawn from: few, so that strings tie; large ones set the top bits
WORDS = [0, 1, 2, 3, 0x00FF_0000_0000_0000, 0x7FFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0000, 0xFFFF_FFFF_FFFF_FFFF,
         0xFFFF_FFFF_FFFF_FFFE, 0x0123_4567_89AB_CDEF]


def lexsorted(cls: np.ndarray, big: np.ndarray) -> list[int]:
    """Rows by class, then the words most significant first; stable (np.lexsort is)."""
    columns = [big[:, j] for j in reversed(range(big.shape[1]))]
    return np.lexsort((*columns, cls)).tolist()


@st.composite
def classes_and_strings(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n_cls = draw(st.integers(1, 8))
    even = draw(st.booleans())
    size = draw(st.integers(1, 40))
    counts = [size if even else draw(st.integers(1, 40)) for _ in range(n_cls)]
    cls = np.repeat(np.arange(n_cls, dtype=np.int64), counts)
    cls = cls[np.array(draw(st.permutations(range(cls.size))), dtype=np.int64)]
    ncols = draw(st.integers(1, 3))
    shared = draw(st.sampled_from(WORDS))  # a leading word every row shares, sometimes
    words = st.lists(st.sampled_from(WORDS), min_size=cls.size * ncols, max_size=cls.size * ncols)
    big = np.array(draw(words), dtype=np.uint64).reshape(cls.size, ncols)
    if ncols > 1 and draw(st.booleans()):
        big[:, 0] = shared
    return cls, big


@settings(max_examples=400, deadline=None)
@given(classes_and_strings())
def test_order_within_groups_is_the_stable_lexsort(case: tuple[np.ndarray, np.ndarray]) -> None:
    cls, big = case
    assert order_within_groups(cls, big).tolist() == lexsorted(cls, big)


@settings(max_examples=200, deadline=None)
@given(classes_and_strings())
def test_descending_within_groups_is_the_stable_lexsort_of_complemented_strings(
        case: tuple[np.ndarray, np.ndarray]) -> None:
    cls, big = case
    order = np.argsort(cls, kind="stable")
    cls, big = cls[order], big[order]  # classes nondecreasing, as the function requires
    little = big.byteswap()  # its strings come as little-endian words
    assert descending_within_groups(cls, little).tolist() == lexsorted(cls, ~big)


@settings(max_examples=100, deadline=None)
@given(classes_and_strings())
def test_the_packed_first_pass_gives_the_same_order(case: tuple[np.ndarray, np.ndarray]) -> None:
    cls, big = case
    by_rows = order_within_groups(cls, big)
    padding = keys.ROWS_PADDING
    try:
        keys.ROWS_PADDING = 0  # no class layout qualifies: the packed pass alone
        packed = order_within_groups(cls, big)
    finally:
        keys.ROWS_PADDING = padding
    assert by_rows.tolist() == packed.tolist()


def test_a_run_sized_case_takes_the_rows_pass_and_matches() -> None:
    rng = np.random.default_rng(7)
    cls = rng.permutation(np.repeat(np.arange(50, dtype=np.int64), 1000))
    scores = rng.integers(0, 300, cls.size).astype(np.uint64) << np.uint64(40)  # many ties in the top bits
    big = np.stack([scores, rng.integers(0, 4, cls.size).astype(np.uint64)], axis=1)
    assert keys._by_class_rows(cls, big, 0, np.arange(cls.size, dtype=np.int64)) is not None
    assert order_within_groups(cls, big).tolist() == lexsorted(cls, big)
