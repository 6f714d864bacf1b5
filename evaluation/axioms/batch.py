"""Scoring many comparisons at once: every distinct (pool, ranking) becomes one topic of a single in-memory
qrels and run, so a measure scores all instances of a constraint in one vectorised evaluation.

Each topic carries its instance's whole pool as judgments (every document judged for every intent of the
instance) and its intent weights; the run ranks the documents exactly in the given order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evaluation.axioms.instances import Comparison, Pool
from evaluation.evaluator import Evaluator
from evaluation.measures.base import Measure
from evaluation.model import FloatArray, IntArray, IntentWeights, Qrels, Run


class Batch:
    """The topics of a list of comparisons: ``higher[c]`` and ``lower[c]`` are topic numbers of comparison c."""

    def __init__(self, comparisons: Sequence[Comparison]) -> None:
        self.rankings: list[tuple[Pool, tuple[str, ...]]] = []
        index: dict[tuple[int, tuple[str, ...]], int] = {}

        def topic_of(pool: Pool, ranking: tuple[str, ...]) -> int:
            key = (id(pool), ranking)
            found = index.get(key)
            if found is None:
                found = index[key] = len(self.rankings)
                self.rankings.append((pool, ranking))
            return found

        self.higher = np.array([topic_of(c.pool, c.higher) for c in comparisons], dtype=np.int64)
        self.lower = np.array([topic_of(c.pool, c.lower) for c in comparisons], dtype=np.int64)
        self.labels = tuple(f"q{k:07d}" for k in range(len(self.rankings)))
        self._inputs: tuple[Qrels, Run, IntentWeights] | None = None

    def inputs(self) -> tuple[Qrels, Run, IntentWeights]:
        """The qrels, run and intent weights holding every topic of the batch."""
        intents = sorted({t for pool, _ in self.rankings for t in pool.intents})
        intent_id = {t: k for k, t in enumerate(intents)}
        tables: dict[int, tuple[np.ndarray, IntArray, IntArray]] = {}
        q_intent: list[IntArray] = []
        q_doc: list[np.ndarray] = []
        q_grade: list[IntArray] = []
        q_size: list[int] = []
        r_doc: list[str] = []
        r_size: list[int] = []
        weights: dict[str, dict[str, float]] = {}
        for k, (pool, ranking) in enumerate(self.rankings):
            table = tables.get(id(pool))
            if table is None:
                table = tables[id(pool)] = _rows(pool, intent_id)
            docs, intent, grade = table
            q_doc.append(docs)
            q_intent.append(intent)
            q_grade.append(grade)
            q_size.append(grade.size)
            r_doc.extend(ranking)
            r_size.append(len(ranking))
            weights[self.labels[k]] = dict(zip(pool.intents, pool.weights))
        n_topics = len(self.labels)
        docnos, doc = np.unique(np.concatenate(q_doc), return_inverse=True)
        topic = np.repeat(np.arange(n_topics, dtype=np.int64), q_size)
        intent = np.concatenate(q_intent)
        doc = doc.astype(np.int64).ravel()
        order = np.lexsort((intent, doc, topic))
        qrels = Qrels(
            self.labels, tuple(intents), docnos, topic[order], intent[order], doc[order],
            np.concatenate(q_grade)[order], name="axioms",
        )
        counts = np.array(r_size, dtype=np.int64)
        run_topic = np.repeat(np.arange(n_topics, dtype=np.int64), counts)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        pos = np.arange(run_topic.size, dtype=np.int64) - np.repeat(starts, counts) + 1
        run = Run("axioms", self.labels, run_topic, np.array(r_doc, dtype=np.bytes_), (1e6 - pos).astype(np.float64),
                  pos)
        return qrels, run, IntentWeights(weights, name="axioms")

    def score(self, measure: Measure) -> tuple[FloatArray, FloatArray]:
        """The measure's value of the higher and the lower ranking of every comparison."""
        if self._inputs is None:
            self._inputs = self.inputs()  # built once, shared by every measure scored on this batch
        qrels, run, weights = self._inputs
        evaluator = Evaluator(qrels, [measure], ties="trec", topics="complete", intent_weights=weights)
        values = np.asarray(evaluator.evaluate(run).values[measure.name], dtype=np.float64)
        return values[self.higher], values[self.lower]


def score(measure: Measure, comparisons: Sequence[Comparison]) -> tuple[FloatArray, FloatArray]:
    """Q(higher) and Q(lower) of every comparison."""
    if not comparisons:
        return np.zeros(0), np.zeros(0)
    return Batch(comparisons).score(measure)


def _rows(pool: Pool, intent_id: dict[str, int]) -> tuple[np.ndarray, IntArray, IntArray]:
    """A pool's judgment rows (one per document and intent): document names, intent numbers, grades."""
    ids = np.array([intent_id[t] for t in pool.intents], dtype=np.int64)
    docs = np.array(list(pool.grades), dtype=np.bytes_)
    grades = np.array(list(pool.grades.values()), dtype=np.int64).ravel()
    return np.repeat(docs, ids.size), np.tile(ids, docs.size), grades
