"""Normalised discounted cumulative gain -- ``nDCG(gain=lin|exp)@k`` (spec 2.4; trec_eval ``ndcg``/``ndcg_cut``).

Gain is the grade (``lin``, trec_eval) or ``2^grade - 1`` (``exp``, gdeval); discount ``1/log2(rank + 1)``; the
ideal list is every judged document sorted by grade, truncated at k like the run. Grades <= 0 gain nothing.
``gains=0:3:9`` gives each grade its own gain (trec_eval's ``ndcg.1=3,2=9``; grades beyond the table gain the grade).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, GAINS, TREC_EVAL, FloatArray, mapped_gain, ratio
from evaluation.measures.base import MeasureDef
from evaluation.params import Param


def gain_of(grade: np.ndarray, kind: str) -> FloatArray:
    positive = np.maximum(grade, 0).astype(np.float64)
    return positive if kind == "lin" else np.asarray(np.exp2(positive) - 1.0, dtype=np.float64)


def ndcg(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    kind, table = params["gain"], params["gains"]
    within = data.within(cutoff)
    ideal_rank = data.ideal_rank
    top = ideal_rank <= cutoff if cutoff is not None else np.ones(ideal_rank.size, dtype=bool)
    if table:  # trec_eval's gain map: the ideal list is re-sorted by gain
        gain = mapped_gain(data.grade[within], data.judged[within], table)
        ideal = mapped_gain(data.ideal, np.ones(data.ideal.size, dtype=bool), table)
        ideal = np.maximum(ideal[np.lexsort((-ideal, data.ideal_topic_of))], 0.0)[top]
    else:
        gain, ideal = gain_of(data.grade[within], kind), gain_of(data.ideal[top], kind)
    dcg = data.segment_sum_at(within, gain / np.log2(data.rank[within] + 1.0))
    ideal_gain = ideal / np.log2(ideal_rank[top] + 1.0)
    idcg = np.bincount(data.ideal_topic_of[top], weights=ideal_gain, minlength=data.n_topics)
    return ratio(dcg, idcg)


DEFINITION = MeasureDef(
    name="nDCG",
    family=FAMILY,
    summary="Normalised discounted cumulative gain (linear gain by default, as trec_eval).",
    kernel=ndcg,
    params=(Param("gain", "choice", "lin", "gain of a grade g: lin = g, exp = 2^g - 1", choices=("lin", "exp")),
            GAINS.only_when("gain", "lin")),
    cutoff="optional",
    reference=TREC_EVAL + "; gain=exp as gdeval (Jarvelin & Kekalainen 2002; Burges et al. 2005)",
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="nDCG@k = sum_{i<=k} gain(g_i)/log2(i+1) / IDCG@k; 0 when IDCG@k = 0",
    aliases=("NDCG",),
)
