"""D-nDCG and D#-nDCG -- ``D_nDCG(gain=lin)@k``, ``Dsharp_nDCG(gamma=0.5)@k`` (spec 3.6; Sakai & Song, SIGIR 2011;
Dou et al. 2019).

Global gain GG(d) = sum_t w(t) gain(g_t(d)) (gain = the per-intent grade by default); D-nDCG is the nDCG of GG
with the exact ideal (every judged document sorted by GG); D#-nDCG = gamma I-rec@k + (1 - gamma) D-nDCG@k,
I-rec over the intents with a relevant document (``StRecall``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.intent_ranking import IntentInputs, IntentRanking
from evaluation.measures.adhoc._shared import ratio
from evaluation.measures.adhoc.ndcg import gain_of
from evaluation.measures.base import Kernel, MeasureDef, required_cutoff
from evaluation.measures.diversity._intents import (
    PAPERS,
    TopicIdeal,
    document_ideal,
    hit_weight,
    per_doc,
    topic_ideal_for_run,
)
from evaluation.measures.diversity._shared import FAMILY, REL
from evaluation.measures.diversity.intent_precision import subtopic_recall
from evaluation.model import FloatArray
from evaluation.params import Param
from evaluation.segments import segment_ids

GAIN = Param("gain", "choice", "lin", "per-intent gain of a grade g: lin = g, exp = 2^g - 1", choices=("lin", "exp"))
GAMMA = Param("gamma", "float", 0.5, "weight of I-rec against the D-measure", minimum=0.0, maximum=1.0)
REFERENCE = PAPERS + " 3.6; Sakai & Song, SIGIR 2011; NTCIREVAL"


def global_gain(data: IntentRanking, kind: str = "lin") -> tuple[FloatArray, TopicIdeal]:
    """GG of every retrieved document and, per qrels topic, every judged document's GG sorted descending."""
    run = per_doc(data, hit_weight(data) * gain_of(data.hit_grade, kind))
    slots = data.slots
    pair_gain = slots.weight[slots.pair_slot] * gain_of(slots.pair_grade, kind)
    ideal = document_ideal(slots, ("global-gain", kind), pair_gain)
    return run, ideal


def d_ndcg(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    cutoff = required_cutoff(cutoff)
    data = inputs.at(params["rel"])
    docs = data.docs
    gain, ideal = global_gain(data, params["gain"])
    within = docs.within(cutoff)
    dcg = docs.segment_sum_at(within, gain[within] / np.log2(docs.rank[within] + 1.0))
    offsets, ideal_gain, ideal_rank = topic_ideal_for_run(data, ideal)
    top = ideal_rank <= cutoff
    idcg = np.bincount(segment_ids(offsets)[top], weights=ideal_gain[top] / np.log2(ideal_rank[top] + 1.0),
                       minlength=data.n_topics)
    return ratio(dcg, idcg)


def intent_recall(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int) -> FloatArray:
    """I-rec@k over the intents with a relevant document."""
    return subtopic_recall(inputs, {"rel": params["rel"], "denominator": "Tstar"}, cutoff)


def with_intent_recall(d_measure: Kernel, inputs: IntentInputs, params: Mapping[str, Any], cutoff: int) -> FloatArray:
    """A D#-measure: gamma I-rec@k + (1 - gamma) D-measure@k, for the D-measure's kernel (D-nDCG, D-Q)."""
    gamma = params["gamma"]
    mixed = gamma * intent_recall(inputs, params, cutoff) + (1.0 - gamma) * d_measure(inputs, params, cutoff)
    return np.asarray(mixed, dtype=np.float64)


def dsharp_ndcg(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    return with_intent_recall(d_ndcg, inputs, params, required_cutoff(cutoff))


D_NDCG = MeasureDef(
    name="D_nDCG",
    family=FAMILY,
    summary="D-nDCG: nDCG of the intent-weighted global gain, normalised by the exact global-gain ideal.",
    kernel=d_ndcg,
    params=(GAIN, REL),
    cutoff="required",
    inputs=("intents",),
    reference=REFERENCE,
    formula="sum_{i<=k} GG(d_i)/log2(i+1) / the same for the ideal; GG(d) = sum_t w(t) gain(g_t(d))",
)

DSHARP_NDCG = MeasureDef(
    name="Dsharp_nDCG",
    family=FAMILY,
    summary="D#-nDCG: a mix of intent recall and D-nDCG.",
    kernel=dsharp_ndcg,
    params=(GAMMA, GAIN, REL),
    cutoff="required",
    inputs=("intents",),
    reference=REFERENCE,
    formula="gamma I_rec@k + (1 - gamma) D_nDCG@k",
)

DEFINITIONS = (D_NDCG, DSHARP_NDCG)
