"""Per-intent judgments joined with a ranking: what every intent-aware and diversity measure reads.

Intents are numbered as *slots*: one per (topic, intent) that has at least one relevant document (spec 1.4:
intents without relevant documents are dropped and weights renormalised over the rest). Relevant judgments of
retrieved documents are flat *hits* (retrieved position, slot, grade), sorted by position then slot, so
redundancy counts and novelty gains are segment operations, not loops (spec section 3, Appendix E.2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar, cast

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.model import FloatArray, IntArray, IntentWeights, Qrels
from evaluation.segments import expand_ranges

T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class IntentSlots:
    """Relevant intents of every qrels topic at one relevance level, and the relevant (document, intent) pairs.

    ``pair_*`` lists each relevant per-intent judgment, grouped by the ad hoc entry (topic, doc) it belongs to:
    entry ``e`` owns pairs ``pair_offsets[e]:pair_offsets[e+1]``, slots ascending.
    """

    level: int
    slot_topic: IntArray  # qrels topic index of each slot (slots sorted by topic, then intent)
    slot_intent: IntArray  # qrels intent index
    slot_offsets: IntArray  # per qrels topic
    n_relevant: FloatArray  # R_t per slot
    max_grade: FloatArray  # highest grade per slot
    weight: FloatArray  # w*(t): given weights (or uniform) renormalised over the topic's slots
    pair_offsets: IntArray  # per ad hoc entry
    pair_slot: IntArray
    pair_grade: IntArray
    pair_doc: IntArray  # qrels doc id of each pair (for ideal rankings)
    _memo: dict[object, object] = field(default_factory=dict, repr=False)
    #: the last list of evaluated topics and the memo of values derived from it (see ``for_topics``)
    _topics_memo: list[tuple[tuple[str, ...], dict[object, object]]] = field(default_factory=list, repr=False)

    @property
    def n_slots(self) -> int:
        return int(self.slot_topic.size)

    def memo(self, key: object, make: Callable[[], T]) -> T:
        """Per-qrels cache for ideal rankings and other run-independent results."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]  # type: ignore[return-value]

    def for_topics(self, topics: tuple[str, ...]) -> dict[object, object]:
        """A memo for values that depend only on these slots and a list of evaluated topics (ideal gains per
        evaluated topic, normalisers), shared by the runs evaluated on that list -- usually all of them. Only
        the latest list is kept, so an evaluator fed runs with ever different topics does not grow."""
        last = self._topics_memo[-1] if self._topics_memo else None
        if last is not None and (last[0] is topics or last[0] == topics):
            return last[1]
        store: dict[object, object] = {}
        self._topics_memo[:] = [(topics, store)]
        return store


def intent_slots(qrels: Qrels, level: int = 1, weights: IntentWeights | None = None) -> IntentSlots:
    """Number the intents with a relevant document (grade >= level) and list the relevant pairs."""
    rel = qrels.grade >= level
    n_intents = max(1, len(qrels.intents))
    key = qrels.topic[rel] * n_intents + qrels.intent[rel]
    slot_key, slot_of_pair = np.unique(key, return_inverse=True)
    slot_topic = slot_key // n_intents
    slot_intent = slot_key % n_intents
    n_slots = slot_key.size
    n_relevant = np.bincount(slot_of_pair, minlength=n_slots).astype(np.float64)
    max_grade = np.zeros(n_slots)
    np.maximum.at(max_grade, slot_of_pair, qrels.grade[rel])
    slot_offsets = np.searchsorted(slot_topic, np.arange(len(qrels.topics) + 1)).astype(np.int64)
    weight = _weights(qrels, slot_topic, slot_intent, slot_offsets, weights)

    adhoc = qrels.adhoc
    rows = np.flatnonzero(rel)  # qrels rows are sorted by (topic, doc, intent) like the ad hoc entries
    entry_of_row = np.searchsorted(adhoc.row_start, rows, side="right") - 1
    pair_offsets = np.searchsorted(entry_of_row, np.arange(adhoc.grade.size + 1)).astype(np.int64)
    return IntentSlots(
        level,
        slot_topic.astype(np.int64),
        slot_intent.astype(np.int64),
        slot_offsets,
        n_relevant,
        max_grade,
        weight,
        pair_offsets,
        slot_of_pair.astype(np.int64).ravel(),
        qrels.grade[rows].astype(np.int64),
        qrels.doc[rows].astype(np.int64),
    )


def _weights(
    qrels: Qrels,
    slot_topic: IntArray,
    slot_intent: IntArray,
    slot_offsets: IntArray,
    weights: IntentWeights | None,
) -> FloatArray:
    """Given weights of the relevant intents (uniform where none are given), renormalised per topic."""
    raw = np.ones(slot_topic.size)
    if weights is not None:
        for s, (t, i) in enumerate(zip(slot_topic.tolist(), slot_intent.tolist())):
            given = weights.for_topic(qrels.topics[t])
            if given is not None:
                raw[s] = given.get(qrels.intents[i], 0.0)
    total = np.bincount(slot_topic, weights=raw, minlength=len(qrels.topics))
    per_slot = total[slot_topic] if slot_topic.size else raw
    return np.divide(raw, per_slot, out=np.zeros_like(raw), where=per_slot > 0)


@dataclass(frozen=True, eq=False)
class IntentRanking:
    """A judged ranking plus its relevant per-intent hits and the evaluated topics' intent slots."""

    docs: JudgedRanking
    slots: IntentSlots
    slot_eval_topic: IntArray  # evaluated-topic index of each slot (-1: topic not evaluated)
    qrels_topic: IntArray  # qrels topic index of each evaluated topic (-1: not in the qrels)
    hit_pos: IntArray  # index into ``docs`` arrays (retrieved position), ascending
    hit_slot: IntArray
    hit_grade: IntArray
    _memo: dict[object, object] = field(default_factory=dict, repr=False)
    _shared: dict[object, object] = field(default_factory=dict, repr=False)  # ``IntentSlots.for_topics``

    @property
    def n_topics(self) -> int:
        return self.docs.n_topics

    def memo(self, key: object, make: Callable[[], T]) -> T:
        """Cache for arrays several measures of one run share (novelty gains, ideal profiles)."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]  # type: ignore[return-value]

    def shared(self, key: object, make: Callable[[], T]) -> T:
        """Cache for values that depend only on the slots and the evaluated topics, not on the run (the greedy
        ideal of the evaluated topics, normalisers): computed once for all runs evaluated on the same topics.
        Values kept here are shared between runs and must not be modified."""
        if key not in self._shared:
            self._shared[key] = make()
        return self._shared[key]  # type: ignore[return-value]

    def n_slots_per_topic(self) -> FloatArray:
        """|T*| per evaluated topic (most diversity measures divide by it; shared by the runs)."""
        return self.shared("n-slots", self._n_slots_per_topic)

    def _n_slots_per_topic(self) -> FloatArray:
        valid = self.slot_eval_topic >= 0
        counts = np.bincount(self.slot_eval_topic[valid], minlength=self.n_topics).astype(np.float64)
        counts.flags.writeable = False  # shared by every measure of the run
        return counts

    def hit_docs(self) -> IntArray:
        """The retrieved positions that have at least one hit (relevant to some intent), ascending."""
        return self.memo("hit-docs", self._hit_docs)

    def _hit_docs(self) -> IntArray:
        pos = self.hit_pos
        if pos.size == 0:
            return pos
        first = np.ones(pos.size, dtype=bool)
        first[1:] = pos[1:] != pos[:-1]
        return pos[first]

    def hit_rank(self) -> IntArray:
        """1-based rank of every hit (once per run: the cutoff measures all read it)."""
        return self.memo("hit-rank", lambda: self.docs.rank[self.hit_pos])

    def per_topic(self, per_slot: np.ndarray) -> FloatArray:
        """Sum a per-slot array into evaluated topics."""
        valid = self.slot_eval_topic >= 0
        return np.bincount(
            self.slot_eval_topic[valid], weights=per_slot[valid], minlength=self.n_topics
        ).astype(np.float64)

    def earlier_hits(self) -> IntArray:
        """For every hit, how many documents above it are relevant to the same intent: c_t(i) (computed once
        per run: novelty gains, AP-IA, Q-IA and the Cube Test all read it)."""
        return self.memo("earlier-hits", self._earlier_hits)

    def _earlier_hits(self) -> IntArray:
        # (slot, position) pairs are unique, so sorting their packed key orders hits as a lexsort would
        order = np.argsort(self.hit_slot * np.int64(max(1, self.docs.rank.size)) + self.hit_pos)
        slot = self.hit_slot[order]
        start = np.concatenate(([True], slot[1:] != slot[:-1])) if slot.size else np.zeros(0, dtype=bool)
        index = np.arange(slot.size)
        first = np.maximum.accumulate(np.where(start, index, 0)) if slot.size else index
        out = np.empty(slot.size, dtype=np.int64)
        out[order] = index - first
        out.flags.writeable = False
        return out


def rank_intents(docs: JudgedRanking, qrels: Qrels, slots: IntentSlots) -> IntentRanking:
    """Attach the relevant per-intent judgments to every retrieved document of a judged ranking."""
    entry = docs.entry
    pos = np.flatnonzero(entry >= 0)
    lo, hi = slots.pair_offsets[entry[pos]], slots.pair_offsets[entry[pos] + 1]
    hit_pos = np.repeat(pos, hi - lo)
    pair = expand_ranges(lo, hi)
    shared = slots.for_topics(docs.topics)
    maps = shared.get("topic-maps")
    if maps is None:
        maps = shared["topic-maps"] = _topic_maps(docs.topics, qrels, slots)
    slot_eval_topic, qrels_topic = cast(tuple[IntArray, IntArray], maps)
    return IntentRanking(
        docs,
        slots,
        slot_eval_topic,
        qrels_topic,
        hit_pos.astype(np.int64),
        slots.pair_slot[pair],
        slots.pair_grade[pair],
        _shared=shared,
    )


def _topic_maps(topics: tuple[str, ...], qrels: Qrels, slots: IntentSlots) -> tuple[IntArray, IntArray]:
    """Evaluated-topic index of every slot (-1: not evaluated) and qrels index of every evaluated topic (-1: not
    judged), read-only: they depend on the topic list only and are shared by the runs evaluated on it."""
    topic_to_eval = {t: i for i, t in enumerate(topics)}
    eval_of_qtopic = np.array([topic_to_eval.get(t, -1) for t in qrels.topics], dtype=np.int64)
    slot_eval_topic = eval_of_qtopic[slots.slot_topic] if slots.n_slots else np.zeros(0, dtype=np.int64)
    qrels_topic = np.array([qrels.topic_index.get(t, -1) for t in topics], dtype=np.int64)
    slot_eval_topic.flags.writeable = False
    qrels_topic.flags.writeable = False
    return slot_eval_topic, qrels_topic


class IntentInputs:
    """What the evaluator hands to intent-aware kernels: the run's judged ranking and, per relevance level,
    its intent ranking (slots come from a per-qrels cache so ideal rankings are computed once per qrels)."""

    def __init__(self, docs: JudgedRanking, qrels: Qrels, slots_at: Callable[[int], IntentSlots]) -> None:
        self.docs = docs
        self.qrels = qrels
        self._slots_at = slots_at
        self._rankings: dict[int, IntentRanking] = {}

    @property
    def n_topics(self) -> int:
        return self.docs.n_topics

    def at(self, level: int = 1) -> IntentRanking:
        """The intent ranking where a per-intent grade >= level is relevant."""
        found = self._rankings.get(level)
        if found is None:
            found = self._rankings[level] = rank_intents(self.docs, self.qrels, self._slots_at(level))
        return found
