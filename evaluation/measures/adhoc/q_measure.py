"""Q-measure -- ``Q(beta=1)``, ``Q(beta=1)@l`` (spec 2.7; Sakai & Robertson 2008 Eq. 9).

Q = (1/R) sum over retrieved relevant documents of BR(n); the cutoff form divides by min(l, R).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, FloatArray, ratio
from evaluation.measures.adhoc.blended import BETA, GAIN_TABLE, blended_ratio
from evaluation.measures.base import MeasureDef


def q_measure(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    b = blended_ratio(data, params["beta"], params["gain"])
    keep = data.within(cutoff)[b.relevant]
    total = np.bincount(data.topic_of[b.relevant][keep], weights=b.br[keep], minlength=data.n_topics)
    denominator = b.n_rel if cutoff is None else np.minimum(b.n_rel, cutoff)
    return ratio(total, denominator)


DEFINITION = MeasureDef(
    name="Q",
    family=FAMILY,
    summary="Q-measure: average of the blended ratio at each relevant document (graded AP).",
    kernel=q_measure,
    params=(BETA, GAIN_TABLE),
    cutoff="optional",
    reference="Sakai & Robertson, EVIA 2008 (Eq. 9); NTCIREVAL",
    formula="Q = (1/R) sum_n J(d_n) BR(n);  Q@l = (1/min(l,R)) sum_{n<=l} J(d_n) BR(n)",
)
