"""trec_eval's averaged nDCG variants -- ``nDCGRel`` (trec_eval ``ndcg_rel``: nDCG averaged over the relevant
documents) and ``RnDCG`` (trec_eval ``Rndcg``: nDCG averaged at the ranks where the ideal gain changes); m_ndcg_rel.c,
m_Rndcg.c. Gains are the grades, as trec_eval's ``ndcg`` (negative grades and unjudged documents: 0), or ``gains=``
(trec_eval's ``ndcg_rel.1=3,2=9``); the ideal list is every positive judged gain sorted descending.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, GAINS, REL, FloatArray, ratio
from evaluation.measures.adhoc.g_measures import ideal_gains, retrieved_gain
from evaluation.measures.base import MeasureDef


def _cumulative(data: JudgedRanking, params: Mapping[str, Any]
                ) -> tuple[FloatArray, FloatArray, np.ndarray, np.ndarray, np.ndarray, FloatArray]:
    """Running DCG of the run, running DCG of the ideal list, each topic's positive ideal length m, its
    ranking's length n, the retrieved gains and the ideal gains."""
    gain = retrieved_gain(data, params["gains"])
    dcg = data.segment_cumsum(gain / np.log2(data.rank + 1.0))
    ideal = ideal_gains(data, params["gains"])
    positive = np.maximum(ideal, 0.0)
    idcg = data.segment_cumsum(positive / np.log2(data.ideal_rank + 1.0), ideal=True)
    m = data.segment_sum(ideal > 0, ideal=True).astype(np.int64)
    n = np.diff(data.offsets)
    return dcg, idcg, m, n, gain, ideal


def _dcg_at(data: JudgedRanking, dcg: FloatArray, topic: np.ndarray, depth: np.ndarray) -> FloatArray:
    """The run's DCG over its first ``depth`` documents (0 for depth 0) for each (topic, depth) pair."""
    at = data.offsets[:-1][topic] + depth - 1
    return np.where(depth > 0, dcg[np.maximum(at, 0)] if dcg.size else 0.0, 0.0)


def ndcg_rel(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    """Sum of DCG(i)/IDCG(min(i, m)) over the retrieved documents of positive gain, plus DCG(n)/IDCG(m) for each
    one not retrieved; over m (0 when that sum is not positive)."""
    dcg, idcg, m, n, gain, _ideal = _cumulative(data, params)
    scoring = gain > 0
    topic = data.topic_of[scoring]
    depth = np.minimum(data.rank[scoring], m[topic])
    terms = dcg[scoring] / idcg[data.ideal_offsets[:-1][topic] + depth - 1]
    total = np.bincount(topic, weights=terms, minlength=data.n_topics)
    missed = m - np.bincount(topic, minlength=data.n_topics)
    has = m > 0
    ideal_all = np.ones(data.n_topics)
    ideal_all[has] = idcg[data.ideal_offsets[:-1][has] + m[has] - 1]
    every = np.arange(data.n_topics)
    total = total + np.where(has, missed * _dcg_at(data, dcg, every, n) / ideal_all, 0.0)
    return np.where(total > 0, ratio(total, m), 0.0)


def r_ndcg(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    """Mean of nDCG at each rank p where the ideal gain changes (p-1 documents seen; p = m+1 included), and
    at n when the run is at least m+2 long (trec_eval's implied change at the end of the ranking)."""
    dcg, idcg, m, n, _gain, ideal = _cumulative(data, params)
    ideal_topic, position = data.ideal_topic_of, data.ideal_rank
    grades = ideal
    previous = np.concatenate(([0.0], grades[:-1])) if grades.size else grades
    has = (m > 0) & (data.num_relevant(params["rel"]) > 0)
    change = (grades > 0) & (position >= 2) & (grades != previous) & has[ideal_topic]
    ends = np.flatnonzero(has)
    extra = ends[n[ends] >= m[ends] + 2]
    steps = np.concatenate((ideal_topic[change], ends))
    at_step = np.concatenate((position[change], m[ends] + 1))  # the rank p where the ideal gain changes
    topic = np.concatenate((steps, extra))
    at = np.concatenate((at_step, m[extra] + 1))
    seen = np.concatenate((np.minimum(at_step - 1, n[steps]), n[extra]))  # documents of the run seen
    ideal_depth = at - 1
    terms = _dcg_at(data, dcg, topic, seen) / idcg[data.ideal_offsets[:-1][topic] + ideal_depth - 1]
    order = np.lexsort((np.arange(topic.size), topic))  # per topic in rank order, the end-of-run term last
    total = np.bincount(topic[order], weights=terms[order], minlength=data.n_topics)
    count = np.bincount(topic, minlength=data.n_topics)
    return np.where(has, ratio(total, count), 0.0)


NDCG_REL = MeasureDef(
    name="nDCGRel",
    family=FAMILY,
    summary="nDCG averaged over the relevant documents (an unretrieved one counts the run's final nDCG).",
    kernel=ndcg_rel,
    params=(GAINS,),
    cutoff="none",
    reference="trec_eval ndcg_rel (experimental)",
    default_follows="trec_eval 10.0",
    formula="nDCGRel = (1/m) [sum_{g_i>0} DCG(i)/IDCG(min(i,m)) + (m - |retrieved g>0|) DCG(n)/IDCG(m)]",
)

R_NDCG = MeasureDef(
    name="RnDCG",
    family=FAMILY,
    summary="nDCG averaged at the R levels: the ranks where the ideal list's gain changes.",
    kernel=r_ndcg,
    params=(GAINS, REL),
    cutoff="none",
    reference="trec_eval Rndcg (experimental)",
    default_follows="trec_eval 10.0",
    formula="RnDCG = mean_{p: I_p != I_(p-1), p <= m+1} DCG(min(p-1,n))/IDCG(p-1) (and DCG(n)/IDCG(m) if n >= m+2)",
    notes="rel (trec_eval -l) only decides whether the topic scores at all: no relevant document at that level: 0.",
)

DEFINITIONS = (NDCG_REL, R_NDCG)
