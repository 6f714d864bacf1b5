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


def retrieved_gain(data: JudgedRanking, table: Sequence[float]) -> np.ndarray:
    """trec_eval's gain of each retrieved document: its grade or ``table[grade]``; unjudged or negative: 0."""
    return mapped_gain(data.grade, data.judged, table)


def ideal_gains(data: JudgedRanking, table: Sequence[float]) -> np.ndarray:
    """Each topic's judged gains sorted descending (laid out as ``data.ideal``); negative grades gain 0."""
    gains = mapped_gain(data.ideal, np.ones(data.ideal.size, dtype=bool), table)
    if not table:  # grades are already sorted descending
        return gains
    return gains[np.lexsort((-gains, data.ideal_topic_of))]


def g_measure(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    """Only documents of non-zero gain score; at rank i the ideal's running cost sum_{j<=i} max(I_j, 1) is
    i + sum_{j<=min(i, L)} (max(I_j, 1) - 1), L the topic's ideal length, read from the ideal list's running sums."""
    gain = retrieved_gain(data, params["gains"])
    ideal = ideal_gains(data, params["gains"])
    surplus = data.segment_cumsum(np.maximum(ideal, 1) - 1, ideal=True)
    got = data.segment_cumsum(gain)
    scoring = gain != 0
    topic, rank = data.topic_of[scoring], data.rank[scoring]
    depth = np.minimum(rank, np.diff(data.ideal_offsets)[topic])
    at = data.ideal_offsets[:-1][topic] + depth - 1
    cost = rank + np.where(depth > 0, surplus[np.maximum(at, 0)] if surplus.size else 0.0, 0.0)
    contribution = gain[scoring] / np.log2(2.0 + cost - got[scoring])
    ideal_total = data.segment_sum(np.maximum(ideal, 0), ideal=True)
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
