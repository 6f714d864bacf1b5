"""Unjudged at k -- ``Unjudged@k`` (trec_eval 10.0 ``unj_k``): the share of the top k documents that are not
judged, out of k (a shorter ranking is padded with judged documents). Documents in the qrels with a negative grade
count as unjudged (trec_eval: in the pool but not judged). It differs from 1 - ``Judged@k`` (ir_measures) there
and in its denominator."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, FloatArray
from evaluation.measures.adhoc.rbp import unjudged_or_negative
from evaluation.measures.base import MeasureDef, required_cutoff


def unjudged(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    cutoff = required_cutoff(cutoff)
    return data.count_within(unjudged_or_negative(data), cutoff) / cutoff


DEFINITION = MeasureDef(
    name="Unjudged",
    family=FAMILY,
    summary="Share of the top k that is unjudged (not in the qrels, or a negative grade), out of k.",
    kernel=unjudged,
    cutoff="required",
    reference="trec_eval 10.0 unj",
    default_follows="trec_eval 10.0",
    formula="Unjudged@k = |{i <= min(k,n) : d_i not in qrels or g(d_i) < 0}| / k",
)
