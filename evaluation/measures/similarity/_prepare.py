"""The ``similarity`` prepared input of S_sim and D_sim: the run's judged ranking plus, for every retrieved
document, the index of its SimHash fingerprint.

Fingerprints come from the ``fingerprints`` side input, or -- when only ``doc_texts`` is given -- from SimHash
of the texts (``evaluation.docsim.simhash``; computed once per evaluator). Only relevant documents enter the
measures (``I(i) I(j)`` in spec 5), and relevant documents are judged, so fingerprints are looked up once per
evaluator for the qrels' docnos and reached from each retrieved document's qrels entry; an unjudged document
gets index -1 (no fingerprint), as does a judged one missing from the file (its similarities are 0, spec
Appendix D).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from evaluation.docsim.vectors import DocumentTexts, DocumentVectors
from evaluation.judged_ranking import JudgedRanking
from evaluation.model import IntArray, Qrels

if TYPE_CHECKING:  # the side-input machinery imports the measures; only its types are needed here
    from evaluation.side_inputs import PrepareContext

NAME = "similarity"
_MEASURES = "S_sim/D_sim"


@dataclass(frozen=True, eq=False)
class SimilarityInputs:
    """What S_sim and D_sim read: the judged ranking, the fingerprints, and per retrieved document the index of
    its fingerprint in ``vectors`` (-1: none)."""

    docs: JudgedRanking
    vectors: DocumentVectors
    fingerprint: IntArray


def fingerprints_of(ctx: PrepareContext) -> DocumentVectors:
    """The evaluation's fingerprints: the ``fingerprints`` side input, else SimHash of ``doc_texts``."""
    side = ctx.side
    if "fingerprints" not in side and "doc_texts" in side:
        key = ("docsim", "simhash-of-doc-texts")
        if key not in ctx.cache:
            texts = side.get("doc_texts", _MEASURES)
            assert isinstance(texts, DocumentTexts)
            ctx.cache[key] = texts.fingerprints()
        found = ctx.cache[key]
    else:
        found = side.get("fingerprints", _MEASURES)
    assert isinstance(found, DocumentVectors)
    return found


def qrels_fingerprint_index(qrels: Qrels, vectors: DocumentVectors) -> IntArray:
    """For every ad hoc entry of the qrels, the index of its document's fingerprint (-1: none)."""
    adhoc = qrels.adhoc
    doc = adhoc.key - adhoc.topic * np.int64(max(1, qrels.docnos.size))
    by_doc = vectors.lookup(qrels.docnos)
    return np.append(by_doc[doc], -1).astype(np.int64)  # entry -1 reads the appended -1


def build_similarity(ctx: PrepareContext) -> SimilarityInputs:
    vectors = fingerprints_of(ctx)
    key = ("docsim", "entry-fingerprint", id(vectors))
    if key not in ctx.cache:
        ctx.cache[key] = (vectors, qrels_fingerprint_index(ctx.qrels, vectors))  # keeps vectors alive with its id
    per_entry: IntArray = ctx.cache[key][1]
    return SimilarityInputs(ctx.docs, vectors, per_entry[ctx.docs.entry])
