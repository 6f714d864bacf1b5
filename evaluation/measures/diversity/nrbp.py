"""Novelty- and rank-biased precision -- ``NRBP(alpha=0.5,beta=0.5)``, ``nNRBP`` (spec 3.5; Clarke, Kolla and
Vechtomova, ICTIR 2009; ndeval's NRBP and nNRBP).

NRBP = ((1 - (1-alpha) beta) / |T|) sum_i beta^{i-1} NG(i) over the whole run; nNRBP divides by the NRBP of the
greedy ideal ranking (all of it, not cut at any depth).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.intent_ranking import IntentInputs, IntentRanking
from evaluation.measures.adhoc._shared import ratio
from evaluation.measures.base import MeasureDef
from evaluation.measures.diversity._intents import PAPERS, satisfaction
from evaluation.measures.diversity._shared import (
    ALPHA,
    FAMILY,
    NDEVAL,
    REL,
    RunIdeal,
    greedy_for_run,
    novelty_gain,
    powers,
)
from evaluation.measures.diversity.alpha_ndcg import GAIN
from evaluation.model import FloatArray
from evaluation.params import Param

BETA = Param("beta", "float", 0.5, "patience: probability of moving on to the next document",
             minimum=0.0, maximum=1.0, min_exclusive=True)


def _sums(inputs: IntentInputs, params: Mapping[str, Any]) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per topic: the run's and the greedy ideal's sum_i beta^(i-1) NG(i), and |T*|. The run's sums are
    computed once per run (NRBP and nNRBP share them), the ideal's once for all runs on the same topics."""
    data = inputs.at(params["rel"])
    alpha, beta, graded = params["alpha"], params["beta"], params["gain"] == "graded"
    run = data.memo(("nrbp", alpha, beta, graded), lambda: _run_sum(data, alpha, beta, graded))
    ideal = data.shared(("nrbp-ideal", alpha, beta, graded), lambda: _ideal_sum(data, alpha, beta, graded))
    return run, ideal, data.n_slots_per_topic()


def _run_sum(data: IntentRanking, alpha: float, beta: float, graded: bool) -> FloatArray:
    """sum_i beta^(i-1) NG(i) per topic over the documents with a relevant intent only: NG is exactly 0 at
    the others, and adding those zeros to the running sums would change nothing."""
    docs = data.docs
    pos = data.hit_docs()
    rank = docs.rank[pos]
    decay = powers(beta, int(rank.max(initial=1)))
    weights = novelty_gain(data, alpha, satisfaction(data) if graded else None)[pos] * decay[rank - 1]
    return np.bincount(docs.topic_of[pos], weights=weights, minlength=data.n_topics).astype(np.float64)


def _ideal_sum(data: IntentRanking, alpha: float, beta: float, graded: bool) -> FloatArray:
    """sum_i beta^(i-1) NG(i) over the greedy ideal, per topic: first over its top ``_FIRST_DEPTH`` ranks,
    which give the whole sum, bit for bit, when every deeper term is too small to change it (usually: beta^63
    is ~1e-19 at beta = 0.5); otherwise over every rank."""
    greedy = greedy_for_run(data, alpha, graded, _FIRST_DEPTH)
    ideal = _decayed_sum(data, greedy, beta)
    if not _tail_vanishes(data, greedy, beta, ideal):
        ideal = _decayed_sum(data, greedy_for_run(data, alpha, graded), beta)
    ideal.flags.writeable = False
    return ideal


#: greedy ideal ranks summed first for nNRBP (``_ideal_sum``)
_FIRST_DEPTH = 64


def _decayed_sum(data: IntentRanking, greedy: RunIdeal, beta: float) -> FloatArray:
    ideal_decay = powers(beta, int(greedy.rank.max(initial=1)))
    return np.bincount(greedy.topic, weights=greedy.gain * ideal_decay[greedy.rank - 1],
                       minlength=data.n_topics).astype(np.float64)


def _tail_vanishes(data: IntentRanking, greedy: RunIdeal, beta: float, partial: FloatArray) -> bool:
    """Whether the ranks below ``greedy`` (cut at ``_FIRST_DEPTH``) leave ``partial`` unchanged, bit for bit.

    The sum is taken rank by rank (``bincount`` adds in array order). Greedy gains never grow down the
    ranking (each pick takes the largest marginal gain, and gains only shrink as intents are covered), nor
    does beta^(i-1), so every deeper term is at most the last kept gain times beta^depth; a term below half
    the spacing of doubles at the partial sum leaves it as it is, and so does every smaller one after it.
    """
    cut = np.flatnonzero(greedy.rank == _FIRST_DEPTH)  # topics whose ranking was cut (it may go deeper)
    if cut.size == 0:
        return True
    topic = greedy.topic[cut]
    bound = greedy.gain[cut] * powers(beta, _FIRST_DEPTH + 1)[-1]
    return bool((bound < np.spacing(partial[topic]) / 2).all())


def nrbp(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    run, _, n_slots = _sums(inputs, params)
    # run * (factor / |T|), in ndeval's order of operations, so the printed 6th decimal is ndeval's too
    return run * ratio(1.0 - (1.0 - params["alpha"]) * params["beta"], n_slots)


def nnrbp(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    run, ideal, n_slots = _sums(inputs, params)
    # ndeval divides the run's NRBP by the ideal's, both scaled: the same rounding, so its printed digits too
    scale = ratio(1.0 - (1.0 - params["alpha"]) * params["beta"], n_slots)
    return np.where(scale != 0, ratio(run * scale, ideal * scale), ratio(run, ideal))


NRBP = MeasureDef(
    name="NRBP",
    family=FAMILY,
    summary="Novelty- and rank-biased precision over the whole run (ndeval's NRBP).",
    kernel=nrbp,
    params=(ALPHA, BETA, REL, GAIN),
    cutoff="none",
    inputs=("intents",),
    reference=NDEVAL + "; Clarke, Kolla & Vechtomova, ICTIR 2009; gain=graded: " + PAPERS + " 3.5, 7.1",
    default_follows="ndeval 4.5 (pyndeval)",
    formula="((1-(1-alpha)beta)/|T|) sum_i beta^(i-1) NG(i); gain=graded: NG(i) = sum_t r(d_i,t)(1-alpha)^c_t(i),"
    " r = (2^g-1)/2^gmax_t",
)

NNRBP = MeasureDef(
    name="nNRBP",
    family=FAMILY,
    summary="NRBP over the NRBP of the greedy ideal ranking (ndeval's nNRBP).",
    kernel=nnrbp,
    params=(ALPHA, BETA, REL, GAIN),
    cutoff="none",
    inputs=("intents",),
    reference=NDEVAL + "; gain=graded: " + PAPERS + " 3.5",
    default_follows="ndeval 4.5 (pyndeval)",
    formula="NRBP(run) / NRBP(greedy ideal) (gain=graded: the greedy ideal built with the graded gains)",
)

DEFINITIONS = (NRBP, NNRBP)
