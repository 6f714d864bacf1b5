"""Rank-biased precision -- ``RBP(p=0.8,rel=binary)[@k]`` (spec 2.6; Moffat & Zobel 2008) and trec_eval 10.0's
residual ``RBPResid(p=0.9)`` (trec_eval ``rbp_resid``).

``rel=binary`` counts relevant documents (grade >= 1); ``rel=N`` those with grade >= N (ir_measures' ``rel``
threshold); ``rel=graded`` uses grade / (the qrels' highest grade); ``rel=graded_topic`` uses grade / (the topic's
highest grade, when above 1), which with ``p=0.9`` is trec_eval 10.0's ``rbp`` (m_rbp.c). ``RBP`` itself keeps
ir_measures' numbers (p = 0.8, binary: spec Appendix E).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, FloatArray
from evaluation.measures.base import MeasureDef
from evaluation.params import Param

#: the persistence trec_eval 10.0's rbp and rbp_resid use by default
TREC_EVAL_P = 0.9


def topic_top_grade(data: JudgedRanking) -> FloatArray:
    """Each topic's highest judged grade, at least 1 (trec_eval's rbp divides gains by it when it exceeds 1)."""
    starts = data.ideal_offsets[:-1]
    judged = np.diff(data.ideal_offsets) > 0
    top = np.ones(data.n_topics, dtype=np.float64)
    top[judged] = data.ideal[starts[judged]]
    return np.maximum(top, 1.0)


def rbp(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    p = float(params["p"])
    within = data.within(cutoff)
    grade = data.grade[within]
    if params["rel"] == "graded_topic":
        gain = np.maximum(grade, 0) / topic_top_grade(data)[data.topic_of[within]]
    elif params["rel"] == "graded":
        gain = np.maximum(grade, 0) / max(data.max_grade, 1)
    else:
        level = 1 if params["rel"] == "binary" else int(params["rel"])
        gain = (grade >= level).astype(np.float64)
    weight = np.power(p, data.rank[within] - 1.0)
    return (1.0 - p) * data.segment_sum_at(within, gain * weight)


def unjudged_or_negative(data: JudgedRanking) -> np.ndarray:
    """trec_eval's unjudged documents: not in the qrels, or in them with a negative grade (in the pool, unjudged)."""
    return ~data.judged | (data.grade < 0)


def rbp_residual(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    """The most RBP could rise if every unjudged document had full gain: (1-p) sum_unjudged p^(i-1) + p^n; 0 when
    the ranking has no unjudged document (m_rbp_resid.c leaves the tail p^n out then)."""
    p = float(params["p"])
    unjudged = unjudged_or_negative(data)
    weight = np.power(p, data.rank[unjudged] - 1.0)
    tail = np.power(p, np.diff(data.offsets).astype(np.float64))
    residual = tail + (1.0 - p) * data.segment_sum_at(unjudged, weight)
    return np.where(data.segment_sum(unjudged) > 0, residual, 0.0)


P_PARAM = Param("p", "float", 0.8, "persistence: probability of looking at the next document",
                minimum=0.0, maximum=1.0, min_exclusive=True, max_exclusive=True)

DEFINITION = MeasureDef(
    name="RBP",
    family=FAMILY,
    summary="Rank-biased precision: expected rate of gain for a user who continues with probability p.",
    kernel=rbp,
    params=(
        P_PARAM,
        Param("rel", "int_or_choice", "binary", "binary: grade >= 1 counts 1; N: grade >= N counts 1"
              " (ir_measures' threshold); graded: grade / the qrels' max grade; graded_topic: grade / the topic's"
              " max grade (trec_eval 10.0 rbp)", choices=("binary", "graded", "graded_topic"), minimum=1),
    ),
    cutoff="optional",
    reference="Moffat & Zobel, TOIS 2008; ir_measures RBP (p=0.8, binary); trec_eval 10.0 rbp ="
              " RBP(p=0.9,rel=graded_topic)",
    default_follows="ir_measures RBP",
    formula="RBP = (1-p) * sum_i p^(i-1) * rel_i",
)

RESIDUAL = MeasureDef(
    name="RBPResid",
    family=FAMILY,
    summary="RBP's residual: how much RBP could still rise if every unjudged retrieved document were relevant.",
    kernel=rbp_residual,
    params=(Param("p", "float", TREC_EVAL_P, P_PARAM.description, minimum=0.0, maximum=1.0, min_exclusive=True,
                  max_exclusive=True),),
    cutoff="none",
    reference="trec_eval 10.0 rbp_resid (Moffat & Zobel, TOIS 2008)",
    default_follows="trec_eval 10.0 rbp_resid",
    formula="RBPResid = p^n + (1-p) * sum_{i: d_i unjudged or grade < 0} p^(i-1); 0 when no such document",
)

DEFINITIONS = (DEFINITION, RESIDUAL)
