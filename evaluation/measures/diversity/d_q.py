"""D-Q and D#-Q -- ``D_Q(beta=1)@l``, ``Dsharp_Q(gamma=0.5)@l`` (spec 3.6; Sakai & Song, SIGIR 2011).

The Q-measure at cutoff l (spec 2.7) computed on the global gain GG(d) = sum_t w(t) g_t(d): relevance
J = 1[GG > 0], R = the number of judged documents with GG > 0, ideal by GG;
D-Q@l = (1/min(l, R)) sum_{n<=l} J(d_n) BR(n), BR(n) = (C(n) + beta cg(n)) / (n + beta cg*(n)).
D#-Q = gamma I-rec@l + (1 - gamma) D-Q@l.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.intent_ranking import IntentInputs
from evaluation.measures.adhoc._shared import ratio
from evaluation.measures.adhoc.blended import BETA
from evaluation.measures.base import MeasureDef, required_cutoff
from evaluation.measures.diversity._intents import topic_ideal_for_run
from evaluation.measures.diversity._shared import FAMILY, REL
from evaluation.measures.diversity.d_ndcg import GAMMA, REFERENCE, global_gain, with_intent_recall
from evaluation.model import FloatArray
from evaluation.segments import segmented_cumsum


def d_q(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    cutoff = required_cutoff(cutoff)
    data = inputs.at(params["rel"])
    docs = data.docs
    beta = params["beta"]
    gain, ideal = global_gain(data)
    relevant = gain > 0
    found = docs.segment_cumsum(relevant.astype(np.float64))
    cum_gain = docs.segment_cumsum(gain)
    offsets, ideal_gain, _ = topic_ideal_for_run(data, ideal)
    n_rel = np.diff(offsets)
    ideal_cum = segmented_cumsum(ideal_gain, offsets)
    pick = relevant & docs.within(cutoff)  # a document with GG > 0 is judged, so its topic has R >= 1
    t, rank = docs.topic_of[pick], docs.rank[pick]
    cg_star = ideal_cum[offsets[:-1][t] + np.minimum(rank, n_rel[t]) - 1]
    br = (found[pick] + beta * cum_gain[pick]) / (rank + beta * cg_star)
    total = np.bincount(t, weights=br, minlength=data.n_topics)
    return ratio(total, np.minimum(n_rel, cutoff))


def dsharp_q(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    return with_intent_recall(d_q, inputs, params, required_cutoff(cutoff))


D_Q = MeasureDef(
    name="D_Q",
    family=FAMILY,
    summary="D-Q: the Q-measure at cutoff l on the intent-weighted global gain.",
    kernel=d_q,
    params=(BETA, REL),
    cutoff="required",
    inputs=("intents",),
    reference=REFERENCE,
    formula="(1/min(l,R)) sum_{n<=l} J(d_n) BR(n) with gain GG(d) = sum_t w(t) g_t(d), J = 1[GG > 0]",
)

DSHARP_Q = MeasureDef(
    name="Dsharp_Q",
    family=FAMILY,
    summary="D#-Q: a mix of intent recall and D-Q.",
    kernel=dsharp_q,
    params=(GAMMA, BETA, REL),
    cutoff="required",
    inputs=("intents",),
    reference=REFERENCE,
    formula="gamma I_rec@l + (1 - gamma) D_Q@l",
)

DEFINITIONS = (D_Q, DSHARP_Q)
