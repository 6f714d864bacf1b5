"""trec_eval's counts -- ``NumRet``, ``NumRel``, ``NumRelRet``, ``NumNonrelJudgedRet`` (trec_eval ``num_ret``,
``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret``): per topic a count, over topics their sum (as trec_eval
prints them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, REL, TREC_EVAL, FloatArray
from evaluation.measures.base import MeasureDef


def num_ret(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    return data.segment_sum(data.within(cutoff))


def num_rel(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    return np.asarray(data.num_relevant(params["rel"]), dtype=np.float64)


def num_rel_ret(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    return data.count_within(data.relevant(params["rel"]), cutoff)


NUM_RET = MeasureDef(
    name="NumRet",
    family=FAMILY,
    summary="Number of documents retrieved for the topic (summed over topics).",
    kernel=num_ret,
    cutoff="optional",
    reference=TREC_EVAL,
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="NumRet@k = min(k, n)",
    aggregate="sum",
)

NUM_REL = MeasureDef(
    name="NumRel",
    family=FAMILY,
    summary="Number of relevant documents in the qrels of the topic, R (summed over topics).",
    kernel=num_rel,
    params=(REL,),
    cutoff="none",
    reference=TREC_EVAL,
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="NumRel = R",
    aggregate="sum",
)

NUM_REL_RET = MeasureDef(
    name="NumRelRet",
    family=FAMILY,
    summary="Number of relevant documents retrieved (summed over topics).",
    kernel=num_rel_ret,
    params=(REL,),
    cutoff="optional",
    reference=TREC_EVAL,
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="NumRelRet@k = sum_{i<=min(k,n)} J(d_i)",
    aggregate="sum",
)



def num_nonrel_judged_ret(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    nonrel = data.judged & (data.grade >= 0) & (data.grade < params["rel"])
    return data.count_within(nonrel, cutoff)


NUM_NONREL_JUDGED_RET = MeasureDef(
    name="NumNonrelJudgedRet",
    family=FAMILY,
    summary="Number of judged non-relevant documents retrieved (0 <= grade < rel; summed over topics).",
    kernel=num_nonrel_judged_ret,
    params=(REL,),
    cutoff="optional",
    reference="trec_eval num_nonrel_judged_ret",
    default_follows="trec_eval 10.0",
    formula="NumNonrelJudgedRet@k = |{i <= min(k,n) : d_i judged, 0 <= g(d_i) < rel}|",
    aggregate="sum",
)

DEFINITIONS = (NUM_RET, NUM_REL, NUM_REL_RET, NUM_NONREL_JUDGED_RET)
