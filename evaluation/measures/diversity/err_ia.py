"""Intent-aware ERR -- ``ERR_IA(alpha=0.5)@k``, ``nERR_IA(alpha=0.5)@k`` as ndeval computes them (Appendix E.2),
and ``ERR_IA(variant=paper,gmax=G)@k``, the published form (spec 3.1; Chapelle et al. CIKM 2009, Agrawal et al.
WSDM 2009).

ndeval: with alpha = 0.5 the numerator is |T| times the uniform-weight ERR-IA whose per-intent satisfaction
probability is 0.5 for every relevant document: sum_{i<=k} NG(i)/i. ``ERR_IA`` divides by the ideal-ideal
sum_{i<=k} |T|(1-alpha)^{i-1}/i; ``nERR_IA`` by the same sum over the greedy ideal ranking.

Paper: ERR_IA@k = sum_t w(t) ERR_t@k, each intent's ERR computed on its own grades with
R = (2^g - 1)/2^gmax (gmax as the ad hoc ERR's: a number, ``topic`` or ``collection``, the default).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluation.intent_ranking import IntentInputs
from evaluation.measures.adhoc._shared import ratio
from evaluation.measures.adhoc.err import scale_maximum
from evaluation.measures.base import MeasureDef, required_cutoff
from evaluation.measures.diversity._intents import (
    PAPERS,
    VARIANT,
    by_slot,
    exp_satisfaction,
    hit_rank,
    hit_weight,
    hits_per_topic,
    hits_within,
)
from evaluation.measures.diversity._shared import ALPHA, FAMILY, NDEVAL, REL, run_ideal_ideal
from evaluation.measures.diversity.alpha_ndcg import discounted_gains
from evaluation.model import FloatArray
from evaluation.params import Param
from evaluation.problems import MeasureError

GMAX = Param(
    "gmax",
    "int_or_choice",
    "collection",
    "variant=paper: grade-scale maximum in R = (2^g-1)/2^gmax; an integer, topic (the topic's highest grade) or"
    " collection (the qrels' highest grade)",
    choices=("topic", "collection"),
    minimum=1,
).only_when("variant", "paper")


def err_ia(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    cutoff = required_cutoff(cutoff)
    if params["variant"] == "paper":
        return paper_err_ia(inputs, params, cutoff)
    run, _, _ = discounted_gains(inputs, params, cutoff, "rr")
    return ratio(run, run_ideal_ideal(inputs.at(params["rel"]), params["alpha"], cutoff, "rr"))


def paper_err_ia(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    """sum_t w(t) sum_{i<=k} (1/i) R_t(d_i) prod_{j<i} (1 - R_t(d_j)), R_t = (2^{g_t} - 1)/2^gmax."""
    data = inputs.at(params["rel"])
    gmax = scale_maximum(data.docs, params["gmax"])[data.hit_pos]
    if (data.hit_grade > gmax).any():
        raise MeasureError(
            f"ERR_IA(variant=paper,gmax={params['gmax']}) found grade {int(data.hit_grade.max())} above the scale"
            " maximum; give gmax=collection or a larger gmax"
        )
    satisfied = exp_satisfaction(data.hit_grade, gmax)
    # probability that the user reaches the hit still unsatisfied for its intent: prod over earlier hits (1 - R)
    reach = by_slot(data).cascade(satisfied)
    value = hit_weight(data) * satisfied * reach / hit_rank(data)
    return hits_per_topic(data, value, hits_within(data, cutoff))


def nerr_ia(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    cutoff = required_cutoff(cutoff)
    run, ideal, _ = discounted_gains(inputs, params, cutoff, "rr")
    return ratio(run, ideal)


ERR_IA = MeasureDef(
    name="ERR_IA",
    family=FAMILY,
    summary="Intent-aware expected reciprocal rank: ndeval's normalised number by default, the weighted"
    " per-intent ERR of Chapelle/Agrawal with variant=paper.",
    kernel=err_ia,
    params=(ALPHA.only_when("variant", "ndeval"), REL, VARIANT, GMAX),
    cutoff="required",
    inputs=("intents",),
    reference=NDEVAL + "; Chapelle et al., CIKM 2009; variant=paper: " + PAPERS + " 3.1",
    default_follows="ndeval 4.5 (pyndeval)",
    formula="ndeval: sum_{i<=k} NG(i)/i / sum_{i<=k} |T|(1-alpha)^(i-1)/i;"
    " paper: sum_t w(t) sum_{i<=k} (1/i) R_t(d_i) prod_{j<i}(1 - R_t(d_j)), R = (2^g-1)/2^gmax",
)

NERR_IA = MeasureDef(
    name="nERR_IA",
    family=FAMILY,
    summary="Intent-aware ERR normalised by the greedy ideal ranking (ndeval's nERR-IA).",
    kernel=nerr_ia,
    params=(ALPHA, REL),
    cutoff="required",
    inputs=("intents",),
    reference=NDEVAL,
    default_follows="ndeval 4.5 (pyndeval)",
    formula="sum_{i<=k} NG(i)/i over the same sum for the greedy ideal ranking",
)

DEFINITIONS = (ERR_IA, NERR_IA)
