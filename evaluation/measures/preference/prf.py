"""Preference-based measures -- ``Prf(stop=rbp,theta=0.2,F=avg)@K``, ``nPrf(...)@K`` (spec 6; Chandar &
Carterette, SIGIR 2013).

``Prf@K = sum_{k=1}^{min(K,n)} P(k) sum_{i=1}^{k} U(d_i | d_1 .. d_{i-1})``: the utility a user collects down to
the rank where they stop, in expectation over the stopping distribution P; utilities are estimated from
preference judgments (``evaluation.preference``). ``nPrf@K = Prf@K / I_Prf@K`` with the greedy ideal ranking of
the documents that have estimates (0 when ``I_Prf@K = 0``; greedy is not optimal, so values above 1 are
possible and reported as they are).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from evaluation.measures.adhoc._shared import ratio
from evaluation.measures.base import Measure, MeasureDef
from evaluation.measures.preference._prepare import NAME as INPUT
from evaluation.measures.preference._prepare import PreferenceInputs
from evaluation.model import FloatArray
from evaluation.params import Param
from evaluation.preference.prf import ideal_scores
from evaluation.preference.stopping import DEFAULT_THETA, STOPS, rank_weights
from evaluation.preference.utilities import AGGREGATES, rank_utilities
from evaluation.problems import MeasureError

FAMILY = "preference"
REFERENCE = ("Chandar & Carterette. Preference Based Evaluation Measures for Novelty and Diversity. SIGIR 2013;"
             " stopping distributions after Carterette, SIGIR 2011; spec 6, 11.7")

STOP = Param("stop", "choice", "rbp", "stopping distribution P(k): rbp theta(1-theta)^(k-1), dcg 1/log2(k+1) -"
             " 1/log2(k+2), rr 1/(k(k+1)), uniform 1/K (needs @K), none (all mass at rank min(K, n): total utility)",
             choices=STOPS)
THETA = Param("theta", "float", DEFAULT_THETA, "per-rank stopping probability of stop=rbp (1 - RBP's p)",
              minimum=0.0, maximum=1.0, min_exclusive=True).only_when("stop", "rbp")
AGGREGATE = Param("F", "choice", "avg", "how the conditional utilities U(d_i | d_j), j < i, combine into the"
                  " utility at rank i: avg (benefit of the doubt) or min (worst case)", choices=AGGREGATES)
PROFILE = Param("profile", "int_or_choice", "all", "whose preferences estimate the utilities: all (pooled), i"
                " (the i-th user/profile of each topic, in file order), or trec (simulated with the TREC profile"
                " from the per-intent qrels)", choices=("all", "trec"), minimum=1)
MIN_APP = Param("min_app", "int", 1, "appearances a document needs before its win ratio counts as an estimate",
                minimum=1)
SEED = Param("seed", "int", 0, "seed of the tie coins when preferences are simulated (profile=trec, or user"
             " profiles without judgments)", minimum=0)
PARAMS = (STOP, THETA, AGGREGATE, PROFILE, MIN_APP, SEED)


@dataclass(frozen=True)
class _PrfDef(MeasureDef):
    """Refuses ``stop=uniform`` without a cutoff when the name is parsed (P(k) = 1/K needs K)."""

    def instance(self, values: Mapping[str, Any] | None = None, cutoff: int | None = None) -> Measure:
        measure = super().instance(values, cutoff)
        if measure.params["stop"] == "uniform" and cutoff is None:
            raise MeasureError(f"{self.name}(stop=uniform) needs a cutoff K (P(k) = 1/K), e.g."
                               f" {self.name}(stop=uniform)@10")
        return measure


def _prf(inputs: PreferenceInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    """Per evaluated topic: Prf of the run (shared by Prf and nPrf through the run's memo)."""
    table = inputs.table(params["profile"], params["min_app"], params["seed"])
    key = ("prf", id(table), params["F"], params["stop"], params["theta"], cutoff)
    found: FloatArray = inputs.memo(key, lambda: _run_prf(inputs, params, cutoff))
    return found


def _run_prf(inputs: PreferenceInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    table = inputs.table(params["profile"], params["min_app"], params["seed"])
    table_topic, local = inputs.located(table)
    docs = inputs.docs
    lengths = np.diff(docs.offsets)
    kept = docs.top(cutoff) if cutoff is not None else np.arange(docs.rank.size)
    depth = lengths if cutoff is None else np.minimum(lengths, cutoff)
    offsets = np.concatenate(([0], np.cumsum(depth))).astype(np.int64)
    utility = inputs.memo(("utilities", id(table), params["F"], cutoff),
                          lambda: rank_utilities(table, table_topic, offsets, local[kept], params["F"]))
    topic = docs.topic_of[kept]
    weights = rank_weights(params["stop"], docs.rank[kept], depth[topic], theta=params["theta"], cutoff=cutoff)
    return np.bincount(topic, weights=utility * weights, minlength=docs.n_topics).astype(np.float64)


def _ideal(inputs: PreferenceInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    """Per evaluated topic: I_Prf (0 for a topic without estimates)."""
    table = inputs.table(params["profile"], params["min_app"], params["seed"])
    table_topic, _ = inputs.located(table)
    settings = (params["stop"], params["theta"], params["F"], cutoff)
    per_table = table.memo(("ideal-prf", *settings), lambda: ideal_scores(
        table, stop=params["stop"], theta=params["theta"], aggregate=params["F"], cutoff=cutoff))
    out = np.zeros(table_topic.size)
    known = table_topic >= 0
    out[known] = per_table[table_topic[known]]
    return out


def prf(inputs: PreferenceInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    return _prf(inputs, params, cutoff).copy()


def nprf(inputs: PreferenceInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    return ratio(_prf(inputs, params, cutoff), _ideal(inputs, params, cutoff))


_NOTES = (
    "Utilities U(d) = wins/appearances over pairwise preferences and U(d|x) over conditional ones with top x"
    " (fewer than min_app appearances: U(d) = 0, U(d|x) missing); at rank i > 1 a document's utility is F over"
    " its conditional utilities given the documents above it that are not missing, else U(d). Inputs, by"
    " precedence: profile=trec simulates preferences from the per-intent qrels; else the preference_judgments"
    " side input; else preferences simulated from the user_profiles side input (complete design, seeded)."
    " Stopping mass beyond a ranking shorter than K is not counted."
)

PRF = _PrfDef(
    name="Prf",
    family=FAMILY,
    summary="Preference-based expected utility: utility collected down to the stopping rank, from pairwise and"
            " conditional preference judgments.",
    kernel=prf,
    params=PARAMS,
    cutoff="optional",
    inputs=(INPUT,),
    reference=REFERENCE,
    formula="sum_{k<=min(K,n)} P(k) sum_{i<=k} U(d_i | d_1..d_{i-1}), U(d_i | ...) = F(U(d_i|d_j) : j < i)",
    notes=_NOTES,
)

NPRF = _PrfDef(
    name="nPrf",
    family=FAMILY,
    summary="Prf normalised by the Prf of the greedy ideal ranking of the documents with utility estimates.",
    kernel=nprf,
    params=PARAMS,
    cutoff="optional",
    inputs=(INPUT,),
    reference=REFERENCE,
    formula="Prf@K / I_Prf@K (greedy ideal: each rank takes the remaining document of highest utility given those"
            " above; ties to the larger docno; 0 when I_Prf@K = 0; may exceed 1)",
    notes=_NOTES,
)

DEFINITIONS = (PRF, NPRF)
