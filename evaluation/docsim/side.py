"""The document side-input kinds (listed in ``evaluation.side_registry``): ``fingerprints`` and ``doc_texts``.

Kept out of ``evaluation.docsim``'s package imports so the representation layer does not import the evaluator's
side-input machinery.
"""

from __future__ import annotations

from evaluation.docsim.readers import parse_doc_texts, parse_fingerprints
from evaluation.side_inputs import SideKind

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
