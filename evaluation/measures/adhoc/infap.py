"""Inferred AP -- ``infAP`` (trec_eval ``infAP``; Yilmaz & Aslam, CIKM 2006): AP estimated from sampled
judgments. Documents not in the qrels are skipped; documents judged with a negative grade are "pooled but
not judged"; the precision above each relevant document is inferred from the judged ones above it.
With complete judgments (no negative grades) it equals AP's sum over R with trec_eval's smoothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, REL, TREC_EVAL, FloatArray, ratio
from evaluation.measures.base import MeasureDef

#: trec_eval's INFAP_EPSILON: smoothing of the inferred precision above a relevant document
EPSILON = 0.00001


def inferred_ap(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    level = params["rel"]
    rel = data.relevant(level) & data.within(cutoff)
    nonrel = data.judged & (data.grade >= 0) & (data.grade < level)
    unjudged = data.judged & (data.grade < 0)
    r = data.segment_cumsum(data.relevant(level), exclusive=True)[rel]
    n = data.segment_cumsum(nonrel, exclusive=True)[rel]
    u = data.segment_cumsum(unjudged, exclusive=True)[rel]
    position = data.rank[rel].astype(np.float64)  # j + 1 in trec_eval's loop
    above = position - 1.0
    inferred = np.where(
        above == 0,
        1.0,
        1.0 / position + (above / position) * ((r + n + u) / np.where(above == 0, 1.0, above))
        * ((r + EPSILON) / (r + n + 2 * EPSILON)),
    )
    return ratio(data.segment_sum_at(rel, inferred), data.num_relevant(level))


DEFINITION = MeasureDef(
    name="infAP",
    family=FAMILY,
    summary="Inferred average precision: AP with sampled judgments (negative grade = pooled, not judged).",
    kernel=inferred_ap,
    params=(REL,),
    cutoff="optional",
    reference="Yilmaz & Aslam, CIKM 2006; " + TREC_EVAL,
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="infAP = (1/R) sum_{J(d_i)=1} [1/i + ((i-1)/i) * (|d<i judged or pooled|/(i-1))"
            " * (rel<i + eps)/(rel<i + nonrel<i + 2 eps)]",
)
