"""Document representations for similarity-based measures and intent hierarchies (spec 4.2, 5, Appendix B.3).

- ``simhash(texts, bits=64)``: SimHash fingerprints with a fixed, documented recipe (``docsim.simhash``);
  ``similarity(a, b, bits=64)``: ``1 - popcount(a XOR b) / f``, vectorised; ``hamming``, ``popcount``.
- ``DocumentVectors``: fingerprints keyed by docno (``lookup`` -> indices, -1 missing; ``pairwise`` ->
  similarity matrix); ``DocumentTexts``; ``TfidfVectors`` / ``tfidf_vectors`` (cosine alternative, spec 4.2).
- Readers of the side inputs ``fingerprints`` and ``doc_texts`` (``parse_fingerprints``, ``parse_doc_texts``)
  and ``format_fingerprints`` to write a fingerprint file.
- ``synthesise_fingerprints(qrels, rng, ...)``: seeded fingerprints in which documents relevant to the same
  intent are similar (``docsim.synthetic``).
"""

from evaluation.docsim.readers import (
    format_fingerprints,
    parse_doc_texts,
    parse_fingerprints,
    read_doc_texts,
    read_fingerprints,
)
from evaluation.docsim.simhash import DEFAULT_BITS, feature_hash, hamming, popcount, simhash, similarity, tokenize
from evaluation.docsim.synthetic import synthesise_fingerprints
from evaluation.docsim.vectors import (
    DocumentSimilarity,
    DocumentTexts,
    DocumentVectors,
    TfidfVectors,
    idf_table,
    tfidf_vectors,
)

__all__ = [
    "DEFAULT_BITS",
    "DocumentSimilarity",
    "DocumentTexts",
    "DocumentVectors",
    "TfidfVectors",
    "feature_hash",
    "format_fingerprints",
    "hamming",
    "idf_table",
    "parse_doc_texts",
    "parse_fingerprints",
    "popcount",
    "read_doc_texts",
    "read_fingerprints",
    "simhash",
    "similarity",
    "synthesise_fingerprints",
    "tfidf_vectors",
    "tokenize",
]
