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
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evaluation.intent_ranking import IntentInputs, IntentRanking
from evaluation.measures.adhoc._shared import ratio
from evaluation.measures.base import MeasureDef, required_cutoff
from evaluation.measures.diversity._intents import PAPERS, VARIANT, satisfaction
from evaluation.measures.diversity._shared import (
    ALPHA,
    FAMILY,
    NDEVAL,
    NDEVAL_DEPTH,
    REL,
    cumulative_at,
    greedy_for_run,
    novelty_gain,
    run_ideal_ideal,
)
from evaluation.model import FloatArray, IntArray
from evaluation.params import Param

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


@dataclass(frozen=True, eq=False)
class DiscountedSums:
    """Per-topic sums of gain(i)*discount(i) down to any cutoff, over a flat ranked list (a run's retrieved
    documents, or the greedy ideal ranking of its evaluated topics).

    Cutoffs up to ``PREFIX_DEPTH`` read one column of running sums built, on first use, from the top entries
    only; deeper cutoffs sum the masked terms per topic. Both add the terms of a topic in rank order starting
    from 0, so they give the same doubles.
    """

    gain: FloatArray
    topic: IntArray  # topic (evaluated-topic index) of each entry, nondecreasing
    rank: IntArray  # 1-based rank of each entry within its topic
    head: IntArray  # indices of the entries ranked at or above PREFIX_DEPTH
    n_topics: int
    discount: str
    _cache: dict[str, FloatArray] = field(default_factory=dict, repr=False)

    def at(self, cutoff: int) -> FloatArray:
        """Per topic: the sum of gain(i)*discount(i) over ranks i <= cutoff."""
        cache = self._cache
        if cutoff <= PREFIX_DEPTH:
            if "prefix" not in cache:
                rank = self.rank[self.head]
                table = np.zeros((self.n_topics, PREFIX_DEPTH))
                table[self.topic[self.head], rank - 1] = self.gain[self.head] * rank_discount(rank, self.discount)
                cache["prefix"] = np.cumsum(table, axis=1)
            return cache["prefix"][:, cutoff - 1].copy()
        if "terms" not in cache:
            cache["terms"] = self.gain * rank_discount(self.rank, self.discount)
        return cumulative_at(cache["terms"], self.topic, self.rank, self.n_topics, cutoff)


#: ranks covered by the running sums of ``DiscountedSums`` (ndeval's cutoffs are 5, 10, 20)
PREFIX_DEPTH = NDEVAL_DEPTH


def discounted_gains(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int, discount: str
                     ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Run and greedy-ideal sums of NG(i)*discount(i) down to the cutoff, and |T*|, per topic.

    The run's sums are prepared once per run (and alpha, gain, discount), the ideal's once for all runs
    evaluated on the same topics; every cutoff and every measure that reads them shares them.
    """
    data = inputs.at(params["rel"])
    alpha = params["alpha"]
    graded = params.get("gain", "binary") == "graded"
    key = (alpha, graded, discount)
    run = data.memo(("discounted", *key), lambda: _run_sums(data, alpha, graded, discount))
    depth = PREFIX_DEPTH if cutoff <= PREFIX_DEPTH else None  # the greedy ideal down to the cutoffs ndeval uses
    ideal = data.shared(("discounted-ideal", *key, depth), lambda: _ideal_sums(data, alpha, graded, discount, depth))
    return run.at(cutoff), ideal.at(cutoff), data.n_slots_per_topic()


def _run_sums(data: IntentRanking, alpha: float, graded: bool, discount: str) -> DiscountedSums:
    docs = data.docs
    gain = novelty_gain(data, alpha, satisfaction(data) if graded else None)
    return DiscountedSums(gain, docs.topic_of, docs.rank, docs.top(PREFIX_DEPTH), data.n_topics, discount)


def _ideal_sums(data: IntentRanking, alpha: float, graded: bool, discount: str, depth: int | None) -> DiscountedSums:
    ideal = greedy_for_run(data, alpha, graded, depth)
    head = np.flatnonzero(ideal.rank <= PREFIX_DEPTH)
    return DiscountedSums(ideal.gain, ideal.topic, ideal.rank, head, data.n_topics, discount)


def alpha_dcg(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    cutoff = required_cutoff(cutoff)
    run, _, _ = discounted_gains(inputs, params, cutoff, "log")
    if params["variant"] == "paper":
        return run
    return ratio(run, run_ideal_ideal(inputs.at(params["rel"]), params["alpha"], cutoff, "log"))


def alpha_ndcg(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    cutoff = required_cutoff(cutoff)
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
