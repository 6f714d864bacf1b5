"""R-precision -- ``Rprec``: precision at rank R, the topic's number of relevant documents (trec_eval ``Rprec``);
and ``RprecMult(mult=m)``, precision at rank m * R (trec_eval 10.0 ``Rprec_mult_m``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, REL, TREC_EVAL, FloatArray, ratio
from evaluation.measures.base import MeasureDef
from evaluation.params import Param


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


def r_precision_multiple(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    """Precision at rank ``trunc(mult * R + 0.9)`` (m_Rprec_mult.c's cut-off; 0 when it is 0)."""
    level = params["rel"]
    depth = np.trunc(float(params["mult"]) * data.num_relevant(level) + 0.9)
    hits = data.relevant(level) & (data.rank <= depth[data.topic_of])
    return ratio(data.segment_sum(hits), depth)


MULTIPLE = MeasureDef(
    name="RprecMult",
    family=FAMILY,
    summary="Precision at a multiple of R: at rank mult * R (trec_eval Rprec_mult_0.20 ... _2.00).",
    kernel=r_precision_multiple,
    params=(Param("mult", "float", None, "the multiple of R (trec_eval: 0.20, 0.40, ..., 2.00)", minimum=0.0,
                  min_exclusive=True), REL),
    cutoff="none",
    reference="trec_eval 10.0 Rprec_mult",
    default_follows="trec_eval 10.0",
    formula="RprecMult(mult) = |relevant in d@c| / c, c = trunc(mult * R + 0.9); 0 when c = 0",
)

DEFINITIONS = (DEFINITION, MULTIPLE)
