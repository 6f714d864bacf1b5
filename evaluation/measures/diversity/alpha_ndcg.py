"""alpha-DCG and alpha-nDCG -- ``alpha_DCG(alpha=0.5)@k``, ``alpha_nDCG(alpha=0.5)@k`` (spec 3.4; Clarke et al.
SIGIR 2008), defaulting to ndeval's numbers (Appendix E.2).

Novelty-biased gain NG(i) = sum_t J_t(d_i) (1-alpha)^{c_t(i)}, discount 1/log2(i+1). ``alpha_DCG`` is divided by
ndeval's collection-independent "ideal-ideal" (every document relevant to every intent); ``alpha_nDCG`` by the
alpha-DCG of the greedy ideal ranking built once per topic from all judged documents.

The papers' forms (Appendix E.3): ``gain=graded`` uses r(d_i,t) (1-alpha)^{c_t(i)} with the RBU mapping
r = (2^g - 1)/2^{gmax_t} (the form Amigo et al. analyse), its greedy ideal built with the same gains;
``alpha_DCG(variant=paper)`` is the raw, unnormalised sum.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.intent_ranking import IntentInputs, IntentRanking
from evaluation.measures.adhoc._shared import ratio
from evaluation.measures.base import MeasureDef, Param
from evaluation.measures.diversity._intents import PAPERS, VARIANT, satisfaction
from evaluation.measures.diversity._shared import (
    ALPHA,
    FAMILY,
    NDEVAL,
    REL,
    cumulative_at,
    greedy_ideal,
    ideal_for_run,
    ideal_ideal,
    novelty_gain,
)
from evaluation.model import FloatArray, IntArray
from evaluation.segments import segment_ids

GAIN = Param(
    "gain",
    "choice",
    "binary",
    "per-intent gain: binary = 1 per relevant intent (ndeval); graded = r(d,t) = (2^g - 1)/2^gmax_t",
    choices=("binary", "graded"),
)


def rank_discount(rank: np.ndarray, discount: str) -> FloatArray:
    """1/log2(i+1) (``log``) or 1/i (``rr``) at every rank i."""
    r = rank.astype(np.float64)
    return np.asarray(1.0 / np.log2(r + 1.0) if discount == "log" else 1.0 / r, dtype=np.float64)


def discounted_gains(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int, discount: str
                     ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Run and greedy-ideal sums of NG(i)*discount(i) down to the cutoff, and |T*|, per topic.

    The per-document products are computed once per run (and alpha, gain, discount) and shared by every
    cutoff and every measure that reads them; each cutoff then costs one masked sum.
    """
    data = inputs.at(params["rel"])
    alpha = params["alpha"]
    graded = params.get("gain", "binary") == "graded"
    run_terms, ideal_terms, ideal_topic, ideal_rank = data.memo(
        ("discounted", alpha, graded, discount), lambda: _terms(data, alpha, graded, discount)
    )
    docs = data.docs
    within = docs.within(cutoff)
    run = docs.segment_sum_at(within, run_terms[within])
    ideal = cumulative_at(ideal_terms, ideal_topic, ideal_rank, data.n_topics, cutoff)
    return run, ideal, data.n_slots_per_topic()


def _terms(
    data: IntentRanking, alpha: float, graded: bool, discount: str
) -> tuple[FloatArray, FloatArray, IntArray, IntArray]:
    gain = novelty_gain(data, alpha, satisfaction(data) if graded else None)
    offsets, ideal_gain, ideal_rank = ideal_for_run(data, greedy_ideal(data.slots, alpha, graded))
    return (
        gain * rank_discount(data.docs.rank, discount),
        ideal_gain * rank_discount(ideal_rank, discount),
        segment_ids(offsets),
        ideal_rank,
    )


def alpha_dcg(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    assert cutoff is not None
    run, _, n_slots = discounted_gains(inputs, params, cutoff, "log")
    if params["variant"] == "paper":
        return run
    return ratio(run, ideal_ideal(n_slots, params["alpha"], cutoff, "log"))


def alpha_ndcg(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    assert cutoff is not None
    run, ideal, _ = discounted_gains(inputs, params, cutoff, "log")
    return ratio(run, ideal)


ALPHA_DCG = MeasureDef(
    name="alpha_DCG",
    family=FAMILY,
    summary="Novelty-biased DCG, scaled by ndeval's collection-independent ideal-ideal normaliser"
    " (variant=paper: the raw sum).",
    kernel=alpha_dcg,
    # ndeval's ideal-ideal normaliser assumes binary gains: graded gains need the raw sum (or alpha_nDCG)
    params=(ALPHA, REL, VARIANT, GAIN.only_when("variant", "paper")),
    cutoff="required",
    inputs=("intents",),
    reference=NDEVAL + "; Clarke et al., SIGIR 2008; variant=paper, gain=graded: " + PAPERS + " 3.4",
    default_follows="ndeval 4.5 (pyndeval)",
    formula="sum_{i<=k} NG(i)/log2(i+1) / sum_{i<=k} |T|(1-alpha)^(i-1)/log2(i+1);"
    " NG(i) = sum_t J_t(d_i)(1-alpha)^c_t(i) (gain=graded: r(d_i,t) instead of J_t); variant=paper: no divisor",
)

ALPHA_NDCG = MeasureDef(
    name="alpha_nDCG",
    family=FAMILY,
    summary="alpha-nDCG: novelty-biased DCG over that of the greedy ideal ranking (ndeval's numbers;"
    " gain=graded for the graded form).",
    kernel=alpha_ndcg,
    params=(ALPHA, REL, GAIN),
    cutoff="required",
    inputs=("intents",),
    reference=NDEVAL + "; Clarke et al., SIGIR 2008; gain=graded: " + PAPERS + " 3.4",
    default_follows="ndeval 4.5 (pyndeval)",
    formula="alpha-DCG@k(run) / alpha-DCG@k(greedy ideal); 0 when the ideal is 0",
)

DEFINITIONS = (ALPHA_DCG, ALPHA_NDCG)
