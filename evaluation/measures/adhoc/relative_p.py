"""Relative precision at k -- ``RelativeP@k`` (trec_eval ``relative_P_k``): precision at k over the best precision
possible at k, i.e. relevant in the top k over min(k, R); 0 when the topic has no relevant document."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, REL, FloatArray, ratio
from evaluation.measures.base import MeasureDef, required_cutoff


def relative_precision(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    cutoff = required_cutoff(cutoff)
    level = params["rel"]
    found = data.count_within(data.relevant(level), cutoff)
    return ratio(found, np.minimum(data.num_relevant(level), float(cutoff)))


DEFINITION = MeasureDef(
    name="RelativeP",
    family=FAMILY,
    summary="Relative precision at k: relevant in the top k over the most possible, min(k, R).",
    kernel=relative_precision,
    params=(REL,),
    cutoff="required",
    reference="trec_eval relative_P",
    default_follows="trec_eval 10.0",
    formula="RelativeP@k = |relevant in d@k| / min(k, R); 0 when R = 0",
)
