"""A ranking joined with ad hoc judgments over the evaluated topics: what every ad hoc measure reads.

Everything is flat: one element per retrieved document (all topics concatenated, best first within a topic)
plus each topic's judged grades sorted descending (the ideal list). Measures compute all topics at once with
segment sums over these arrays (spec 1.2-1.5).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np

from evaluation.model import FloatArray, IntArray, Qrels
from evaluation.ranking import Ranking

TopicPolicy = Literal["common", "complete"]
TOPIC_POLICIES: tuple[str, ...] = get_args(TopicPolicy)


def evaluated_topics(qrels: Qrels, run_topics: tuple[str, ...], policy: str) -> tuple[str, ...]:
    """Topics that count (spec 1.3): ``common`` = in both run and qrels; ``complete`` = every qrels topic."""
    if policy == "common":
        present = set(run_topics)
        return tuple(t for t in qrels.topics if t in present)
    if policy == "complete":
        return qrels.topics
    raise ValueError(f"unknown topic policy {policy!r}; choose one of {', '.join(TOPIC_POLICIES)}")


@dataclass(frozen=True, eq=False)
class JudgedRanking:
    """Retrieved documents with their grades, per evaluated topic, and each topic's ideal grades.

    ``grade`` is the raw judged grade (0 for unjudged documents; negative grades kept as judged), ``judged``
    says whether the document is in the topic's qrels at all. ``ideal`` holds each topic's judged grades
    sorted descending, delimited by ``ideal_offsets``.
    """

    topics: tuple[str, ...]
    offsets: IntArray
    topic_of: IntArray
    rank: IntArray  # 1-based position within the topic
    grade: IntArray
    judged: np.ndarray
    ideal: IntArray
    ideal_offsets: IntArray
    max_grade: int  # largest grade in the whole qrels (the collection's scale maximum)
    _memo: dict[object, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def n_topics(self) -> int:
        return len(self.topics)

    @property
    def ideal_topic_of(self) -> IntArray:
        return self._cached("ideal_topic_of", lambda: _segment_ids(self.ideal_offsets))

    @property
    def ideal_rank(self) -> IntArray:
        return self._cached("ideal_rank", lambda: _positions(self.ideal_offsets))

    def segment_sum(self, values: np.ndarray, *, ideal: bool = False) -> FloatArray:
        """Per-topic sums of a per-document (or, with ``ideal``, per-ideal-entry) array."""
        seg = self.ideal_topic_of if ideal else self.topic_of
        return np.bincount(seg, weights=values, minlength=self.n_topics).astype(np.float64)

    def segment_sum_at(self, mask: np.ndarray, values: np.ndarray) -> FloatArray:
        """Per-topic sums of ``values`` given only at the documents selected by ``mask``."""
        return np.bincount(self.topic_of[mask], weights=values, minlength=self.n_topics).astype(np.float64)

    def segment_cumsum(self, values: np.ndarray, *, ideal: bool = False) -> FloatArray:
        """Running sums restarting at each topic."""
        offsets = self.ideal_offsets if ideal else self.offsets
        total = np.cumsum(values, dtype=np.float64)
        before = np.concatenate(([0.0], total))[offsets[:-1]]
        return total - np.repeat(before, np.diff(offsets))

    def relevant(self, level: int = 1) -> np.ndarray:
        """Binary relevance of each retrieved document: grade >= level."""
        return self._cached(("relevant", level), lambda: self.grade >= level)

    def num_relevant(self, level: int = 1) -> FloatArray:
        """Per topic: judged documents with grade >= level (trec_eval's num_rel)."""
        return self._cached(("num_rel", level), lambda: self.segment_sum(self.ideal >= level, ideal=True))

    def within(self, cutoff: int | None) -> np.ndarray:
        """Mask of documents ranked at or above ``cutoff`` (all when None)."""
        if cutoff is None:
            return np.ones(self.rank.size, dtype=bool)
        return self._cached(("within", cutoff), lambda: self.rank <= cutoff)

    def _cached(self, key: object, make: object) -> np.ndarray:
        hit = self._memo.get(key)
        if hit is None:
            hit = make()  # type: ignore[operator]
            self._memo[key] = hit
        return hit


def judge_ranking(qrels: Qrels, ranking: Ranking, topics: tuple[str, ...]) -> JudgedRanking:
    """Join a ranking with the qrels' single-aspect view, restricted to (and ordered by) ``topics``."""
    run = ranking.run
    wanted = {t: i for i, t in enumerate(topics)}
    run_to_eval = np.array([wanted.get(t, -1) for t in run.topics], dtype=np.int64)
    row_topic = run.topic[ranking.order]
    eval_topic = run_to_eval[row_topic] if run_to_eval.size else row_topic
    keep = eval_topic >= 0
    order = ranking.order[keep]
    topic_of = eval_topic[keep]
    counts = np.bincount(topic_of, minlength=len(topics))
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    rank = _positions(offsets)

    adhoc = qrels.adhoc
    q_index = qrels.topic_index
    eval_to_qrels = np.array([q_index.get(t, -1) for t in topics], dtype=np.int64)
    docno = run.docno[order]
    vocab = qrels.docnos
    if vocab.size and docno.size:
        at = np.minimum(np.searchsorted(vocab, docno), vocab.size - 1)
        doc = np.where(vocab[at] == docno, at, -1)
    else:
        doc = np.full(docno.size, -1, dtype=np.int64)
    qtopic = eval_to_qrels[topic_of] if topic_of.size else topic_of
    key = qtopic * np.int64(max(1, vocab.size)) + doc
    if adhoc.key.size and key.size:
        at = np.minimum(np.searchsorted(adhoc.key, key), adhoc.key.size - 1)
        judged = (adhoc.key[at] == key) & (doc >= 0) & (qtopic >= 0)
        grade = np.where(judged, adhoc.grade[at], 0)
    else:
        judged = np.zeros(key.size, dtype=bool)
        grade = np.zeros(key.size, dtype=np.int64)

    ideal, ideal_offsets = _select_segments(adhoc.ideal_grades, adhoc.offsets, eval_to_qrels)
    return JudgedRanking(
        topics, offsets, topic_of, rank, grade.astype(np.int64), judged, ideal, ideal_offsets, qrels.max_grade
    )


def _select_segments(values: IntArray, offsets: IntArray, pick: IntArray) -> tuple[IntArray, IntArray]:
    """Concatenate the segments ``pick`` (index -1 = empty) of a segmented array."""
    valid = pick >= 0
    safe = np.where(valid, pick, 0)
    lengths = np.where(valid, offsets[safe + 1] - offsets[safe], 0) if pick.size else pick
    new_offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    total = int(new_offsets[-1])
    if total == 0:
        return np.zeros(0, dtype=np.int64), new_offsets
    shift = np.repeat(offsets[safe] - new_offsets[:-1], lengths)
    return values[np.arange(total) + shift], new_offsets


def _segment_ids(offsets: IntArray) -> IntArray:
    return np.repeat(np.arange(offsets.size - 1, dtype=np.int64), np.diff(offsets))


def _positions(offsets: IntArray) -> IntArray:
    """1-based position of each element within its segment."""
    total = int(offsets[-1]) if offsets.size else 0
    return np.arange(total, dtype=np.int64) - np.repeat(offsets[:-1], np.diff(offsets)) + 1
