"""Set measures over everything retrieved -- ``SetP``, ``SetR``, ``SetF(beta=1)``, ``SetMAP``, ``SetRelativeP``
(trec_eval ``set_P``, ``set_recall``, ``set_F``, ``set_map``, ``set_relative_P``): the ranking is ignored; an empty
retrieval scores 0. trec_eval's ``set_F.x`` weighs recall by x = beta^2 (``SetF(beta=sqrt(x))``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, REL, TREC_EVAL, FloatArray, ratio
from evaluation.measures.base import MeasureDef
from evaluation.params import Param


def _counts(data: JudgedRanking, level: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(relevant retrieved, retrieved, relevant) per topic."""
    found = data.segment_sum(data.relevant(level))
    return found, data.segment_sum(data.within(None)), data.num_relevant(level)


def set_precision(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    found, retrieved, _ = _counts(data, params["rel"])
    return ratio(found, retrieved)


def set_recall(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    found, _, relevant = _counts(data, params["rel"])
    return ratio(found, relevant)


def set_f(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    found, retrieved, relevant = _counts(data, params["rel"])
    p, r = ratio(found, retrieved), ratio(found, relevant)
    b2 = float(params["beta"]) ** 2
    return ratio((b2 + 1.0) * p * r, b2 * p + r)


SET_P = MeasureDef(
    name="SetP",
    family=FAMILY,
    summary="Set precision: relevant retrieved / retrieved, over the whole retrieved list.",
    kernel=set_precision,
    params=(REL,),
    cutoff="none",
    reference=TREC_EVAL,
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="SetP = NumRelRet / NumRet",
)

SET_R = MeasureDef(
    name="SetR",
    family=FAMILY,
    summary="Set recall: relevant retrieved / relevant, over the whole retrieved list.",
    kernel=set_recall,
    params=(REL,),
    cutoff="none",
    reference=TREC_EVAL,
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="SetR = NumRelRet / R",
)

SET_F = MeasureDef(
    name="SetF",
    family=FAMILY,
    summary="Set F-measure: weighted harmonic mean of SetP and SetR.",
    kernel=set_f,
    params=(REL, Param("beta", "float", 1.0, "weight of recall relative to precision (trec_eval set_F.beta)",
                       minimum=0.0, min_exclusive=True)),
    cutoff="none",
    reference=TREC_EVAL,
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="SetF = (1+beta^2) * SetP * SetR / (beta^2 * SetP + SetR)",
)



def set_map(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    found, retrieved, relevant = _counts(data, params["rel"])
    return ratio(found * found, retrieved * relevant)


def set_relative_precision(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    found, retrieved, relevant = _counts(data, params["rel"])
    return ratio(found, np.minimum(retrieved, relevant))


SET_MAP = MeasureDef(
    name="SetMAP",
    family=FAMILY,
    summary="Unranked set AP: SetP * SetR (relevant retrieved squared over retrieved times relevant).",
    kernel=set_map,
    params=(REL,),
    cutoff="none",
    reference="trec_eval set_map",
    default_follows="trec_eval 10.0",
    formula="SetMAP = NumRelRet^2 / (NumRet * R)",
)

SET_RELATIVE_P = MeasureDef(
    name="SetRelativeP",
    family=FAMILY,
    summary="Relative set precision: relevant retrieved over the most possible, min(retrieved, R).",
    kernel=set_relative_precision,
    params=(REL,),
    cutoff="none",
    reference="trec_eval set_relative_P",
    default_follows="trec_eval 10.0",
    formula="SetRelativeP = NumRelRet / min(NumRet, R)",
)

DEFINITIONS = (SET_P, SET_R, SET_F, SET_MAP, SET_RELATIVE_P)
