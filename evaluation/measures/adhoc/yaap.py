"""Yet another average precision -- ``YAAP`` (trec_eval ``yaap``; Robertson, ECIR 2012): AP's sum of precisions
at the relevant documents, S, mapped to log((1 + S) / (1 + R - S)) so that values average better over topics."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, REL, FloatArray
from evaluation.measures.base import MeasureDef


def yaap(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    """Per topic log((1 + S) / (1 + R - S)); a topic with nothing retrieved has S = 0 (trec_eval -c too)."""
    level = params["rel"]
    rel = data.relevant(level)
    found = data.segment_cumsum(rel)[rel]
    total = data.segment_sum_at(rel, found / data.rank[rel])
    return np.asarray(np.log((1.0 + total) / (1.0 + data.num_relevant(level) - total)), dtype=np.float64)


DEFINITION = MeasureDef(
    name="YAAP",
    family=FAMILY,
    summary="Yet another average precision: log((1 + S) / (1 + R - S)), S = AP's sum of precisions.",
    kernel=yaap,
    params=(REL,),
    cutoff="none",
    reference="trec_eval yaap (Robertson, ECIR 2012)",
    default_follows="trec_eval 10.0",
    formula="YAAP = ln((1 + S) / (1 + R - S)), S = sum_{J_i=1} C(i)/i",
)
