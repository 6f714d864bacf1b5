"""Geometric mean AP -- ``GMAP`` (trec_eval ``gm_map``; Robertson, 2006): per topic AP, over topics
the geometric mean with each value floored at 1e-5, so that poor topics weigh more than in MAP."""

from __future__ import annotations

from evaluation.measures.adhoc._shared import FAMILY, REL, TREC_EVAL
from evaluation.measures.adhoc.ap import average_precision
from evaluation.measures.base import MeasureDef

DEFINITION = MeasureDef(
    name="GMAP",
    family=FAMILY,
    summary="Geometric mean average precision: per topic AP; the run's value is their geometric mean.",
    kernel=average_precision,
    params=(REL,),
    cutoff="optional",
    reference=TREC_EVAL,
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="GMAP = exp(mean_q log(max(AP_q, 1e-5))) (per topic: AP_q)",
    aggregate="geometric",
    notes="trec_eval prints gm_map only for all topics; its per-topic value (pytrec_eval) is log(max(AP, 1e-5)).",
)
