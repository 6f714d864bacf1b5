"""S_sim and D_sim -- ``S_sim(variant=RA)@K``, ``D_sim(M=nDCG,variant=RA)@K`` (spec 5; Dou et al., IRJ 2019,
Sec. 4, Eqs. 5-7).

Redundancy of the top K (positions i, j <= min(K, n)):

    S@K = sum_{(i,j) in P} w_ij I(i) I(j) sim(d_i, d_j) / sum_{(i,j) in P} w_ij

with I(i) = 1 if grade(d_i) >= rel, sim = SimHash similarity ``1 - Hamming/f`` (spec B.3; 0 for a document
without fingerprint), rank weights w_ij = (K - (i + j)/2)/K ("R") or 1 ("N"), and pair sets "A" = all pairs of
positions (the denominator counts every pair, relevant or not: spec C-SIM-2) or "P" = pairs of consecutive
relevant documents, non-relevant ones skipped (S = 0 with fewer than two). Unordered pairs give the same ratio
as the paper's ordered ones. ``D@K = (M@K + 1 - S@K) / 2`` with M the catalogue's ``nDCG@K`` (default), ``Q@K``
or ``ERR@K`` computed exactly as those names are.

All topics at once: the relevant documents of the top K are listed flat (topic by topic, best first) and the
pairs are index ranges within each topic's segment; the "A" denominator has a closed form.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.measures.adhoc import err, ndcg, q_measure
from evaluation.measures.adhoc._shared import ratio
from evaluation.measures.base import MeasureDef, required_cutoff
from evaluation.measures.similarity._prepare import NAME as INPUT
from evaluation.measures.similarity._prepare import SimilarityInputs
from evaluation.model import FloatArray
from evaluation.params import Param
from evaluation.segments import expand_ranges

FAMILY = "similarity"
REFERENCE = "Dou, Yang, Li, Wen, Sakai. Low-cost, bottom-up measures for evaluating search result diversification." \
    " Information Retrieval Journal 2019, Sec. 4 (Eqs. 5-7); spec 5, 11.6"

VARIANT = Param(
    "variant",
    "choice",
    "RA",
    "rank weights R ((K - (i+j)/2)/K) or N (1), over all pairs of the top K (A) or consecutive relevant pairs (P)",
    choices=("RA", "RP", "NA", "NP"),
)
REL = Param("rel", "int", 1, "minimum grade that counts as relevant (I(i) = 1)", minimum=1)
METRIC = Param("M", "choice", "nDCG", "the traditional measure averaged with 1 - S_sim, computed as M@K",
               choices=("nDCG", "Q", "ERR"))
_TRADITIONAL = {"nDCG": ndcg.DEFINITION, "Q": q_measure.DEFINITION, "ERR": err.DEFINITION}


def redundancy(data: SimilarityInputs, variant: str, rel: int, cutoff: int) -> FloatArray:
    """S@K of every topic (spec 5)."""
    docs = data.docs
    k = float(cutoff)
    chosen = np.flatnonzero(docs.within(cutoff) & docs.relevant(rel))
    topic = docs.topic_of[chosen]
    rank = docs.rank[chosen].astype(np.float64)
    fingerprint = data.fingerprint[chosen]
    counts = np.bincount(topic, minlength=docs.n_topics)
    if variant[1] == "A":  # every pair of relevant documents, each element paired with those after it
        ends = np.concatenate(([0], np.cumsum(counts)))[1:][topic]
        second = expand_ranges(np.arange(chosen.size, dtype=np.int64) + 1, ends)
        first = np.repeat(np.arange(chosen.size, dtype=np.int64), ends - np.arange(chosen.size) - 1)
    else:  # consecutive relevant documents of one topic
        first = np.flatnonzero(topic[1:] == topic[:-1]) if chosen.size > 1 else np.zeros(0, dtype=np.int64)
        second = first + 1
    if variant[0] == "R":
        weight = (k - (rank[first] + rank[second]) / 2.0) / k
    else:
        weight = np.ones(first.size)
    sim = data.vectors.similarity(fingerprint[first], fingerprint[second])
    numerator = np.bincount(topic[first], weights=weight * sim, minlength=docs.n_topics)
    if variant[1] == "A":
        denominator = _all_pairs_weight(np.minimum(np.diff(docs.offsets), cutoff).astype(np.float64), k,
                                        variant[0] == "R")
        return ratio(numerator, denominator)
    return ratio(numerator, np.bincount(topic[first], weights=weight, minlength=docs.n_topics))


def _all_pairs_weight(n: FloatArray, k: float, ranked: bool) -> FloatArray:
    """Sum of w_ij over the unordered pairs of positions 1..n: P = n(n-1)/2 pairs whose rank sums add up to
    (n-1) n(n+1)/2, so sum (K - (i+j)/2)/K = P - (n-1) n (n+1) / (4K)."""
    pairs = n * (n - 1.0) / 2.0
    if not ranked:
        return pairs
    return np.asarray(pairs - (n - 1.0) * n * (n + 1.0) / (4.0 * k), dtype=np.float64)


def s_sim(data: SimilarityInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    cutoff = required_cutoff(cutoff)
    return redundancy(data, params["variant"], params["rel"], cutoff)


def d_sim(data: SimilarityInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    cutoff = required_cutoff(cutoff)
    docs = data.docs
    traditional = _TRADITIONAL[params["M"]].instance(cutoff=cutoff).compute(docs)
    mixed = (traditional + 1.0 - redundancy(data, params["variant"], params["rel"], cutoff)) / 2.0
    # a topic without relevant documents, or with an empty ranking, scores 0 (spec 1.3, Appendix D)
    scored = (docs.num_relevant() > 0) & (np.diff(docs.offsets) > 0)
    return np.asarray(np.where(scored, mixed, 0.0), dtype=np.float64)


S_SIM = MeasureDef(
    name="S_sim",
    family=FAMILY,
    summary="Redundancy of the top K: rank-weighted SimHash similarity of the relevant documents (lower is more"
            " diverse).",
    kernel=s_sim,
    params=(VARIANT, REL),
    cutoff="required",
    inputs=(INPUT,),
    reference=REFERENCE,
    formula="S@K = sum_{(i,j) in P} w_ij I(i) I(j) sim(d_i,d_j) / sum_{(i,j) in P} w_ij;"
            " w_ij = (K - (i+j)/2)/K (R) or 1 (N); P = all pairs (A) or consecutive relevant pairs (P)",
    notes="Needs --fingerprints (or --doc-texts, fingerprinted with evalserve's SimHash recipe). A document"
          " without a fingerprint has similarity 0. Spec default K = 20 (write S_sim@20).",
)

D_SIM = MeasureDef(
    name="D_sim",
    family=FAMILY,
    summary="Document-similarity diversity: the mean of a traditional measure and 1 - S_sim.",
    kernel=d_sim,
    params=(METRIC, VARIANT, REL),
    cutoff="required",
    inputs=(INPUT,),
    reference=REFERENCE,
    formula="D@K = (M@K + 1 - S@K) / 2, M in {nDCG, Q, ERR} computed as the catalogue's M@K",
    notes="0 for a topic without relevant documents or with an empty ranking; otherwise at least (1 - S)/2, so"
          " a ranking with no relevant document in the top K scores 0.5. Written n-DCG_RA etc. in Dou et al."
          " 2019. Needs --fingerprints (or --doc-texts). Spec default K = 20.",
)

DEFINITIONS = (S_SIM, D_SIM)
