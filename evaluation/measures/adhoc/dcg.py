"""Unnormalised discounted cumulative gain -- ``DCG`` and the ideal list's ``IDCG`` (trec_eval ``dcg``,
``ideal_dcg``; m_ndcg.c): the numerator and denominator of trec_eval's ``ndcg`` over the whole ranking (linear
gains = grades, or ``gains=`` as trec_eval's ``dcg.1=3,2=9``; discount 1/log2(rank + 1))."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, GAINS, FloatArray
from evaluation.measures.adhoc.g_measures import ideal_gains, retrieved_gain
from evaluation.measures.base import MeasureDef


def dcg(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    gain = retrieved_gain(data, params["gains"])
    return data.segment_sum(gain / np.log2(data.rank + 1.0))


def ideal_dcg(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    ideal = np.maximum(ideal_gains(data, params["gains"]), 0.0)
    return data.segment_sum(ideal / np.log2(data.ideal_rank + 1.0), ideal=True)


DCG = MeasureDef(
    name="DCG",
    family=FAMILY,
    summary="Discounted cumulative gain of the whole ranking (trec_eval dcg), not normalised.",
    kernel=dcg,
    params=(GAINS,),
    cutoff="none",
    reference="trec_eval dcg (Jarvelin & Kekalainen 2002)",
    default_follows="trec_eval 10.0",
    formula="DCG = sum_i gain(g_i) / log2(i + 1)",
)

IDCG = MeasureDef(
    name="IDCG",
    family=FAMILY,
    summary="DCG of the ideal ranking: every positive judged gain, sorted descending (trec_eval ideal_dcg).",
    kernel=ideal_dcg,
    params=(GAINS,),
    cutoff="none",
    reference="trec_eval ideal_dcg",
    default_follows="trec_eval 10.0",
    formula="IDCG = sum_j I_j / log2(j + 1), I = the judged gains sorted descending",
)

DEFINITIONS = (DCG, IDCG)
