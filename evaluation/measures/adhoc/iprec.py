"""Interpolated precision at a recall level -- ``IPrec(recall=r)`` (trec_eval ``iprec_at_recall_0.00`` ...
``_1.00``): the highest precision reached once recall r is reached -- and its average over recall levels,
``IPrecAvg`` (trec_eval ``11pt_avg``).

trec_eval versions differ on when r is reached: trec_eval 9 (pytrec_eval and so ir_measures; ``reach=ratio``,
the default of ``IPrec``) at the first relevant document with C/R >= r; trec_eval 10.0 (``reach=rounded``, what
its name ``iprec_at_recall_r`` gives) at the relevant document numbered lround(r * R), halves away from zero
(m_iprec_at_recall.c)."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, REL, TREC_EVAL, FloatArray
from evaluation.measures.base import MeasureDef
from evaluation.model import IntArray
from evaluation.params import Param

#: trec_eval's 11 standard recall levels (its default iprec_at_recall and 11pt_avg parameters)
ELEVEN_POINTS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def c_lround(x: FloatArray) -> FloatArray:
    """C's lround for non-negative values: the nearest integer, halves away from zero (exact, unlike
    floor(x + 0.5), which rounds 0.49999999999999994 up)."""
    whole = np.trunc(x)
    return whole + (x - whole >= 0.5)


Precisions = tuple[FloatArray, IntArray, IntArray]
#: relevant_precisions per judged ranking: the 11 levels trec_eval prints share one pass over the run
_SHARED: weakref.WeakKeyDictionary[JudgedRanking, dict[tuple[int, int | None], Precisions]] = (
    weakref.WeakKeyDictionary()
)
_SHARED_LOCK = threading.Lock()


def relevant_precisions(data: JudgedRanking, level: int, cutoff: int | None) -> Precisions:
    """The precision at each relevant retrieved document, topic by topic in rank order, each topic's first index
    into them and their count (computed once per judged ranking, level and cutoff)."""
    with _SHARED_LOCK:
        known = _SHARED.setdefault(data, {}).get((level, cutoff))
    if known is None:
        known = _relevant_precisions(data, level, cutoff)
        for array in known:
            array.flags.writeable = False  # shared by the measures of this ranking
        with _SHARED_LOCK:
            _SHARED.setdefault(data, {})[(level, cutoff)] = known
    return known


def _relevant_precisions(data: JudgedRanking, level: int, cutoff: int | None) -> Precisions:
    rel = data.relevant(level) & data.within(cutoff)
    precision = data.segment_cumsum(data.relevant(level))[rel] / data.rank[rel]
    count = np.bincount(data.topic_of[rel], minlength=data.n_topics)
    start = np.concatenate(([0], np.cumsum(count)[:-1])).astype(np.int64)
    return precision, start, count


def interpolated_precision_at(data: JudgedRanking, recall: float, level: int, reach: str,
                              cutoff: int | None,
                              precisions: Precisions | None = None) -> FloatArray:
    """Per topic IPrec at one recall level (see the module docstring for ``reach``): the best precision from the
    first relevant document that reaches the level on; ``precisions`` = ``relevant_precisions`` if known."""
    precision, start, count = precisions if precisions is not None else relevant_precisions(data, level, cutoff)
    relevant = data.num_relevant(level)
    if reach == "rounded":
        needed = np.maximum(c_lround(recall * relevant), 1.0).astype(np.int64)
    else:  # the first relevant document j (1-based) with j / R >= r, as the ratio is computed
        position = np.arange(precision.size, dtype=np.int64) - np.repeat(start, count) + 1
        short = position / np.repeat(relevant, count) < recall
        needed = np.bincount(np.repeat(np.arange(data.n_topics), count), weights=short,
                             minlength=data.n_topics).astype(np.int64) + 1
    reached = np.flatnonzero(needed <= count)
    out = np.zeros(data.n_topics, dtype=np.float64)
    if reached.size:  # the maximum over [first reaching, end of topic): one reduceat over both bounds
        bounds = np.column_stack((start[reached] + needed[reached] - 1, start[reached] + count[reached])).ravel()
        out[reached] = np.maximum.reduceat(np.append(precision, 0.0), bounds)[::2]
    return out


def interpolated_precision(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    return interpolated_precision_at(data, float(params["recall"]), params["rel"], params["reach"], cutoff)


def interpolated_precision_average(data: JudgedRanking, params: Mapping[str, Any],
                                   cutoff: int | None) -> FloatArray:
    """The mean of IPrec over the recall levels (m_11pt_avg.c), summed level by level in the given order."""
    total = np.zeros(data.n_topics, dtype=np.float64)
    precisions = relevant_precisions(data, params["rel"], cutoff)
    for recall in params["levels"]:
        total += interpolated_precision_at(data, float(recall), params["rel"], params["reach"], cutoff, precisions)
    return total / len(params["levels"])


def _reach(default: str) -> Param:
    return Param("reach", "choice", default, "when recall r counts as reached: ratio = C/R >= r (trec_eval 9,"
                 " pytrec_eval, ir_measures); rounded = C >= lround(r*R) (trec_eval 10.0)",
                 choices=("ratio", "rounded"))


DEFINITION = MeasureDef(
    name="IPrec",
    family=FAMILY,
    summary="Interpolated precision at a recall level: best precision at or beyond that recall.",
    kernel=interpolated_precision,
    params=(
        Param("recall", "float", None, "recall level in [0, 1] (trec_eval: 0.00, 0.10, ..., 1.00)",
              minimum=0.0, maximum=1.0),
        REL,
        _reach("ratio"),
    ),
    cutoff="optional",
    reference=TREC_EVAL + "; trec_eval 10.0 iprec_at_recall_r = IPrec(recall=r,reach=rounded)",
    default_follows="trec_eval 9.0 (pytrec_eval)",
    formula="IPrec(r) = max{ C(i)/i : J(d_i) = 1, C(i)/R >= r } (0 if none); reach=rounded: C(i) >= lround(r*R)",
)

AVERAGE = MeasureDef(
    name="IPrecAvg",
    family=FAMILY,
    summary="Interpolated precision averaged over recall levels (11-point average by default).",
    kernel=interpolated_precision_average,
    params=(
        Param("levels", "table", ELEVEN_POINTS, "the recall levels, colon-separated (trec_eval 11pt_avg.0,.5,1"
              " = levels=0:0.5:1)"),
        REL,
        _reach("rounded"),
    ),
    cutoff="none",
    reference="trec_eval 10.0 11pt_avg",
    default_follows="trec_eval 10.0",
    formula="IPrecAvg = (1/|levels|) sum_{r in levels} IPrec(recall=r,reach=rounded)",
)

DEFINITIONS = (DEFINITION, AVERAGE)
