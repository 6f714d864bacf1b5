"""Pieces shared by the ad hoc measures: the relevance-threshold parameter, safe division, gain tables."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from evaluation.params import Param

FloatArray = npt.NDArray[np.float64]

FAMILY = "adhoc"
TREC_EVAL = "trec_eval 9.0 (pytrec_eval); Appendix E.1"

REL = Param(
    "rel",
    "int",
    1,
    "minimum grade that counts as relevant (trec_eval -l)",
    minimum=1,
)


def ratio(num: npt.ArrayLike, den: npt.ArrayLike) -> FloatArray:
    """num / den per topic, 0 where den is 0 (spec 1.3: undefined values report 0)."""
    top = np.asarray(num, dtype=np.float64)
    bottom = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(top, bottom).shape, dtype=np.float64)
    np.divide(top, bottom, out=out, where=bottom != 0)
    return out


def table_gain(grade: np.ndarray, table: Sequence[float]) -> FloatArray:
    """Gain of each grade from a table indexed by grade 1, 2, ... (empty table: gain = grade).

    Grades of 0 or below gain 0; grades above the table's length take its last entry.
    """
    g = np.asarray(grade)
    if not table:
        return np.where(g > 0, g, 0).astype(np.float64)
    values = np.concatenate(([0.0], np.asarray(table, dtype=np.float64)))
    return np.asarray(values[np.clip(g, 0, len(table))], dtype=np.float64)


GAINS = Param(
    "gains",
    "table",
    (),
    "gain of each grade from grade 0, colon-separated (trec_eval's ndcg.1=3,2=9 = gains=0:3:9); grades beyond the"
    " table, and every grade by default, gain the grade itself",
)


def mapped_gain(grade: np.ndarray, judged: np.ndarray, table: Sequence[float]) -> np.ndarray:
    """trec_eval's gain of each judged grade (setup_gains in gain_init.c): ``table[grade]`` where the table has
    the grade, else the grade; negative grades and unjudged documents gain 0. Without a table the gains are the
    grades themselves, kept as integers (running sums of them are then exact and cheaper)."""
    g = np.asarray(grade)
    counted = np.asarray(judged) & (g >= 0)
    if not table:
        return np.where(counted, g, 0).astype(np.int64)
    values = np.asarray(table, dtype=np.float64)
    inside = counted & (g < values.size)
    out = np.where(counted, g, 0).astype(np.float64)
    out[inside] = values[g[inside]]
    return out


def gain_table_label(table: Sequence[float]) -> str:
    """trec_eval's parameter text of a gain table: the grades whose gain is not the grade (``1=3,2=9``)."""
    return ",".join(f"{i}={g:g}" for i, g in enumerate(table) if g != i)
