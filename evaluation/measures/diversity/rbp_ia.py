"""Intent-aware rank-biased precision -- ``RBP_IA(p=0.8,gain=binary)[@k]`` (spec 3.1, 2.6; Moffat & Zobel 2008).

RBP_IA = sum_t w(t) (1-p) sum_i p^{i-1} rel_t(d_i); rel_t is 1 for a relevant document (``binary``), g/(the
qrels' highest grade) (``graded``, as the ad hoc RBP) or the RBU satisfaction (2^g - 1)/2^{gmax_t} (``exp``, the
bound of spec 3.9: RBU with e = 0 never exceeds it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.intent_ranking import IntentInputs
from evaluation.measures.base import MeasureDef
from evaluation.measures.diversity._intents import (
    PAPERS,
    hit_rank,
    hit_weight,
    hits_per_topic,
    hits_within,
    satisfaction,
)
from evaluation.measures.diversity._shared import FAMILY, REL
from evaluation.model import FloatArray
from evaluation.params import Param

PERSISTENCE = Param("p", "float", 0.8, "persistence: probability of looking at the next document",
                    minimum=0.0, maximum=1.0, min_exclusive=True, max_exclusive=True)
GAIN = Param(
    "gain",
    "choice",
    "binary",
    "per-intent relevance: binary = 1; graded = g / the qrels' highest grade; exp = (2^g - 1)/2^gmax_t",
    choices=("binary", "graded", "exp"),
)


def rbp_ia(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    data = inputs.at(params["rel"])
    p = float(params["p"])
    kind = params["gain"]
    if kind == "graded":
        gain = data.hit_grade / float(max(data.docs.max_grade, 1))
    else:
        gain = satisfaction(data, "binary" if kind == "binary" else "exp")
    value = hit_weight(data) * gain * np.power(p, hit_rank(data) - 1.0)
    return (1.0 - p) * hits_per_topic(data, value, hits_within(data, cutoff))


DEFINITION = MeasureDef(
    name="RBP_IA",
    family=FAMILY,
    summary="Intent-aware rank-biased precision: the intent-weighted mean of each intent's RBP.",
    kernel=rbp_ia,
    params=(PERSISTENCE, GAIN, REL),
    cutoff="optional",
    inputs=("intents",),
    reference=PAPERS + " 3.1; Moffat & Zobel, TOIS 2008",
    formula="sum_t w(t) (1-p) sum_i p^(i-1) rel_t(d_i)",
)

DEFINITIONS = (DEFINITION,)
