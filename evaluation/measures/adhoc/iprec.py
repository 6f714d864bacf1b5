"""Interpolated precision at a recall level -- ``IPrec(recall=r)`` (trec_eval ``iprec_at_recall_0.00`` ...
``_1.00``): the highest precision reached once recall r is reached.

trec_eval versions differ on when r is reached: 9.0.7 (pytrec_eval, the default here, ``reach=ratio``) at the
first relevant document with C/R >= r; the current trec_eval (its test/out.test* files, ``reach=rounded``) at
the relevant document numbered round(r * R), halves up."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, REL, TREC_EVAL, FloatArray
from evaluation.measures.base import MeasureDef
from evaluation.params import Param


def interpolated_precision(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    level = params["rel"]
    rel = data.relevant(level) & data.within(cutoff)
    topic = data.topic_of[rel]
    found = data.segment_cumsum(data.relevant(level))[rel]
    if params["reach"] == "rounded":
        needed = np.floor(float(params["recall"]) * data.num_relevant(level) + 0.5)[topic]
        reached = found >= np.maximum(needed, 1.0)
    else:
        reached = found / data.num_relevant(level)[topic] >= float(params["recall"])
    out = np.zeros(data.n_topics, dtype=np.float64)
    np.maximum.at(out, topic[reached], found[reached] / data.rank[rel][reached])
    return out


DEFINITION = MeasureDef(
    name="IPrec",
    family=FAMILY,
    summary="Interpolated precision at a recall level: best precision at or beyond that recall.",
    kernel=interpolated_precision,
    params=(
        Param("recall", "float", None, "recall level in [0, 1] (trec_eval: 0.00, 0.10, ..., 1.00)",
              minimum=0.0, maximum=1.0),
        REL,
        Param("reach", "choice", "ratio", "when recall r counts as reached: ratio = C/R >= r (trec_eval 9.0.7,"
              " pytrec_eval); rounded = C >= round(r*R) (current trec_eval)", choices=("ratio", "rounded")),
    ),
    cutoff="optional",
    reference=TREC_EVAL,
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="IPrec(r) = max{ C(i)/i : J(d_i) = 1, C(i)/R >= r } (0 if none); reach=rounded: C(i) >= round(r*R)",
)
