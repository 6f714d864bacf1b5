"""SimHash fingerprints of document texts and their similarity (spec Appendix B.3; Charikar, STOC 2002).

The recipe is fixed so that fingerprints computed anywhere agree bit for bit (spec 4.2 leaves it to the input;
this is evalserve's):

1. **Text normalisation**: Unicode NFKC, then ``str.casefold()``.
2. **Tokens**: maximal runs of Unicode letters and digits (the regular expression ``[^\\W_]+``); everything else
   (punctuation, whitespace, underscores, symbols) separates tokens.
3. **Features and weights**: every distinct token of the text, weighted by its count in the text (term
   frequency).
4. **Feature hash**: the 8-byte BLAKE2b digest (``hashlib.blake2b(token.encode("utf-8"), digest_size=8)``) read
   as a big-endian unsigned 64-bit integer ``h(t)``. With ``bits = f < 64`` only its ``f`` low bits are used.
5. **Fingerprint**: ``V_j = sum_t tf(t) * (+1 if bit j of h(t) is set else -1)`` for ``j = 0..f-1``; bit ``j``
   (``j = 0`` the least significant) of the fingerprint is 1 iff ``V_j > 0``. Ties (``V_j = 0``) and texts
   without tokens give 0 bits.

Similarity (B.3): ``sim(a, b) = 1 - popcount(a XOR b) / f``, vectorised over numpy arrays.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evaluation.problems import OptionError

U64Array = npt.NDArray[np.uint64]
FloatArray = npt.NDArray[np.float64]

#: fingerprint width used unless told otherwise (spec 4.2: f = 64)
DEFAULT_BITS = 64
_TOKEN = re.compile(r"[^\W_]+")
_BYTE_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)
#: documents fingerprinted per matrix product (bounds the memory of the sign matrix and term counts)
_BATCH = 4096


def tokenize(text: str) -> list[str]:
    """The tokens of a text, in order (steps 1-2 of the recipe above)."""
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())


@dataclass(frozen=True)
class TermCounts:
    """Sparse term frequencies of several texts, as COO triplets in text order (each text's distinct tokens in
    order of first occurrence); ``vocabulary[c]`` is the token of column ``c``."""

    rows: npt.NDArray[np.int64]
    cols: npt.NDArray[np.int64]
    counts: npt.NDArray[np.int64]
    vocabulary: tuple[str, ...]


def term_counts(texts: Iterable[str], keep: Callable[[str], bool] | None = None) -> TermCounts:
    """Count every text's tokens (SimHash features, TF-IDF terms); ``keep`` drops tokens before they get a
    column."""
    vocab: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    counts: list[int] = []
    for i, text in enumerate(texts):
        for token, count in Counter(tokenize(text)).items():
            if keep is not None and not keep(token):
                continue
            rows.append(i)
            cols.append(vocab.setdefault(token, len(vocab)))
            counts.append(count)
    return TermCounts(np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64),
                      np.array(counts, dtype=np.int64), tuple(vocab))


def feature_hash(token: str) -> int:
    """The 64-bit hash of a token (step 4): BLAKE2b with an 8-byte digest, big-endian."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "big")


def check_bits(bits: int) -> int:
    """``bits`` if it is a valid fingerprint width (1..64), else OptionError."""
    if not isinstance(bits, (int, np.integer)) or not 1 <= int(bits) <= 64:
        raise OptionError(f"fingerprint width must be an integer in 1..64, not {bits!r}")
    return int(bits)


def simhash(texts: Iterable[str], bits: int = DEFAULT_BITS) -> U64Array:
    """SimHash fingerprints of ``texts`` (one uint64 per text, ``bits`` low bits used), by the recipe above."""
    f = check_bits(bits)
    batch: list[str] = []
    parts: list[U64Array] = []
    hashes: dict[str, int] = {}
    for text in texts:
        batch.append(text)
        if len(batch) == _BATCH:
            parts.append(_simhash_batch(batch, f, hashes))
            batch = []
    if batch or not parts:
        parts.append(_simhash_batch(batch, f, hashes))
    return np.concatenate(parts).astype(np.uint64, copy=False)


def _simhash_batch(texts: Sequence[str], bits: int, hashes: dict[str, int]) -> U64Array:
    n = len(texts)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    found = term_counts(texts)
    if not found.vocabulary:
        return np.zeros(n, dtype=np.uint64)
    for token in found.vocabulary:
        if token not in hashes:
            hashes[token] = feature_hash(token)
    feature = np.array([hashes[t] for t in found.vocabulary], dtype=np.uint64)
    shifts = np.arange(bits, dtype=np.uint64)
    signs = (((feature[:, None] >> shifts) & np.uint64(1)).astype(np.int64) * 2 - 1)  # (V, f) of +-1
    # V[i, j] = sum_t tf(i, t) * sign(t, j): a sparse (n, V) by dense (V, f) product, exact in int64
    from scipy.sparse import csr_matrix

    tf = csr_matrix((found.counts, (found.rows, found.cols)), shape=(n, len(found.vocabulary)))
    votes = np.asarray(tf @ signs)
    set_bits = (votes > 0).astype(np.uint64)
    return np.asarray((set_bits << shifts).sum(axis=1, dtype=np.uint64), dtype=np.uint64)


def popcount(values: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Number of set bits of every uint64 value."""
    x = np.asarray(values, dtype=np.uint64)
    counter = getattr(np, "bitwise_count", None)
    if counter is not None:
        counted: npt.NDArray[np.int64] = np.asarray(counter(x), dtype=np.int64)
        return counted
    as_bytes = np.ascontiguousarray(x).reshape(-1).view(np.uint8).reshape(-1, 8)
    summed: npt.NDArray[np.int64] = _BYTE_POPCOUNT[as_bytes].sum(axis=1, dtype=np.int64).reshape(x.shape)
    return summed


def hamming(fingerprints_a: npt.ArrayLike, fingerprints_b: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Hamming distance of fingerprints, elementwise with numpy broadcasting."""
    a = np.asarray(fingerprints_a, dtype=np.uint64)
    b = np.asarray(fingerprints_b, dtype=np.uint64)
    return popcount(np.bitwise_xor(a, b))


def similarity(fingerprints_a: npt.ArrayLike, fingerprints_b: npt.ArrayLike, bits: int = DEFAULT_BITS) -> FloatArray:
    """SimHash similarity ``1 - popcount(a XOR b) / bits`` (spec B.3), elementwise with numpy broadcasting.

    ``similarity(fp[:, None], fp[None, :])`` is the full pairwise matrix. Fingerprints must fit in ``bits``.
    """
    f = check_bits(bits)
    return np.asarray(1.0 - hamming(fingerprints_a, fingerprints_b) / float(f), dtype=np.float64)
