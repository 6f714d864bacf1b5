"""What the score-driven measures read: a run's judged ranking joined with the items' true scores, and each
evaluated topic's candidate pool (every item the item-score file lists for it), shared by all runs.

Topics are matched with the item scores' instances and docnos with their items. A retrieved document without
a score for its topic is non-relevant (phi = 0) and does not enter the statistics; a topic without item scores
has an empty pool, so every value is 0 (spec 2.9 edge cases, spec 1.3).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evaluation.formats.item_scores import ItemScores
from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.scored.phi import PhiCurves, fit_phi
from evaluation.model import FloatArray, IntArray


@dataclass(eq=False)
class ItemPool:
    """The candidate items' scores of each evaluated topic (ascending within a topic), with the relevance
    functions and ideal DCGs derived from them, computed once per parameter value and shared by every run."""

    topics: tuple[str, ...]
    table: ItemScores
    values: FloatArray
    offsets: IntArray
    _curves: dict[float, PhiCurves] = field(default_factory=dict, repr=False)
    _ideal: dict[tuple[float, int | None], FloatArray] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, table: ItemScores, topics: tuple[str, ...]) -> ItemPool:
        pools = [np.sort(table.of(t)[1]) for t in topics]
        sizes = np.array([p.size for p in pools], dtype=np.int64)
        offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        values = np.concatenate(pools) if pools else np.zeros(0, dtype=np.float64)
        return cls(topics, table, values.astype(np.float64), offsets)

    @property
    def topic_of(self) -> IntArray:
        return np.repeat(np.arange(len(self.topics), dtype=np.int64), np.diff(self.offsets))

    def curves(self, coef: float) -> PhiCurves:
        """Every topic's relevance function for a box-plot coefficient."""
        found = self._curves.get(coef)
        if found is None:
            found = self._curves[coef] = fit_phi(self.values, self.offsets, coef)
        return found

    def ideal_dcg(self, coef: float, cutoff: int | None) -> FloatArray:
        """Per topic: DCG_phi of the pool sorted by phi descending, truncated at the cutoff."""
        key = (coef, cutoff)
        found = self._ideal.get(key)
        if found is None:
            topic_of = self.topic_of
            phi = self.curves(coef)(topic_of, self.values)
            order = np.lexsort((-phi, topic_of))
            rank = np.arange(phi.size, dtype=np.int64) - np.repeat(self.offsets[:-1], np.diff(self.offsets)) + 1
            top = rank <= cutoff if cutoff is not None else np.ones(rank.size, dtype=bool)
            gain = (np.exp2(phi[order][top]) - 1.0) / np.log2(rank[top] + 1.0)
            found = np.bincount(topic_of[top], weights=gain, minlength=len(self.topics)).astype(np.float64)
            found.flags.writeable = False
            self._ideal[key] = found
        return found


@dataclass(frozen=True, eq=False)
class ScoredRanking:
    """A run's ranking (``docs``) with each retrieved document's true score (NaN: no score for its topic) and
    the pool of the evaluated topics."""

    docs: JudgedRanking
    score: FloatArray
    pool: ItemPool


def join_scores(docs: JudgedRanking, docnos: np.ndarray, pool: ItemPool) -> ScoredRanking:
    """Look up the true score of every retrieved document (``docnos`` aligned with ``docs``)."""
    score = np.full(docnos.size, np.nan, dtype=np.float64)
    for i, topic in enumerate(docs.topics):
        lo, hi = int(docs.offsets[i]), int(docs.offsets[i + 1])
        if hi > lo:
            score[lo:hi] = pool.table.lookup(topic, docnos[lo:hi])
    return ScoredRanking(docs, score, pool)
