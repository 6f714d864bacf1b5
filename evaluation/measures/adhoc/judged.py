"""Judgment rate -- ``Judged@k``: share of the top k documents that appear in the qrels (ir_measures ``Judged``).

The denominator is min(k, documents retrieved), as in ir_measures; an empty ranking scores 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, FloatArray, ratio
from evaluation.measures.base import MeasureDef


def judged(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    within = data.within(cutoff)
    shown = np.diff(data.offsets).astype(np.float64)
    if cutoff is not None:
        shown = np.minimum(shown, cutoff)
    return ratio(data.segment_sum(data.judged & within), shown)


DEFINITION = MeasureDef(
    name="Judged",
    family=FAMILY,
    summary="Fraction of the top k documents that have a judgment (of any grade).",
    kernel=judged,
    cutoff="optional",
    reference="ir_measures Judged (MacAvaney et al.)",
    default_follows="ir_measures",
    formula="Judged@k = |judged in d@k| / min(k, n)",
)
