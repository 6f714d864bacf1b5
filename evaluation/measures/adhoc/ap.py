"""Average precision -- ``AP``, ``AP@k`` (spec 2.3; trec_eval ``map`` and ``map_cut_k``).

AP@k sums precision at the relevant ranks within k but keeps R, the topic's relevant count, as denominator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, REL, TREC_EVAL, FloatArray, ratio
from evaluation.measures.base import MeasureDef


def average_precision(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    level = params["rel"]
    rel = data.relevant(level)
    found = data.segment_cumsum(rel)
    at_hits = rel & data.within(cutoff)
    precision_at_hits = found[at_hits] / data.rank[at_hits]
    total = data.segment_sum_at(at_hits, precision_at_hits)
    return ratio(total, data.num_relevant(level))


DEFINITION = MeasureDef(
    name="AP",
    family=FAMILY,
    summary="Average precision: mean of the precision at each relevant document's rank, over all R.",
    kernel=average_precision,
    params=(REL,),
    cutoff="optional",
    reference=TREC_EVAL,
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="AP@k = (1/R) * sum_{i<=k} J(d_i) * C(i)/i",
    aliases=("MAP",),
)
