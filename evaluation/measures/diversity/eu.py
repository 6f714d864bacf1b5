"""Expected Utility -- ``EU(alpha=0.5,e=0.05)[@k]`` (spec 3.7; Yang & Lad, ICTIR 2009, as rendered by Amigo et al.
SIGIR 2018).

EU = sum_{i<=k} (1 / (1 + log2 i)) (sum_t w(t) r(d_i,t) (1-alpha)^{c_t(i)} - e), with r = (2^g - 1)/2^{gmax_t}
and c_t(i) the documents above rank i relevant to t. Every retrieved document costs e (judged or not), so EU
can be negative; it is not normalised.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.intent_ranking import IntentInputs
from evaluation.measures.base import MeasureDef
from evaluation.measures.diversity._intents import PAPERS, SATISFACTION, hit_weight, per_doc, satisfaction
from evaluation.measures.diversity._shared import ALPHA, FAMILY, REL, discount_table
from evaluation.model import FloatArray
from evaluation.params import Param

EFFORT = Param("e", "float", 0.05, "cost of inspecting one document", minimum=0.0)


def eu(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    data = inputs.at(params["rel"])
    docs = data.docs
    earlier = data.earlier_hits()
    novelty = discount_table(params["alpha"], int(earlier.max()) + 1 if earlier.size else 1)[earlier]
    utility = per_doc(data, hit_weight(data) * satisfaction(data, params["sat"]) * novelty) - params["e"]
    within = docs.within(cutoff)
    return docs.segment_sum_at(within, utility[within] / (1.0 + np.log2(docs.rank[within])))


DEFINITION = MeasureDef(
    name="EU",
    family=FAMILY,
    summary="Expected utility: novelty-discounted, intent-weighted satisfaction minus an effort per document"
    " (may be negative).",
    kernel=eu,
    params=(ALPHA, EFFORT, SATISFACTION, REL),
    cutoff="optional",
    inputs=("intents",),
    reference=PAPERS + " 3.7; Yang & Lad, ICTIR 2009",
    formula="sum_{i<=k} (sum_t w(t) r(d_i,t)(1-alpha)^c_t(i) - e) / (1 + log2 i), r = (2^g-1)/2^gmax_t",
)

DEFINITIONS = (DEFINITION,)
