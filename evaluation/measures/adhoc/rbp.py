"""Rank-biased precision -- ``RBP(p=0.8,rel=binary)[@k]`` (spec 2.6; Moffat & Zobel 2008).

``rel=binary`` counts relevant documents (grade >= 1); ``rel=N`` those with grade >= N (ir_measures' ``rel``
threshold); ``rel=graded`` uses grade / (the qrels' highest grade). No residuals.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, FloatArray
from evaluation.measures.base import MeasureDef
from evaluation.params import Param


def rbp(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    p = float(params["p"])
    within = data.within(cutoff)
    if params["rel"] != "graded":
        level = 1 if params["rel"] == "binary" else int(params["rel"])
        gain = (data.grade[within] >= level).astype(np.float64)
    else:
        top = max(data.max_grade, 1)
        gain = np.maximum(data.grade[within], 0) / top
    weight = np.power(p, data.rank[within] - 1.0)
    return (1.0 - p) * data.segment_sum_at(within, gain * weight)


DEFINITION = MeasureDef(
    name="RBP",
    family=FAMILY,
    summary="Rank-biased precision: expected rate of gain for a user who continues with probability p.",
    kernel=rbp,
    params=(
        Param("p", "float", 0.8, "persistence: probability of looking at the next document",
              minimum=0.0, maximum=1.0, min_exclusive=True, max_exclusive=True),
        Param("rel", "int_or_choice", "binary", "binary: grade >= 1 counts 1; N: grade >= N counts 1"
              " (ir_measures' threshold); graded: grade / max grade", choices=("binary", "graded"), minimum=1),
    ),
    cutoff="optional",
    reference="Moffat & Zobel, TOIS 2008; trec_eval rbp (binary by default)",
    default_follows="trec_eval rbp",
    formula="RBP = (1-p) * sum_i p^(i-1) * rel_i",
)
