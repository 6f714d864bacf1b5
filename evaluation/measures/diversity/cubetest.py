"""Cube Test and Average Cube Test -- ``CT(gamma=0.5,maxh=1)@k``, ``ACT(gamma=0.5,maxh=1)@k`` (spec 3.8; Luo et al.
CIKM 2013).

Water filling: every intent is a column of height maxh; the document at rank i pours
w(t) min(gamma^{n_t} rel(d_i,t), maxh - H_t) into column t, rel = g_t/gmax_t, n_t the relevant documents that
went into t before (the first one undiscounted), H_t the column's height. Gain@j = all poured down to rank j;
CT@k = Gain@k / (maxh min(k,n)); ACT@k = (1/min(k,n)) sum_{j<=min(k,n)} Gain@j / (maxh j). One time unit per
document; an empty run scores 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.intent_ranking import IntentInputs
from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import ratio
from evaluation.measures.base import MeasureDef, required_cutoff
from evaluation.measures.diversity._intents import PAPERS, by_slot, hit_weight, per_doc
from evaluation.measures.diversity._shared import FAMILY, REL, powers
from evaluation.model import FloatArray
from evaluation.params import Param

GAMMA = Param("gamma", "float", 0.5, "novelty discount: the n-th relevant document of an intent fills gamma^(n-1)"
              " of its relevance", minimum=0.0, maximum=1.0)
MAXH = Param("maxh", "float", 1.0, "height of every intent's column", minimum=0.0, min_exclusive=True)
REFERENCE = PAPERS + " 3.8; Luo, Wing, Yang & Hearst, CIKM 2013"


def _poured(inputs: IntentInputs, params: Mapping[str, Any]) -> tuple[JudgedRanking, FloatArray]:
    """The ranking and what each retrieved document pours into the columns (intent-weighted)."""
    data = inputs.at(params["rel"])
    earlier = data.earlier_hits()
    novelty = powers(params["gamma"], int(earlier.max()) + 1 if earlier.size else 1)[earlier]
    rel = data.hit_grade / data.slots.max_grade[data.hit_slot]
    # a column's height after each hit is min(maxh, running sum of what was poured), so what a hit adds is the
    # difference of that before and after it; later hits cannot change an earlier hit's share
    poured = by_slot(data).capped(novelty * rel, params["maxh"])
    return data.docs, per_doc(data, hit_weight(data) * poured)


def cube_test(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    cutoff = required_cutoff(cutoff)
    docs, poured = _poured(inputs, params)
    within = docs.within(cutoff)
    time = docs.segment_sum(within.astype(np.float64))
    return ratio(docs.segment_sum_at(within, poured[within]), params["maxh"] * time)


def average_cube_test(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    cutoff = required_cutoff(cutoff)
    docs, poured = _poured(inputs, params)
    gain = docs.segment_cumsum(poured)  # Gain@j
    within = docs.within(cutoff)
    time = docs.segment_sum(within.astype(np.float64))
    total = docs.segment_sum_at(within, gain[within] / (params["maxh"] * docs.rank[within]))
    return ratio(total, time)


CT = MeasureDef(
    name="CT",
    family=FAMILY,
    summary="Cube Test: intent-weighted, capped, novelty-discounted gain per unit of time (one per document).",
    kernel=cube_test,
    params=(GAMMA, MAXH, REL),
    cutoff="required",
    inputs=("intents",),
    reference=REFERENCE,
    formula="Gain@k / (maxh min(k,n)); Gain pours w(t) min(gamma^n_t g_t/gmax_t, maxh - H_t) per document",
)

ACT = MeasureDef(
    name="ACT",
    family=FAMILY,
    summary="Average Cube Test: the Cube Test's gain rate averaged over the ranks down to k.",
    kernel=average_cube_test,
    params=(GAMMA, MAXH, REL),
    cutoff="required",
    inputs=("intents",),
    reference=REFERENCE,
    formula="(1/min(k,n)) sum_{j<=min(k,n)} Gain@j / (maxh j)",
)

DEFINITIONS = (CT, ACT)
