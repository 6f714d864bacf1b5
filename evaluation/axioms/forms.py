"""Measure forms that exist only for the constraint harness, and the registry the harness resolves names with.

Spec 7.1 checks alpha-nDCG, NRBP, EU and CT "in the graded form of [AMIGO18]": the novelty-discounted gain is
r(d,t) (1-alpha)^{c_t} with r the satisfaction mapping (2^g - 1)/2^{gmax_t} of spec 1.6. The registry offers
that form for alpha-nDCG (``gain=graded``) and EU; the two forms below supply the others.

``NRBP_amigo(alpha=0.5,beta=0.5)`` is NRBP (spec 3.5) with that graded gain instead of the binary J_t(d):

    NRBP_amigo = ((1 - (1-alpha) beta) / |T|) sum_i beta^{i-1} sum_t r(d_i,t) (1-alpha)^{c_t(i)}

``CT_amigo(alpha=0.5,maxh=1)[@k]`` is the approximation of the Cube Test that Amigo et al. (SIGIR 2018) analyse
(spec 3.8: "implement CT_amigo only for the constraint harness"): a reciprocal-rank discount, a count-based
novelty discount and a saturation switch that closes an aspect once the relevance poured into it reaches
``maxh``:

    CT_amigo@k = sum_{i<=k} (1/i) sum_t w(t) r(d_i,t) (1-alpha)^{c_t(i)} 1[sum_{j<i} r(d_j,t) < maxh]

with the same r and c_t(i) the documents above rank i relevant to t. Neither form is in the measure registry:
they are analysis devices, not measures anyone reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluation.intent_ranking import IntentInputs
from evaluation.measures.adhoc._shared import ratio
from evaluation.measures.base import MeasureDef
from evaluation.measures.diversity._intents import (
    by_slot,
    hit_rank,
    hit_weight,
    hits_per_topic,
    hits_within,
    satisfaction,
)
from evaluation.measures.diversity._shared import ALPHA, REL, discount_table, novelty_gain, powers
from evaluation.measures.diversity.nrbp import BETA
from evaluation.measures.registry import Registry, default_registry
from evaluation.model import FloatArray
from evaluation.params import Param

#: relative tolerance of the saturation test
SATURATED = 1e-9
MAXH = Param("maxh", "float", 1.0, "relevance an aspect can take before it is saturated (closed)",
             minimum=0.0, min_exclusive=True)


def ct_amigo(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    data = inputs.at(params["rel"])
    r = satisfaction(data)
    earlier = data.earlier_hits()
    novelty = discount_table(params["alpha"], int(earlier.max()) + 1 if earlier.size else 1)[earlier]
    # running sums come from differences of one cumulative sum over all hits, exact only to ~1e-16 of its size:
    # an aspect filled to maxh up to that rounding counts as full
    open_aspect = by_slot(data).exclusive(r) < params["maxh"] * (1.0 - SATURATED)
    value = hit_weight(data) * r * novelty * open_aspect / hit_rank(data)
    return hits_per_topic(data, value, hits_within(data, cutoff))


def nrbp_amigo(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    data = inputs.at(params["rel"])
    docs = data.docs
    alpha, beta = params["alpha"], params["beta"]
    gain = novelty_gain(data, alpha, satisfaction(data))
    decay = powers(beta, int(docs.rank.max(initial=1)))
    run = docs.segment_sum(gain * decay[docs.rank - 1])
    return run * ratio(1.0 - (1.0 - alpha) * beta, data.n_slots_per_topic())  # ndeval's (and NRBP's) order


NRBP_AMIGO = MeasureDef(
    name="NRBP_amigo",
    family="axioms",
    summary="NRBP with the graded novelty gain r(d,t)(1-alpha)^c_t that Amigo et al. (SIGIR 2018) analyse"
    " (constraint harness only).",
    kernel=nrbp_amigo,
    params=(ALPHA, BETA, REL),
    cutoff="none",
    inputs=("intents",),
    reference="spec 3.5 and 7.1 (graded form); Amigo, Spina & Carrillo-de-Albornoz, SIGIR 2018",
    formula="((1-(1-alpha)beta)/|T|) sum_i beta^(i-1) sum_t r(d_i,t)(1-alpha)^c_t(i), r = (2^g-1)/2^gmax_t",
)

CT_AMIGO = MeasureDef(
    name="CT_amigo",
    family="axioms",
    summary="The Cube Test as analysed by Amigo et al. (SIGIR 2018): reciprocal-rank discount, novelty"
    " discount and a saturation switch (constraint harness only).",
    kernel=ct_amigo,
    params=(ALPHA, MAXH, REL),
    cutoff="optional",
    inputs=("intents",),
    reference="spec 3.8 (CT_amigo) and 7.5; Amigo, Spina & Carrillo-de-Albornoz, SIGIR 2018",
    formula="sum_{i<=k} (1/i) sum_t w(t) r(d_i,t) (1-alpha)^c_t(i) 1[sum_{j<i} r(d_j,t) < maxh],"
    " r = (2^g-1)/2^gmax_t",
)

#: forms the harness accepts besides the registered measures
HARNESS_FORMS = (NRBP_AMIGO, CT_AMIGO)


def harness_registry() -> Registry:
    """The measure registry plus the harness-only forms (built on each call; it is small)."""
    return Registry((*default_registry(), *HARNESS_FORMS))
