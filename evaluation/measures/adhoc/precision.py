"""Precision at k -- ``P@k``: relevant documents in the top k divided by k (spec 2.1; trec_eval ``P_k``).

The denominator stays k when fewer than k documents were retrieved (trec_eval's convention).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, REL, TREC_EVAL, FloatArray
from evaluation.measures.base import MeasureDef, required_cutoff


def precision(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    cutoff = required_cutoff(cutoff)
    return data.count_within(data.relevant(params["rel"]), cutoff) / cutoff


DEFINITION = MeasureDef(
    name="P",
    family=FAMILY,
    summary="Precision at k: fraction of the top k that is relevant.",
    kernel=precision,
    params=(REL,),
    cutoff="required",
    reference=TREC_EVAL,
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="P@k = (1/k) * sum_{i<=min(k,n)} J(d_i)",
    aliases=("Precision",),
)
