"""Set utility -- ``Utility(a=1,b=-1,c=0,d=0,docs=0)`` (trec_eval ``utility``): a weighted sum of the
contingency table of the retrieved set, ``a`` per relevant retrieved, ``b`` per non-relevant retrieved, ``c`` per
relevant missed, ``d`` per non-relevant missed out of ``docs`` documents in the collection (trec_eval -N)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, REL, FloatArray
from evaluation.measures.base import MeasureDef
from evaluation.params import Param


def utility(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    """trec_eval's weighted sum; a topic with nothing retrieved scores 0, as trec_eval -c scores missing topics."""
    level = params["rel"]
    found = data.segment_sum(data.relevant(level))
    retrieved = data.segment_sum(data.within(None))
    relevant = data.num_relevant(level)
    docs = float(params["docs"])
    value = (float(params["a"]) * found + float(params["b"]) * (retrieved - found)
             + float(params["c"]) * (relevant - found)
             + float(params["d"]) * (docs + found - retrieved - relevant))
    return np.where(retrieved > 0, value, 0.0)


DEFINITION = MeasureDef(
    name="Utility",
    family=FAMILY,
    summary="Set utility: a*relevant retrieved + b*non-relevant retrieved + c*relevant missed + d*others missed.",
    kernel=utility,
    params=(
        Param("a", "float", 1.0, "worth of each relevant retrieved document"),
        Param("b", "float", -1.0, "worth of each non-relevant retrieved document"),
        Param("c", "float", 0.0, "worth of each relevant document not retrieved"),
        Param("d", "float", 0.0, "worth of each non-relevant document not retrieved (needs docs)"),
        Param("docs", "int", 0, "documents in the collection (trec_eval -N)", minimum=0),
        REL,
    ),
    cutoff="none",
    reference="trec_eval utility (utility.a,b,c,d)",
    default_follows="trec_eval 10.0",
    formula="Utility = a*C + b*(n-C) + c*(R-C) + d*(docs+C-n-R), C = relevant retrieved; 0 when n = 0",
)
