"""Binary preference -- ``Bpref`` (Buckley & Voorhees 2004; trec_eval ``bpref``) and its geometric mean over
topics ``GMBpref`` (trec_eval ``gm_bpref``).

Only judged documents count: for each retrieved relevant document, the share of the top-R judged non-relevant
documents ranked above it is subtracted from 1. Judged non-relevant means 0 <= grade < rel; negative grades are
"in the pool, unjudged" to trec_eval and are skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, REL, TREC_EVAL, FloatArray, ratio
from evaluation.measures.base import MeasureDef


def bpref(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    level = params["rel"]
    rel = data.relevant(level)
    nonrel = data.judged & (data.grade >= 0) & (data.grade < level)
    n_rel = data.num_relevant(level)
    n_nonrel = data.segment_sum((data.ideal >= 0) & (data.ideal < level), ideal=True)
    above = data.segment_cumsum(nonrel)[rel]  # judged non-relevant ranked above each relevant hit
    t = data.topic_of[rel]
    cap = np.minimum(n_nonrel, n_rel)[t]
    penalty = ratio(np.minimum(above, n_rel[t]), cap)
    credit = np.where(above > 0, 1.0 - penalty, 1.0)
    return ratio(data.segment_sum_at(rel, credit), n_rel)


DEFINITION = MeasureDef(
    name="Bpref",
    family=FAMILY,
    summary="Binary preference: how often judged relevant documents precede judged non-relevant ones.",
    kernel=bpref,
    params=(REL,),
    cutoff="none",
    reference=TREC_EVAL,
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="Bpref = (1/R) sum_{relevant r} (1 - min(|n above r|, R) / min(N, R))",
    aliases=("BPref", "bpref"),
)

GEOMETRIC = MeasureDef(
    name="GMBpref",
    family=FAMILY,
    summary="Geometric mean Bpref: per topic Bpref; the run's value is their geometric mean (trec_eval gm_bpref).",
    kernel=bpref,
    params=(REL,),
    cutoff="none",
    reference="trec_eval gm_bpref",
    default_follows="trec_eval 10.0",
    formula="GMBpref = exp(mean_q log(max(Bpref_q, 1e-5))) (per topic: Bpref_q)",
    aggregate="geometric",
    notes="trec_eval prints gm_bpref only for all topics.",
)

DEFINITIONS = (DEFINITION, GEOMETRIC)
