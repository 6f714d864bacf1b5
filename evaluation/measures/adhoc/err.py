"""Expected reciprocal rank -- ``ERR(gmax=4)@k`` (spec 2.5; Chapelle et al. 2009; gdeval ``err@k``).

Satisfaction probability ``R = (2^g - 1) / 2^gmax``; the default gmax = 4 is gdeval's fixed scale (Appendix E).
``gmax=topic`` uses the topic's highest judged grade, ``gmax=collection`` the highest grade in the qrels.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, FloatArray
from evaluation.measures.base import MeasureDef
from evaluation.params import Param
from evaluation.problems import MeasureError


def scale_maximum(data: JudgedRanking, gmax: int | str) -> FloatArray:
    """The grade scale maximum per retrieved document's topic, by the ``gmax`` parameter."""
    if gmax == "collection":
        return np.full(data.rank.size, float(max(data.max_grade, 0)))
    if gmax == "topic":
        top = np.zeros(data.n_topics)
        has = np.diff(data.ideal_offsets) > 0
        top[has] = np.maximum(data.ideal[data.ideal_offsets[:-1][has]], 0)
        return top[data.topic_of]
    return np.full(data.rank.size, float(gmax))


def err(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    grade = np.maximum(data.grade, 0).astype(np.float64)
    gmax = scale_maximum(data, params["gmax"])
    if (grade > gmax).any():
        raise MeasureError(
            f"ERR(gmax={params['gmax']}) found grade {int(grade.max())} above the scale maximum;"
            " give gmax=collection or a larger gmax"
        )
    # (2^g - 1) / 2^gmax, written so that a large gmax cannot overflow (same doubles for g <= 53)
    satisfied = np.exp2(grade - gmax) - np.exp2(-gmax)
    log_stay = np.log1p(-satisfied)
    # probability of reaching rank i = prod_{j<i} (1 - R_j), from running sums of log(1 - R)
    reach = np.exp(data.segment_cumsum(log_stay, exclusive=True))
    within = data.within(cutoff)
    return data.segment_sum_at(within, (satisfied * reach)[within] / data.rank[within])


DEFINITION = MeasureDef(
    name="ERR",
    family=FAMILY,
    summary="Expected reciprocal rank under a cascade user model (gdeval's scale gmax = 4 by default).",
    kernel=err,
    params=(
        Param(
            "gmax",
            "int_or_choice",
            4,
            "grade-scale maximum in R = (2^g-1)/2^gmax; an integer, topic or collection",
            choices=("topic", "collection"),
            minimum=1,
        ),
    ),
    cutoff="optional",
    reference="gdeval.pl (TREC Web 2010-2014); Chapelle et al., CIKM 2009",
    default_follows="gdeval.pl (gmax = 4)",
    formula="ERR@k = sum_{i<=k} (1/i) R_i prod_{j<i} (1 - R_j), R = (2^g - 1)/2^gmax",
)
