"""Success at k -- ``Success@k``: 1 if any relevant document is in the top k (trec_eval ``success_k``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, REL, TREC_EVAL, FloatArray
from evaluation.measures.base import MeasureDef


def success(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    hits = data.count_within(data.relevant(params["rel"]), cutoff)
    return (hits > 0).astype(float)


DEFINITION = MeasureDef(
    name="Success",
    family=FAMILY,
    summary="1 if a relevant document is retrieved in the top k, else 0.",
    kernel=success,
    params=(REL,),
    cutoff="optional",
    reference=TREC_EVAL,
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="Success@k = 1[exists i <= k : J(d_i) = 1]",
)
