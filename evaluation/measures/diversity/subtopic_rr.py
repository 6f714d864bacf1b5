"""Subtopic reciprocal rank at full coverage -- ``S_RR`` (spec 3.3; written S-RR@100% by Amigo et al. 2018).

S_RR = 1/k*, k* the first rank at which every intent of the topic (with a relevant document) is covered;
0 when the run (within the cutoff) never covers them all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.intent_ranking import IntentInputs
from evaluation.measures.base import MeasureDef
from evaluation.measures.diversity._intents import PAPERS
from evaluation.measures.diversity._shared import FAMILY, REL
from evaluation.measures.diversity.rr_ia import first_ranks
from evaluation.model import FloatArray


def s_rr(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    data = inputs.at(params["rel"])
    first = first_ranks(data, cutoff)
    valid = data.slot_eval_topic >= 0
    covered = data.per_topic((first > 0).astype(np.float64))
    full_at = np.zeros(data.n_topics)
    np.maximum.at(full_at, data.slot_eval_topic[valid], first[valid])
    n_slots = data.n_slots_per_topic()
    complete = (n_slots > 0) & (covered == n_slots)
    return np.divide(1.0, full_at, out=np.zeros_like(full_at), where=complete)


DEFINITION = MeasureDef(
    name="S_RR",
    family=FAMILY,
    summary="Subtopic reciprocal rank: 1 / the first rank at which every intent is covered.",
    kernel=s_rr,
    params=(REL,),
    cutoff="optional",
    inputs=("intents",),
    reference=PAPERS + " 3.3; Amigo et al., SIGIR 2018 (S-RR@100%)",
    formula="1 / min{k : S_Recall@k = 1}; 0 if the intents are never all covered",
)

DEFINITIONS = (DEFINITION,)
