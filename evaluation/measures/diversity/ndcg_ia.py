"""Intent-aware nDCG -- ``nDCG_IA(gain=lin)@k`` (spec 3.1; Agrawal et al. WSDM 2009, Dou et al. 2019).

nDCG_IA@k = sum_t w(t) nDCG_t@k: each intent's nDCG on its own grades (gain = g or 2^g - 1, discount
1/log2(i+1)), normalised by that intent's ideal list (its relevant documents sorted by gain, cut at k).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.intent_ranking import IntentInputs
from evaluation.measures.adhoc._shared import ratio
from evaluation.measures.adhoc.ndcg import gain_of
from evaluation.measures.base import MeasureDef
from evaluation.measures.diversity._intents import (
    PAPERS,
    hit_rank,
    hits_within,
    per_slot,
    slot_ideal,
    weighted_per_topic,
)
from evaluation.measures.diversity._shared import FAMILY, REL
from evaluation.model import FloatArray
from evaluation.params import Param

GAIN = Param("gain", "choice", "lin", "gain of a per-intent grade g: lin = g, exp = 2^g - 1", choices=("lin", "exp"))


def ndcg_ia(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    data = inputs.at(params["rel"])
    kind = params["gain"]
    rank = hit_rank(data)
    dcg = per_slot(data, gain_of(data.hit_grade, kind) / np.log2(rank + 1.0), hits_within(data, cutoff))
    slots = data.slots
    ideal = slot_ideal(slots, ("gain", kind), gain_of(slots.pair_grade, kind))
    top = ideal.rank <= cutoff if cutoff is not None else np.ones(ideal.rank.size, dtype=bool)
    idcg = np.bincount(ideal.slot[top], weights=ideal.gain[top] / np.log2(ideal.rank[top] + 1.0),
                       minlength=slots.n_slots)
    return weighted_per_topic(data, ratio(dcg, idcg))


DEFINITION = MeasureDef(
    name="nDCG_IA",
    family=FAMILY,
    summary="Intent-aware nDCG: the intent-weighted mean of each intent's nDCG on its own grades.",
    kernel=ndcg_ia,
    params=(GAIN, REL),
    cutoff="optional",
    inputs=("intents",),
    reference=PAPERS + " 3.1; Agrawal et al., WSDM 2009",
    formula="sum_t w(t) nDCG_t@k, nDCG_t@k = sum_{i<=k} gain(g_t(d_i))/log2(i+1) / IDCG_t@k",
)

DEFINITIONS = (DEFINITION,)
