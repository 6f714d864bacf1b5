"""SimHash (spec Appendix B.3 and evalserve's recipe in ``evaluation.docsim.simhash``): similarity is
``1 - popcount(a XOR b) / f``, identical texts give identical fingerprints, and the recipe is pinned."""

from __future__ import annotations

import hashlib
import importlib

import numpy as np
import pytest

from evaluation.docsim import feature_hash, hamming, popcount, simhash, similarity, tokenize

#: TV-HIER-BUILD-1 (spec 4.9): six 8-bit fingerprints and their pairwise similarities
TV = {"d1": 0b00111111, "d2": 0b01110010, "d3": 0b00011111, "d4": 0b11001011, "d5": 0b00011001, "d6": 0b01110001}
TABLE = [
    [1, 0.5, 0.875, 0.375, 0.625, 0.5],
    [0.5, 1, 0.375, 0.375, 0.375, 0.75],
    [0.875, 0.375, 1, 0.5, 0.75, 0.375],
    [0.375, 0.375, 0.5, 1, 0.5, 0.375],
    [0.625, 0.375, 0.75, 0.5, 1, 0.625],
    [0.5, 0.75, 0.375, 0.375, 0.625, 1],
]


def test_appendix_b3_example() -> None:
    assert hamming(0b00111111, 0b00011111) == 1
    assert similarity(0b00111111, 0b00011111, bits=8) == pytest.approx(0.875, abs=1e-12)


def test_tv_hier_build_1_similarity_table() -> None:
    fp = np.array(list(TV.values()), dtype=np.uint64)
    np.testing.assert_allclose(similarity(fp[:, None], fp[None, :], bits=8), TABLE, atol=1e-12)


@pytest.mark.parametrize("flips", [0, 1, 2, 7, 31, 64])
def test_flipping_k_bits_lowers_similarity_by_k_over_f(flips: int) -> None:
    rng = np.random.default_rng(flips)
    value = np.uint64(rng.integers(0, 2**63)) * np.uint64(2) + np.uint64(1)
    positions = rng.choice(64, size=flips, replace=False)
    mask = np.uint64(sum(1 << int(p) for p in positions))
    assert int(hamming(value, value ^ mask)) == flips
    assert float(similarity(value, value ^ mask)) == pytest.approx(1 - flips / 64, abs=1e-15)


def test_popcount_of_all_ones_and_extremes() -> None:
    values = np.array([0, 1, 2**64 - 1, 2**63, 0x5555555555555555], dtype=np.uint64)
    assert popcount(values).tolist() == [0, 1, 64, 1, 32]


def test_identical_texts_have_similarity_one() -> None:
    texts = ["The quick brown fox.", "The quick brown fox.", "the QUICK, brown -- fox", "Lorem ipsum dolor sit"]
    fp = simhash(texts)
    assert fp.dtype == np.uint64 and fp.shape == (4,)
    assert similarity(fp[0], fp[1]) == 1.0
    assert similarity(fp[0], fp[2]) == 1.0, "case and punctuation do not change the tokens"
    assert similarity(fp[0], fp[3]) < 1.0


def test_recipe_is_pinned() -> None:
    assert tokenize("Ça  va? l'été_2019, ＡＢＣ!") == ["ça", "va", "l", "été", "2019", "abc"]
    digest = hashlib.blake2b(b"fox", digest_size=8).digest()
    assert feature_hash("fox") == int.from_bytes(digest, "big")
    # one token: the fingerprint is its hash; two equal-weight tokens: the bits both have
    assert int(simhash(["fox"])[0]) == feature_hash("fox")
    assert int(simhash(["fox fox dog"])[0]) == feature_hash("fox")
    assert int(simhash(["fox dog"])[0]) == feature_hash("fox") & feature_hash("dog")
    assert int(simhash(["fox"], bits=8)[0]) == feature_hash("fox") & 0xFF
    assert simhash(["", "!!!"]).tolist() == [0, 0]
    assert simhash([]).shape == (0,)


def test_batches_give_the_same_fingerprints(monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("evaluation.docsim.simhash")

    texts = [f"document {i} about topic {i % 7} and {i % 3}" for i in range(25)]
    whole = simhash(texts)
    monkeypatch.setattr(module, "_BATCH", 4)
    assert module.simhash(texts).tolist() == whole.tolist()


def test_similar_texts_are_more_similar_than_unrelated_ones() -> None:
    base = " ".join(f"word{i}" for i in range(200))
    near = base + " extra words here"
    far = " ".join(f"other{i}" for i in range(200))
    fp = simhash([base, near, far])
    assert similarity(fp[0], fp[1]) > 0.9 > similarity(fp[0], fp[2])


def test_bad_width() -> None:
    with pytest.raises(ValueError, match=r"1\.\.64"):
        similarity(1, 2, bits=65)
    with pytest.raises(ValueError, match=r"1\.\.64"):
        simhash(["x"], bits=0)


def test_popcount_without_numpy_bitwise_count(monkeypatch: pytest.MonkeyPatch) -> None:
    values = np.array([[0, 2**64 - 1], [0xF0F0, 7]], dtype=np.uint64)
    expected = popcount(values).tolist()
    monkeypatch.delattr(np, "bitwise_count", raising=False)
    assert popcount(values).tolist() == expected == [[0, 64], [8, 3]]
