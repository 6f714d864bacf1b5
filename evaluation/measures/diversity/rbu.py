"""Rank-Biased Utility -- ``RBU(p=0.8,e=0.03,norm=rbp)[@k]`` (spec 3.9; Amigo, Spina & Carrillo-de-Albornoz,
SIGIR 2018, Eq. 11, and their reference implementation).

RBU = sum_{i<=k} W(i) (sum_t w(t) r(d_i,t) prod_{j<i} (1 - r(d_j,t)) - e), r = (2^g - 1)/2^{gmax_t};
W(i) = (1-p) p^{i-1} (``norm=rbp``, the reference implementation) or p^i (``norm=paper``, Eq. 11). Every
retrieved document costs e, judged or not. With no parameters (p = 0.8, e = 0.03, whole run) it reproduces the
authors' Java implementation (Appendix E.1), not the spec's research default p = 0.99, e = 0.05, @k.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.intent_ranking import IntentInputs
from evaluation.measures.base import MeasureDef
from evaluation.measures.diversity._intents import PAPERS, SATISFACTION, by_slot, hit_weight, per_doc, satisfaction
from evaluation.measures.diversity._shared import FAMILY, REL
from evaluation.model import FloatArray
from evaluation.params import Param

PERSISTENCE = Param("p", "float", 0.8, "probability of inspecting the next document",
                    minimum=0.0, maximum=1.0, min_exclusive=True, max_exclusive=True)
EFFORT = Param("e", "float", 0.03, "effort (cost) of inspecting one document", minimum=0.0)
NORM = Param("norm", "choice", "rbp", "rank weight: rbp = (1-p) p^(i-1) (reference implementation); paper = p^i"
             " (Eq. 11)", choices=("rbp", "paper"))


def rbu(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    data = inputs.at(params["rel"])
    docs = data.docs
    p = float(params["p"])
    r = satisfaction(data, params["sat"])
    gain = per_doc(data, hit_weight(data) * r * by_slot(data).cascade(r))
    within = docs.within(cutoff)
    rank = docs.rank[within]
    weight = (1.0 - p) * np.power(p, rank - 1.0) if params["norm"] == "rbp" else np.power(p, rank.astype(np.float64))
    return docs.segment_sum_at(within, (gain[within] - params["e"]) * weight)


DEFINITION = MeasureDef(
    name="RBU",
    family=FAMILY,
    summary="Rank-biased utility: intent-weighted cascade satisfaction minus effort under an RBP user"
    " (the authors' implementation by default; may be negative).",
    kernel=rbu,
    params=(PERSISTENCE, EFFORT, NORM, SATISFACTION, REL),
    cutoff="optional",
    inputs=("intents",),
    reference=PAPERS + " 3.9; Appendix E.1: the RBU reference implementation (github jCarrilloDeAlbornoz/RBU)",
    default_follows="the RBU reference implementation (p = 0.8, e = 0.03)",
    formula="sum_{i<=k} (1-p) p^(i-1) (sum_t w(t) r(d_i,t) prod_{j<i}(1 - r(d_j,t)) - e),"
    " r = (2^g-1)/2^gmax_t (norm=paper: p^i)",
)

DEFINITIONS = (DEFINITION,)
