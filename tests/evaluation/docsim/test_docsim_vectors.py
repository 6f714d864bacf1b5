"""DocumentVectors (fingerprints keyed by docno), DocumentTexts and TF-IDF vectors."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.docsim import DocumentTexts, DocumentVectors, idf_table, simhash, tfidf_vectors


def test_build_sorts_and_lookup_finds() -> None:
    v = DocumentVectors.build(["d3", "d1", "d2", "d1"], [0b11, 0b01, 0b10, 0b00], bits=2)
    assert v.docnos.tolist() == [b"d1", b"d2", b"d3"]
    assert v.fingerprints.tolist() == [0b01, 0b10, 0b11], "a repeated docno keeps its first value"
    assert v.lookup(["d2", "dx", b"d3", "d0", "d9"]).tolist() == [1, -1, 2, -1, -1]
    assert v.fingerprint("d3") == 3 and v.fingerprint("nope") is None
    assert len(v) == 3


def test_pairwise_with_missing_documents() -> None:
    v = DocumentVectors.build(["a", "b"], [0b1111, 0b0011], bits=4)
    m = v.pairwise(v.lookup(["a", "zz", "b"]))
    np.testing.assert_array_equal(m, [[1, 0, 0.5], [0, 1, 0], [0.5, 0, 1]])
    assert v.similarity([0, -1], [1, 1]).tolist() == [0.5, 0.0]


def test_invalid_vectors_are_refused() -> None:
    with pytest.raises(ValueError, match="beyond the width"):
        DocumentVectors.build(["a"], [0b100], bits=2)
    with pytest.raises(ValueError, match="sorted"):
        DocumentVectors(np.array([b"b", b"a"]), np.array([1, 2], dtype=np.uint64))
    empty = DocumentVectors.build([], [])
    assert empty.lookup(["a"]).tolist() == [-1] and empty.pairwise([-1]).tolist() == [[1.0]]


def test_fingerprints_from_texts() -> None:
    texts = DocumentTexts.build([("b", "green apples and pears"), ("a", "red apples")])
    v = texts.fingerprints()
    assert v.docnos.tolist() == [b"a", b"b"]
    assert v.fingerprints.tolist() == simhash(["red apples", "green apples and pears"]).tolist()
    assert texts.text("b") == "green apples and pears" and texts.text("c") is None


def test_tfidf_cosine() -> None:
    texts = DocumentTexts.build([("a", "apple banana"), ("b", "apple banana"), ("c", "cherry"), ("d", "apple")])
    vec = tfidf_vectors(texts)
    m = vec.pairwise(vec.lookup(["a", "b", "c", "d", "x"]))
    assert m[0, 1] == pytest.approx(1.0) and m[0, 2] == 0.0 and m[4, 0] == 0.0 and m[4, 4] == 1.0
    idf = idf_table(texts.texts)
    assert idf["cherry"] > idf["apple"]
    wa, wb = idf["apple"], idf["banana"]
    assert m[0, 3] == pytest.approx(wa / np.hypot(wa, wb))
    # with a reference table, unknown tokens are dropped
    only = tfidf_vectors(texts, {"apple": 1.0})
    assert only.pairwise([0, 2]).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert only.pairwise([0, 3])[0, 1] == pytest.approx(1.0)
