"""The blended ratio BR(n) shared by Q-measure and NCU (spec 2.7, Sakai & Robertson 2008 Eq. 8).

``BR(n) = (C(n) + beta * cg(n)) / (n + beta * cg*(n))`` with C the relevant count, cg the cumulative gain of
the run and cg* that of the ideal list (judged documents sorted by gain), all at rank n.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FloatArray, table_gain
from evaluation.params import Param

#: beta must be finite (spec 2.8: approximate beta = inf with e.g. 10000); inf would make BR = inf/inf = NaN
BETA_MAX = 1e9
BETA = Param(
    "beta", "float", 1.0, "weight of cumulative gain against precision in BR", minimum=0.0, maximum=BETA_MAX
)
GAIN_TABLE = Param(
    "gain",
    "table",
    (),
    "gain of grades 1, 2, 3, ... as a colon list (default: gain = grade, i.e. 1:2:3)",
)


@dataclass(frozen=True)
class Blended:
    """BR(n) at every retrieved relevant document, with where it is and what it gains."""

    relevant: np.ndarray  # mask over retrieved documents
    br: FloatArray  # BR at the relevant documents (in mask order)
    found: FloatArray  # C(n) at the relevant documents
    n_rel: FloatArray  # per topic R


def blended_ratio(data: JudgedRanking, beta: float, table: Sequence[float]) -> Blended:
    rel = data.relevant(1)
    gain = table_gain(data.grade, table)
    found = data.segment_cumsum(rel)
    cum_gain = data.segment_cumsum(gain)
    ideal_cum = _ideal_cumulative_gain(data, table)
    rank = data.rank[rel]
    t = data.topic_of[rel]
    ideal_len = np.diff(data.ideal_offsets)
    at = np.minimum(rank, ideal_len[t]) - 1
    cg_star = np.where(at >= 0, ideal_cum[data.ideal_offsets[:-1][t] + np.maximum(at, 0)], 0.0)
    br = (found[rel] + beta * cum_gain[rel]) / (rank + beta * cg_star)
    return Blended(rel, br, found[rel], data.num_relevant(1))


def _ideal_cumulative_gain(data: JudgedRanking, table: Sequence[float]) -> FloatArray:
    gain = table_gain(data.ideal, table)
    order = np.lexsort((-gain, data.ideal_topic_of))  # ideal = sorted by gain, not by grade
    return data.segment_cumsum(gain[order], ideal=True)
