"""trec_eval's experimental gain measures -- ``G`` and ``BinG`` (trec_eval ``G``, ``binG``; m_G.c, m_binG.c).

``G``: a document's gain divided by log2(2 + the ideal list's gain so far - the run's gain so far), the ideal's
gain per rank taken as at least 1; normalised by the ideal list's total gain. ``BinG``: each relevant retrieved
document counts 1 / log2(2 + non-relevant documents above it); over R. Gains are the grades (negative: 0), or
``gains=`` (trec_eval's ``G.1=3,2=9``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, GAINS, REL, FloatArray, mapped_gain, ratio
from evaluation.measures.base import MeasureDef


def retrieved_gain(data: JudgedRanking, table: Sequence[float]) -> FloatArray:
    """trec_eval's gain of each retrieved document: its grade or ``table[grade]``; unjudged or negative: 0."""
    return mapped_gain(data.grade, data.judged, table)


def ideal_gains(data: JudgedRanking, table: Sequence[float]) -> FloatArray:
    """Each topic's judged gains sorted descending (laid out as ``data.ideal``); negative grades gain 0."""
    gains = mapped_gain(data.ideal, np.ones(data.ideal.size, dtype=bool), table)
    if not table:  # grades are already sorted descending
        return gains
    return gains[np.lexsort((-gains, data.ideal_topic_of))]


def ideal_gain_at_rank(data: JudgedRanking, ideal: FloatArray) -> FloatArray:
    """For each retrieved document, the ideal list's (positive) gain at the same rank of its topic; 0 beyond."""
    length = np.diff(data.ideal_offsets)[data.topic_of]
    inside = data.rank <= length
    at = np.where(inside, data.ideal_offsets[:-1][data.topic_of] + data.rank - 1, 0)
    values = ideal[at] if ideal.size else np.zeros(at.size)
    return np.where(inside, np.maximum(values, 0.0), 0.0)


def g_measure(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    gain = retrieved_gain(data, params["gains"])
    ideal = ideal_gains(data, params["gains"])
    cost = data.segment_cumsum(np.maximum(ideal_gain_at_rank(data, ideal), 1.0))
    got = data.segment_cumsum(gain)
    scoring = gain != 0
    contribution = gain[scoring] / np.log2(2.0 + cost[scoring] - got[scoring])
    ideal_total = data.segment_sum(np.maximum(ideal, 0.0), ideal=True)
    return ratio(data.segment_sum_at(scoring, contribution), ideal_total)


def binary_g(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    level = params["rel"]
    rel = data.relevant(level)
    found = data.segment_cumsum(rel)[rel]
    contribution = 1.0 / np.log2(2.0 + data.rank[rel] - found)
    return ratio(data.segment_sum_at(rel, contribution), data.num_relevant(level))


G = MeasureDef(
    name="G",
    family=FAMILY,
    summary="trec_eval's normalised gain G: each gain discounted by how far the run lags the ideal list so far.",
    kernel=g_measure,
    params=(GAINS,),
    cutoff="none",
    reference="trec_eval G (experimental, 2008)",
    default_follows="trec_eval 10.0",
    formula="G = sum_{g_i != 0} g_i / log2(2 + sum_{j<=i} max(I_j, 1) - sum_{j<=i} g_j) / sum_j I_j",
)

BIN_G = MeasureDef(
    name="BinG",
    family=FAMILY,
    summary="trec_eval's binary G: mean over relevant documents of 1/log2(2 + non-relevant above it).",
    kernel=binary_g,
    params=(REL,),
    cutoff="none",
    reference="trec_eval binG (experimental, 2008)",
    default_follows="trec_eval 10.0",
    formula="BinG = (1/R) sum_{J(d_i)=1} 1 / log2(2 + i - C(i))",
)

DEFINITIONS = (BIN_G, G)
