"""Reciprocal rank -- ``RR``, ``RR@k``: 1 / rank of the first relevant document (spec 2.2; trec_eval ``recip_rank``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, REL, TREC_EVAL, FloatArray
from evaluation.measures.base import MeasureDef


def reciprocal_rank(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    hits = np.flatnonzero(data.relevant(params["rel"]) & data.within(cutoff))
    out = np.zeros(data.n_topics, dtype=np.float64)
    topics, first = np.unique(data.topic_of[hits], return_index=True)
    out[topics] = 1.0 / data.rank[hits[first]]
    return out


DEFINITION = MeasureDef(
    name="RR",
    family=FAMILY,
    summary="Reciprocal rank of the first relevant document (0 if none is retrieved).",
    kernel=reciprocal_rank,
    params=(REL,),
    cutoff="optional",
    reference=TREC_EVAL,
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="RR = 1 / min{i : J(d_i) = 1}",
    aliases=("MRR", "RecipRank"),
)
