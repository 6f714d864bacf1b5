"""trec_eval's experimental gain measures -- ``G`` and ``BinG`` (trec_eval ``G``, ``binG``; m_G.c, m_binG.c).

``G``: a document's gain divided by log2(2 + the ideal list's gain so far - the run's gain so far), the ideal's
gain per rank taken as at least 1; normalised by the ideal list's total gain. ``BinG``: each relevant retrieved
document counts 1 / log2(2 + non-relevant documents above it); over R. Gains are the grades (negative: 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, REL, FloatArray, ratio
from evaluation.measures.base import MeasureDef


def grade_gain(data: JudgedRanking) -> np.ndarray:
    """trec_eval's default gain of each retrieved document: its grade, 0 for unjudged or negative grades."""
    return np.maximum(data.grade, 0)


def ideal_gain_at_rank(data: JudgedRanking) -> np.ndarray:
    """For each retrieved document, the ideal list's (positive) gain at the same rank of its topic; 0 beyond."""
    length = np.diff(data.ideal_offsets)[data.topic_of]
    inside = data.rank <= length
    at = np.where(inside, data.ideal_offsets[:-1][data.topic_of] + data.rank - 1, 0)
    ideal = data.ideal[at] if data.ideal.size else np.zeros(at.size, dtype=np.int64)
    return np.where(inside, np.maximum(ideal, 0), 0)


def g_measure(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    gain = grade_gain(data)
    cost = data.segment_cumsum(np.maximum(ideal_gain_at_rank(data), 1))
    got = data.segment_cumsum(gain)
    scoring = gain != 0
    contribution = gain[scoring] / np.log2(2.0 + cost[scoring] - got[scoring])
    ideal_total = data.segment_sum(np.maximum(data.ideal, 0), ideal=True)
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
