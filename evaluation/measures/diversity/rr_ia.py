"""Intent-aware reciprocal rank -- ``RR_IA``, ``RR_IA@k`` (spec 3.1; Agrawal et al. WSDM 2009).

RR_IA = sum_t w(t) / (rank of the first document relevant to t), an intent contributing 0 when none is
retrieved (within the cutoff).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.intent_ranking import IntentInputs, IntentRanking
from evaluation.measures.base import MeasureDef
from evaluation.measures.diversity._intents import PAPERS, hit_rank, hits_within, weighted_per_topic
from evaluation.measures.diversity._shared import FAMILY, REL
from evaluation.model import FloatArray


def first_ranks(data: IntentRanking, cutoff: int | None) -> FloatArray:
    """Per slot: the rank of its first relevant document within the cutoff (0 when there is none)."""
    within = hits_within(data, cutoff)
    # hits are sorted by position, so a slot's first hit is its best-ranked one
    found, first = np.unique(data.hit_slot[within], return_index=True)
    out = np.zeros(data.slots.n_slots)
    out[found] = hit_rank(data)[within][first]
    return out


def rr_ia(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    data = inputs.at(params["rel"])
    first = first_ranks(data, cutoff)
    rr = np.divide(1.0, first, out=np.zeros_like(first), where=first > 0)
    return weighted_per_topic(data, rr)


DEFINITION = MeasureDef(
    name="RR_IA",
    family=FAMILY,
    summary="Intent-aware reciprocal rank: the intent-weighted mean of each intent's reciprocal rank.",
    kernel=rr_ia,
    params=(REL,),
    cutoff="optional",
    inputs=("intents",),
    reference=PAPERS + " 3.1; Agrawal et al., WSDM 2009",
    formula="sum_t w(t) / min{i : J_t(d_i) = 1} (0 for an intent with no relevant document retrieved)",
)

DEFINITIONS = (DEFINITION,)
