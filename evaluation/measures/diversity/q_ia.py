"""Intent-aware Q-measure -- ``Q_IA(beta=1)``, ``Q_IA(beta=1)@l`` (spec 3.1, 2.7; Sakai & Robertson 2008,
Dou et al. 2019).

Q_IA = sum_t w(t) Q_t: each intent's Q-measure on its own grades, BR_t(n) = (C_t(n) + beta cg_t(n)) /
(n + beta cg*_t(n)) averaged over the intent's relevant retrieved documents and divided by R_t (by min(l, R_t)
with a cutoff l). Gains come from the ``gain`` table (default gain = grade).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.intent_ranking import IntentInputs
from evaluation.measures.adhoc._shared import ratio, table_gain
from evaluation.measures.adhoc.blended import BETA, GAIN_TABLE
from evaluation.measures.base import MeasureDef
from evaluation.measures.diversity._intents import (
    PAPERS,
    by_slot,
    hit_rank,
    hits_within,
    per_slot,
    slot_ideal,
    weighted_per_topic,
)
from evaluation.measures.diversity._shared import FAMILY, REL
from evaluation.model import FloatArray


def q_ia(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    data = inputs.at(params["rel"])
    beta, table = params["beta"], params["gain"]
    slots = data.slots
    rank = hit_rank(data)
    found = data.earlier_hits() + 1.0
    cum_gain = by_slot(data).inclusive(table_gain(data.hit_grade, table))
    ideal = slot_ideal(slots, ("table", tuple(table)), table_gain(slots.pair_grade, table))
    ideal_cum = ideal.cumulative()
    n_rel = slots.n_relevant.astype(np.int64)[data.hit_slot]  # >= 1 for every slot with a hit
    cg_star = ideal_cum[ideal.offsets[data.hit_slot] + np.minimum(rank, n_rel) - 1]
    br = (found + beta * cum_gain) / (rank + beta * cg_star)
    total = per_slot(data, br, hits_within(data, cutoff))
    denominator = slots.n_relevant if cutoff is None else np.minimum(slots.n_relevant, cutoff)
    return weighted_per_topic(data, ratio(total, denominator))


DEFINITION = MeasureDef(
    name="Q_IA",
    family=FAMILY,
    summary="Intent-aware Q-measure: the intent-weighted mean of each intent's Q-measure.",
    kernel=q_ia,
    params=(BETA, GAIN_TABLE, REL),
    cutoff="optional",
    inputs=("intents",),
    reference=PAPERS + " 3.1; Sakai & Robertson, EVIA 2008",
    formula="sum_t w(t) Q_t; Q_t = (1/R_t) sum_n J_t(d_n) BR_t(n) (cutoff l: 1/min(l, R_t), n <= l)",
)

DEFINITIONS = (DEFINITION,)
