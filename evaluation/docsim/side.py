"""The document side-input kinds (listed in ``evaluation.side_registry``): ``fingerprints`` and ``doc_texts``;
and the ``similarity`` prepared input built from them (``evaluation.measures.similarity._prepare``).

Kept out of ``evaluation.docsim``'s package imports so the representation layer does not import the evaluator's
side-input machinery.
"""

from __future__ import annotations

from evaluation.docsim.readers import parse_doc_texts, parse_fingerprints
from evaluation.measures.similarity._prepare import NAME, build_similarity
from evaluation.side_inputs import Preparer, SideKind

FINGERPRINTS = SideKind(
    "fingerprints",
    parse_fingerprints,
    "SimHash fingerprints, one 'docno fingerprint' per line (hex, or 0b binary; 64 bits unless a '#bits=N'"
    " line comes first); read by S_sim, D_sim and similarity-built intent hierarchies",
)

DOC_TEXTS = SideKind(
    "doc_texts",
    parse_doc_texts,
    "document texts, 'docno<TAB>text' lines or JSON Lines {\"docno\", \"text\"}; fingerprinted with evalserve's"
    " SimHash recipe when no fingerprints are given, and the source of TF-IDF vectors",
)

SIMILARITY = Preparer(NAME, build_similarity)
