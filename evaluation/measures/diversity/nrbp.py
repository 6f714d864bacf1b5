"""Novelty- and rank-biased precision -- ``NRBP(alpha=0.5,beta=0.5)``, ``nNRBP`` (spec 3.5; Clarke, Kolla and
Vechtomova, ICTIR 2009; ndeval's NRBP and nNRBP).

NRBP = ((1 - (1-alpha) beta) / |T|) sum_i beta^{i-1} NG(i) over the whole run; nNRBP divides by the NRBP of the
greedy ideal ranking (all of it, not cut at any depth).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.intent_ranking import IntentInputs
from evaluation.measures.adhoc._shared import ratio
from evaluation.measures.base import MeasureDef, Param
from evaluation.measures.diversity._shared import (
    ALPHA,
    FAMILY,
    NDEVAL,
    REL,
    greedy_ideal,
    ideal_for_run,
    novelty_gain,
    powers,
)
from evaluation.model import FloatArray
from evaluation.segments import segment_ids

BETA = Param("beta", "float", 0.5, "patience: probability of moving on to the next document",
             minimum=0.0, maximum=1.0, min_exclusive=True)


def _sums(inputs: IntentInputs, params: Mapping[str, Any]) -> tuple[FloatArray, FloatArray, FloatArray]:
    data = inputs.at(params["rel"])
    alpha, beta = params["alpha"], params["beta"]
    docs = data.docs
    gain = novelty_gain(data, alpha)
    decay = powers(beta, int(docs.rank.max(initial=1)))
    run = docs.segment_sum(gain * decay[docs.rank - 1])
    offsets, ideal_gain, ideal_rank = ideal_for_run(data, greedy_ideal(data.slots, alpha))
    ideal_decay = powers(beta, int(ideal_rank.max(initial=1)))
    ideal = np.bincount(segment_ids(offsets), weights=ideal_gain * ideal_decay[ideal_rank - 1],
                        minlength=data.n_topics).astype(np.float64)
    return run, ideal, data.n_slots_per_topic()


def nrbp(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    run, _, n_slots = _sums(inputs, params)
    return ratio(run * (1.0 - (1.0 - params["alpha"]) * params["beta"]), n_slots)


def nnrbp(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    run, ideal, _ = _sums(inputs, params)
    return ratio(run, ideal)


NRBP = MeasureDef(
    name="NRBP",
    family=FAMILY,
    summary="Novelty- and rank-biased precision over the whole run (ndeval's NRBP).",
    kernel=nrbp,
    params=(ALPHA, BETA, REL),
    cutoff="none",
    inputs=("intents",),
    reference=NDEVAL + "; Clarke, Kolla & Vechtomova, ICTIR 2009",
    default_follows="ndeval 4.5 (pyndeval)",
    formula="((1-(1-alpha)beta)/|T|) sum_i beta^(i-1) NG(i)",
)

NNRBP = MeasureDef(
    name="nNRBP",
    family=FAMILY,
    summary="NRBP over the NRBP of the greedy ideal ranking (ndeval's nNRBP).",
    kernel=nnrbp,
    params=(ALPHA, BETA, REL),
    cutoff="none",
    inputs=("intents",),
    reference=NDEVAL,
    default_follows="ndeval 4.5 (pyndeval)",
    formula="NRBP(run) / NRBP(greedy ideal)",
)

DEFINITIONS = (NRBP, NNRBP)
