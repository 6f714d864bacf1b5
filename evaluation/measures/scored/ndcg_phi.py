"""nDCG with data-driven relevance -- ``nDCG_phi(coef=1.5)@k`` (spec 2.9; Moniz, Torgo & Vinagre 2016).

Relevance comes from the items' true scores (``--item-scores``), not from judgments: each topic's relevance
function phi is a PCHIP curve through (0, 0), (median, 0), the box-plot upper whisker at
``(W - ymin)/(ymax - ymin)`` when there are upper outliers, and (ymax, 1), fitted on the positive scores of all
the topic's candidate items (``phi.fit_phi``). Gain ``2^phi - 1``, discount ``1/log2(rank + 1)``; the ideal list
is every candidate item sorted by phi, truncated at k like the run. The qrels only decide which topics count.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.measures.base import MeasureDef
from evaluation.measures.scored.items import ScoredRanking
from evaluation.model import FloatArray
from evaluation.params import Param

FAMILY = "scored"
#: the prepared input these measures read (``evaluation.measures.scored.inputs``)
INPUT = "item_scores"


def ndcg_phi(data: ScoredRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    coef = float(params["coef"])
    docs = data.docs
    within = docs.within(cutoff)
    relevance = data.pool.curves(coef)(docs.topic_of[within], data.score[within])
    dcg = docs.segment_sum_at(within, (np.exp2(relevance) - 1.0) / np.log2(docs.rank[within] + 1.0))
    idcg = data.pool.ideal_dcg(coef, cutoff)
    out = np.zeros(dcg.size, dtype=np.float64)
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return out


DEFINITION = MeasureDef(
    name="nDCG_phi",
    family=FAMILY,
    summary="nDCG whose relevance is interpolated from the items' true scores (PCHIP through median, box-plot"
    " whisker and maximum), so swapping items with very different scores costs more.",
    kernel=ndcg_phi,
    params=(
        Param("coef", "float", 1.5, "box-plot coefficient: scores above upper hinge + coef * (upper - lower"
              " hinge) are outliers (R boxplot.stats; 0 = no outliers)", minimum=0.0),
    ),
    cutoff="optional",
    inputs=(INPUT,),
    reference="Moniz, Torgo & Vinagre, Data-Driven Relevance Judgments for Ranking Evaluation, arXiv 2016;"
    " control points as the authors' R code GoD_phi (spec 2.9, 11.3); R fivenum/boxplot.stats; PCHIP as"
    " MATLAB pchip / SciPy PchipInterpolator",
    formula="nDCG_phi@k = sum_{i<=k} (2^phi(y_i) - 1)/log2(i+1) / IDCG_phi@k (ideal: all candidate items by phi);"
    " phi = PCHIP through (0,0), (m,0), [(W, (W - ymin)/(ymax - ymin)) if m < W < ymax], (ymax,1) over the"
    " positive scores (m median, W upper whisker); 0 when IDCG_phi@k = 0",
    notes="Needs item scores 'instance item score' (--item-scores FILE; the collection's 'item_scores' file). A"
    " retrieved item without a score for its topic has phi = 0; zero scores have phi = 0; a topic whose positive"
    " scores are all equal, or whose median is the maximum, has phi = 1 at the maximum and 0 elsewhere.",
)

DEFINITIONS = (DEFINITION,)
