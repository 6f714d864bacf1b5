"""Recall at k -- ``R@k``: relevant documents in the top k over all relevant documents (trec_eval ``recall_k``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, REL, TREC_EVAL, FloatArray, ratio
from evaluation.measures.base import MeasureDef


def recall(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    level = params["rel"]
    hits = data.relevant(level) & data.within(cutoff)
    return ratio(data.segment_sum(hits), data.num_relevant(level))


DEFINITION = MeasureDef(
    name="R",
    family=FAMILY,
    summary="Recall: fraction of the topic's relevant documents retrieved (in the top k).",
    kernel=recall,
    params=(REL,),
    cutoff="optional",
    reference=TREC_EVAL,
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="R@k = |relevant in d@k| / R; 0 when R = 0",
    aliases=("Recall",),
)
