"""R-precision -- ``Rprec``: precision at rank R, the topic's number of relevant documents (trec_eval ``Rprec``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, REL, TREC_EVAL, FloatArray, ratio
from evaluation.measures.base import MeasureDef


def r_precision(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    level = params["rel"]
    n_rel = data.num_relevant(level)
    hits = data.relevant(level) & (data.rank <= n_rel[data.topic_of])
    return ratio(data.segment_sum(hits), n_rel)


DEFINITION = MeasureDef(
    name="Rprec",
    family=FAMILY,
    summary="Precision at rank R, where R is the number of relevant documents of the topic.",
    kernel=r_precision,
    params=(REL,),
    cutoff="none",
    reference=TREC_EVAL,
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="Rprec = |relevant in d@R| / R; 0 when R = 0",
    aliases=("RPrec",),
)
