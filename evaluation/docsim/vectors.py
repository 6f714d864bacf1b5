"""Document representations keyed by docno: SimHash fingerprints (``DocumentVectors``), texts
(``DocumentTexts``) and TF-IDF vectors (``TfidfVectors``).

All three keep their docnos as a sorted, unique numpy ``S`` (bytes) array, so ``lookup`` is a binary search and
the same docno always has the same index. ``DocumentVectors`` and ``TfidfVectors`` share the ``DocumentSimilarity``
protocol (``lookup`` + ``pairwise``), which is what similarity-based measures and hierarchy construction read
(spec 4.2: ``sim=simhash`` is the default, ``sim=tfidf`` the alternative).

Documents without a representation have index -1; every similarity involving one is 0 (spec Appendix D,
S_sim row: "missing fingerprint -> treat that document's similarities as 0"), except that ``pairwise`` puts 1 on
the diagonal for every document (a document is identical to itself).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from evaluation.docsim.simhash import DEFAULT_BITS, U64Array, check_bits, popcount, simhash, term_counts, tokenize

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
DocnosLike = Sequence[str] | Sequence[bytes] | Sequence[str | bytes] | np.ndarray


def as_docnos(docnos: DocnosLike | Iterable[str | bytes]) -> np.ndarray:
    """Docnos as a numpy ``S`` array (str values encoded as UTF-8)."""
    if isinstance(docnos, np.ndarray) and docnos.dtype.kind == "S":
        return docnos
    values = [d.encode("utf-8") if isinstance(d, str) else bytes(d) for d in docnos]
    return np.array(values, dtype=bytes) if values else np.zeros(0, dtype="S1")


def _lookup(sorted_docnos: np.ndarray, docnos: DocnosLike) -> IntArray:
    wanted = as_docnos(docnos)
    if sorted_docnos.size == 0 or wanted.size == 0:
        return np.full(wanted.size, -1, dtype=np.int64)
    at = np.searchsorted(sorted_docnos, wanted)
    safe = np.minimum(at, sorted_docnos.size - 1)
    return np.where(sorted_docnos[safe] == wanted, safe, -1).astype(np.int64)


class DocumentSimilarity(Protocol):
    """What similarity consumers need: indices of docnos (-1 = unknown) and a similarity matrix over indices."""

    @property
    def docnos(self) -> np.ndarray: ...

    def lookup(self, docnos: DocnosLike) -> IntArray: ...

    def pairwise(self, indices: npt.ArrayLike) -> FloatArray: ...


@dataclass(frozen=True, eq=False)
class DocumentVectors:
    """SimHash fingerprints per document: ``docnos`` sorted unique (``S`` dtype), ``fingerprints`` uint64 aligned
    with them, ``bits`` the fingerprint width f (every fingerprint < 2^f)."""

    docnos: np.ndarray
    fingerprints: U64Array
    bits: int = DEFAULT_BITS
    name: str = "<fingerprints>"

    def __post_init__(self) -> None:
        check_bits(self.bits)
        if self.docnos.shape != self.fingerprints.shape or self.docnos.ndim != 1:
            # internal: readers and build give aligned 1-d arrays
            raise ValueError("docnos and fingerprints must be 1-d arrays of the same length")
        if self.fingerprints.dtype != np.uint64:
            raise ValueError("fingerprints must be uint64")  # internal: readers and build give uint64 fingerprints
        if self.docnos.size > 1 and not bool((self.docnos[1:] > self.docnos[:-1]).all()):
            # internal: readers and build sort and deduplicate docnos
            raise ValueError("docnos must be sorted and unique (use DocumentVectors.build)")
        if self.bits < 64 and bool((self.fingerprints >> np.uint64(self.bits)).any()):
            # internal: the reader refuses values wider than #bits, SimHash masks to f bits
            raise ValueError(f"a fingerprint has bits beyond the width {self.bits}")

    @classmethod
    def build(cls, docnos: DocnosLike, fingerprints: npt.ArrayLike, bits: int = DEFAULT_BITS,
              name: str = "<fingerprints>") -> DocumentVectors:
        """From docnos in any order; a repeated docno keeps its first fingerprint."""
        keys = as_docnos(docnos)
        values = np.asarray(fingerprints, dtype=np.uint64).reshape(-1)
        if keys.shape != values.shape:
            # internal: callers pass one fingerprint per docno
            raise ValueError("docnos and fingerprints differ in length")
        unique, first = np.unique(keys, return_index=True)
        return cls(unique, values[first].copy(), check_bits(bits), name)

    @classmethod
    def from_texts(cls, texts: DocumentTexts, bits: int = DEFAULT_BITS) -> DocumentVectors:
        """SimHash fingerprints of every text (``evaluation.docsim.simhash`` recipe)."""
        return cls(texts.docnos, simhash(texts.texts, bits), bits, texts.name)

    def __len__(self) -> int:
        return int(self.docnos.size)

    def lookup(self, docnos: DocnosLike) -> IntArray:
        """Index of each docno in ``docnos`` (-1 when it has no fingerprint)."""
        return _lookup(self.docnos, docnos)

    def fingerprint(self, docno: str | bytes) -> int | None:
        """One document's fingerprint, or None."""
        i = int(self.lookup([docno])[0])
        return None if i < 0 else int(self.fingerprints[i])

    def similarity(self, indices_a: npt.ArrayLike, indices_b: npt.ArrayLike) -> FloatArray:
        """``1 - Hamming/f`` of the documents at ``indices_a`` and ``indices_b`` (broadcast); 0 where either is -1."""
        a = np.asarray(indices_a, dtype=np.int64)
        b = np.asarray(indices_b, dtype=np.int64)
        if self.fingerprints.size == 0:
            return np.zeros(np.broadcast(a, b).shape)
        fa = self.fingerprints[np.maximum(a, 0)]
        fb = self.fingerprints[np.maximum(b, 0)]
        sim = 1.0 - popcount(np.bitwise_xor(fa, fb)) / float(self.bits)
        return np.asarray(np.where((a >= 0) & (b >= 0), sim, 0.0), dtype=np.float64)

    def pairwise(self, indices: npt.ArrayLike) -> FloatArray:
        """(n, n) SimHash similarity matrix of the documents at ``indices``; rows and columns of -1 are 0 except
        the diagonal, which is 1."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        out = self.similarity(idx[:, None], idx[None, :])
        np.fill_diagonal(out, 1.0)
        return out

    def subset(self, docnos: DocnosLike) -> DocumentVectors:
        """The fingerprints of those of ``docnos`` that have one."""
        idx = self.lookup(docnos)
        keep = np.unique(idx[idx >= 0])
        return DocumentVectors(self.docnos[keep], self.fingerprints[keep], self.bits, self.name)


@dataclass(frozen=True, eq=False)
class DocumentTexts:
    """Document texts: ``docnos`` sorted unique (``S`` dtype) and ``texts`` aligned with them."""

    docnos: np.ndarray
    texts: tuple[str, ...]
    name: str = "<doc-texts>"

    def __post_init__(self) -> None:
        if self.docnos.ndim != 1 or self.docnos.size != len(self.texts):
            raise ValueError("docnos and texts differ in length")  # internal: readers and build give one text per docno
        if self.docnos.size > 1 and not bool((self.docnos[1:] > self.docnos[:-1]).all()):
            # internal: readers and build sort and deduplicate docnos
            raise ValueError("docnos must be sorted and unique (use DocumentTexts.build)")

    @classmethod
    def build(cls, pairs: Iterable[tuple[str | bytes, str]], name: str = "<doc-texts>") -> DocumentTexts:
        """From (docno, text) pairs in any order; a repeated docno keeps its first text."""
        items = list(pairs)
        keys = as_docnos([d for d, _ in items])
        unique, first = np.unique(keys, return_index=True)
        return cls(unique, tuple(items[i][1] for i in first.tolist()), name)

    def __len__(self) -> int:
        return int(self.docnos.size)

    def lookup(self, docnos: DocnosLike) -> IntArray:
        return _lookup(self.docnos, docnos)

    def text(self, docno: str | bytes) -> str | None:
        i = int(self.lookup([docno])[0])
        return None if i < 0 else self.texts[i]

    def fingerprints(self, bits: int = DEFAULT_BITS) -> DocumentVectors:
        return DocumentVectors.from_texts(self, bits)

    def tfidf(self, idf: Mapping[str, float] | None = None) -> TfidfVectors:
        return tfidf_vectors(self, idf)


def idf_table(texts: Iterable[str]) -> dict[str, float]:
    """Smoothed inverse document frequencies of a reference collection: ``ln((1 + N) / (1 + df(t))) + 1``."""
    df: Counter[str] = Counter()
    n = 0
    for text in texts:
        n += 1
        df.update(set(tokenize(text)))
    return {t: math.log((1.0 + n) / (1.0 + c)) + 1.0 for t, c in df.items()}


@dataclass(frozen=True, eq=False)
class TfidfVectors:
    """L2-normalised TF-IDF vectors (a scipy CSR matrix, one row per docno) over ``vocabulary``."""

    docnos: np.ndarray
    matrix: Any  # scipy.sparse.csr_matrix, shape (len(docnos), len(vocabulary))
    vocabulary: tuple[str, ...]
    name: str = "<tfidf>"

    def __len__(self) -> int:
        return int(self.docnos.size)

    def lookup(self, docnos: DocnosLike) -> IntArray:
        return _lookup(self.docnos, docnos)

    def pairwise(self, indices: npt.ArrayLike) -> FloatArray:
        """(n, n) cosine similarities of the documents at ``indices`` (-1: 0 off the diagonal; diagonal 1)."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        known = idx >= 0
        out = np.zeros((idx.size, idx.size))
        if known.any():
            rows = self.matrix[idx[known]]
            block = np.asarray((rows @ rows.T).toarray(), dtype=np.float64)
            where = np.flatnonzero(known)
            out[np.ix_(where, where)] = np.clip(block, 0.0, 1.0)
        np.fill_diagonal(out, 1.0)
        return out


def tfidf_vectors(texts: DocumentTexts, idf: Mapping[str, float] | None = None) -> TfidfVectors:
    """TF-IDF vectors of ``texts``: weight ``tf(t, d) * idf(t)`` with raw term counts (tokens as for SimHash),
    rows L2-normalised so that the dot product is the cosine similarity. ``idf`` defaults to ``idf_table`` of
    the texts themselves; with a reference table (spec 4.2: DOU19 used ClueWeb09 Category B), tokens absent from
    it are dropped. A text with no weighted token is the zero vector (cosine 0 with everything)."""
    from scipy.sparse import csr_matrix

    table = idf if idf is not None else idf_table(texts.texts)
    found = term_counts(texts.texts, keep=lambda token: bool(table.get(token)))
    idf_of_column = np.array([float(table[t]) for t in found.vocabulary], dtype=np.float64)
    values = found.counts * idf_of_column[found.cols]
    row_idx = found.rows
    norm = np.sqrt(np.bincount(row_idx, weights=values * values, minlength=len(texts)))
    if values.size:
        values = values / norm[row_idx]
    matrix = csr_matrix((values, (row_idx, found.cols)), shape=(len(texts), max(len(found.vocabulary), 1)))
    return TfidfVectors(texts.docnos, matrix, found.vocabulary, texts.name)
