"""``compact_keys`` keeps the strings' byte-wise order and equalities, so ``unique_strings`` equals ``np.unique``."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.formats.keys import compact_keys, unique_strings
from evaluation.formats.lexer import words_of

# bytes 1-255 (fields never hold a zero byte); few distinct ones so that strings share prefixes and bits
BYTES = st.binary(min_size=1, max_size=30).map(lambda b: bytes(max(1, c) for c in b))
NEAR = st.lists(st.sampled_from([b"a", b"b", b"\xff", b"0", b"9", b"-", b"\x01"]), min_size=1, max_size=20).map(
    b"".join
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(BYTES, NEAR), min_size=1, max_size=40))
def test_compact_keys_order_as_the_strings(strings: list[bytes]) -> None:
    values = np.array(strings, dtype="S30")
    keys = [tuple(row) for row in compact_keys(words_of(values)).tolist()]
    for a, ka in zip(strings, keys, strict=True):
        for b, kb in zip(strings, keys, strict=True):
            assert (a < b) == (ka < kb) and (a == b) == (ka == kb)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(BYTES, NEAR), max_size=60))
def test_unique_strings_equals_numpy(strings: list[bytes]) -> None:
    values = np.array(strings, dtype="S30") if strings else np.zeros(0, dtype="S1")
    unique, inverse = unique_strings(values)
    want_unique, want_inverse = np.unique(values, return_inverse=True)
    assert unique.tolist() == want_unique.tolist()
    assert inverse.tolist() == want_inverse.ravel().tolist()


def test_wide_keys_span_several_words() -> None:
    rng = np.random.default_rng(7)
    values = np.array([bytes(rng.integers(1, 256, 24).tolist()) for _ in range(500)], dtype="S24")
    assert compact_keys(words_of(values)).shape[1] > 1
    unique, inverse = unique_strings(values)
    want_unique, want_inverse = np.unique(values, return_inverse=True)
    assert unique.tolist() == want_unique.tolist() and inverse.tolist() == want_inverse.ravel().tolist()
