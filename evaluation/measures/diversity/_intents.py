"""Per-intent building blocks of the papers' forms (spec section 3, Appendix E.3): weighted sums over intents,
per-intent running sums down the ranking, per-intent ideal lists and the satisfaction mappings of spec 1.6.

Everything works on the flat *hits* of an ``IntentRanking`` (one per relevant (retrieved document, intent)
pair, sorted by position then slot) and on the flat *pairs* of its ``IntentSlots`` (every relevant judgment of
the qrels), so all topics and intents are computed at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.formats.distinct import sorted_distinct
from evaluation.intent_ranking import IntentRanking, IntentSlots
from evaluation.model import FloatArray, IntArray
from evaluation.params import Param
from evaluation.segments import expand_ranges, segment_ids, segmented_cumsum

PAPERS = "spec section 3 (Amigo et al. SIGIR 2018; Dou et al. IRJ 2019)"

VARIANT = Param(
    "variant",
    "choice",
    "ndeval",
    "ndeval: ndeval 4.5's number (uniform weights, binary relevance, ndeval's normalisation); paper: the form of"
    " spec section 3 (intent weights w(t); for alpha_DCG the raw, unnormalised sum)",
    choices=("ndeval", "paper"),
)
SATISFACTION = Param(
    "sat",
    "choice",
    "exp",
    "satisfaction probability r(d,t) of a relevant document: exp = (2^g - 1)/2^gmax_t (gmax_t the intent's highest"
    " grade, the RBU reference implementation's mapping); binary = 1",
    choices=("exp", "binary"),
)


def hit_rank(data: IntentRanking) -> IntArray:
    """1-based rank of every hit."""
    return data.hit_rank()


def hits_within(data: IntentRanking, cutoff: int | None) -> np.ndarray:
    """Mask of the hits ranked at or above the cutoff (all when None)."""
    return data.docs.within(cutoff)[data.hit_pos]


def hit_weight(data: IntentRanking) -> FloatArray:
    """w*(t) of every hit's intent."""
    return data.slots.weight[data.hit_slot]


def weighted_per_topic(data: IntentRanking, per_slot: FloatArray) -> FloatArray:
    """sum_t w(t) M_t per evaluated topic, from one value per slot."""
    return data.per_topic(per_slot * data.slots.weight)


def per_slot(data: IntentRanking, values: np.ndarray, mask: np.ndarray | None = None) -> FloatArray:
    """Per-slot sums of a per-hit array (only the hits selected by ``mask``)."""
    slots = data.hit_slot if mask is None else data.hit_slot[mask]
    vals = values if mask is None else values[mask]
    return np.bincount(slots, weights=vals, minlength=data.slots.n_slots).astype(np.float64)


def hits_per_topic(data: IntentRanking, values: np.ndarray, mask: np.ndarray | None = None) -> FloatArray:
    """Per evaluated topic sums of a per-hit array (only the hits selected by ``mask``)."""
    pos = data.hit_pos if mask is None else data.hit_pos[mask]
    vals = values if mask is None else values[mask]
    return np.bincount(data.docs.topic_of[pos], weights=vals, minlength=data.n_topics).astype(np.float64)


def per_doc(data: IntentRanking, values: np.ndarray) -> FloatArray:
    """Per retrieved document sums of a per-hit array."""
    return np.bincount(data.hit_pos, weights=values, minlength=data.docs.rank.size).astype(np.float64)


def exp_satisfaction(grade: np.ndarray, gmax: np.ndarray) -> FloatArray:
    """(2^g - 1) / 2^gmax, written so that a large gmax cannot overflow; 0 where gmax <= 0."""
    g = np.maximum(np.asarray(grade, dtype=np.float64), 0.0)
    top = np.asarray(gmax, dtype=np.float64)
    out = np.exp2(g - top) - np.exp2(-top)
    return np.where(top > 0, out, 0.0)


def satisfaction(data: IntentRanking, kind: str = "exp") -> FloatArray:
    """r(d,t) of every hit (spec 1.6, RBU/EU mapping): (2^g - 1)/2^{gmax_t}, or 1 with ``binary``."""
    if kind == "binary":
        return np.ones(data.hit_slot.size)
    return exp_satisfaction(data.hit_grade, data.slots.max_grade[data.hit_slot])


def pair_satisfaction(slots: IntentSlots) -> FloatArray:
    """r(d,t) of every relevant pair of the qrels (RBU mapping), for ideal rankings."""
    return exp_satisfaction(slots.pair_grade, slots.max_grade[slots.pair_slot])


@dataclass(frozen=True)
class BySlot:
    """The hits regrouped by slot (rank order within a slot): ``order`` maps grouped -> hit, ``first`` is the
    grouped index where each hit's slot group starts."""

    order: IntArray
    first: IntArray

    def exclusive(self, values: np.ndarray) -> FloatArray:
        """For every hit, the sum of ``values`` over the earlier hits of its slot."""
        return self._scan(values, inclusive=False)

    def inclusive(self, values: np.ndarray) -> FloatArray:
        """For every hit, the sum of ``values`` over the earlier hits of its slot and itself."""
        return self._scan(values, inclusive=True)

    def _scan(self, values: np.ndarray, inclusive: bool) -> FloatArray:
        """Per-slot running sums, each slot summed on its own (no rounding carried across slots)."""
        v = np.asarray(values, dtype=np.float64)[self.order]
        offsets = np.append(sorted_distinct(self.first), v.size) if v.size else np.zeros(1, dtype=np.int64)
        grouped = segmented_cumsum(v, offsets, exclusive=not inclusive)
        out = np.empty(v.size)
        out[self.order] = grouped
        return out

    def cascade(self, r: np.ndarray) -> FloatArray:
        """For every hit, prod over the earlier hits of its slot of (1 - r): the probability that the intent is
        still unsatisfied when the user reaches the hit (ERR-style cascade; r = 1 ends it)."""
        full = r >= 1.0
        log_stay = np.log1p(-np.where(full, 0.0, r))
        alive = self.exclusive(full.astype(np.float64)) == 0
        return np.where(alive, np.exp(self.exclusive(log_stay)), 0.0)

    def capped(self, values: np.ndarray, cap: float) -> FloatArray:
        """Water filling: what each hit adds to its slot's column when the column holds at most ``cap``:
        min(cap, running sum) minus the same before the hit."""
        after = np.minimum(self.inclusive(values), cap)
        before = np.minimum(self.exclusive(values), cap)
        return np.asarray(after - before, dtype=np.float64)


def by_slot(data: IntentRanking) -> BySlot:
    order = np.lexsort((data.hit_pos, data.hit_slot))
    slot = data.hit_slot[order]
    if slot.size == 0:
        return BySlot(order.astype(np.int64), np.zeros(0, dtype=np.int64))
    start = np.concatenate(([True], slot[1:] != slot[:-1]))
    index = np.arange(slot.size)
    first = np.maximum.accumulate(np.where(start, index, 0))
    return BySlot(order.astype(np.int64), first.astype(np.int64))


@dataclass(frozen=True)
class SlotIdeal:
    """Every slot's relevant judgments sorted by gain descending: slot ``s`` owns
    ``gain[offsets[s]:offsets[s+1]]``; ``rank`` is the 1-based position within the slot."""

    offsets: IntArray
    gain: FloatArray
    rank: IntArray
    slot: IntArray

    def cumulative(self) -> FloatArray:
        """Running sums of the ideal gains within each slot."""
        return np.asarray(segmented_cumsum(self.gain, self.offsets), dtype=np.float64)


def slot_ideal(slots: IntentSlots, key: object, pair_gain: FloatArray) -> SlotIdeal:
    """Per-slot ideal lists of the given pair gains, cached per qrels under ``key``."""

    def make() -> SlotIdeal:
        order = np.lexsort((-pair_gain, slots.pair_slot))
        slot = slots.pair_slot[order]
        offsets = np.searchsorted(slot, np.arange(slots.n_slots + 1)).astype(np.int64)
        rank = np.arange(slot.size) - np.repeat(offsets[:-1], np.diff(offsets)) + 1
        return SlotIdeal(offsets, np.asarray(pair_gain[order], dtype=np.float64), rank.astype(np.int64),
                         slot.astype(np.int64))

    made = slots.memo(("slot-ideal", key), make)
    assert isinstance(made, SlotIdeal)
    return made


@dataclass(frozen=True)
class TopicIdeal:
    """Per qrels topic, one value per judged document sorted descending: topic ``q`` owns
    ``value[offsets[q]:offsets[q+1]]``."""

    offsets: IntArray
    value: FloatArray


def document_ideal(slots: IntentSlots, key: object, pair_value: FloatArray) -> TopicIdeal:
    """Sum a per-pair value over each judged document (e.g. global gain GG) and sort each topic's documents by
    it, descending; documents whose sum is not positive are left out. Cached per qrels under ``key``."""

    def make() -> TopicIdeal:
        n_topics = slots.slot_offsets.size - 1
        n_entries = slots.pair_offsets.size - 1
        entry = segment_ids(slots.pair_offsets)
        value = np.bincount(entry, weights=pair_value, minlength=n_entries)
        topic = np.full(n_entries, -1, dtype=np.int64)
        topic[entry] = slots.slot_topic[slots.pair_slot]
        keep = (topic >= 0) & (value > 0)
        order = np.lexsort((-value[keep], topic[keep]))
        offsets = np.searchsorted(topic[keep][order], np.arange(n_topics + 1)).astype(np.int64)
        return TopicIdeal(offsets, np.asarray(value[keep][order], dtype=np.float64))

    made = slots.memo(("document-ideal", key), make)
    assert isinstance(made, TopicIdeal)
    return made


def topic_ideal_for_run(data: IntentRanking, ideal: TopicIdeal) -> tuple[IntArray, FloatArray, IntArray]:
    """The evaluated topics' ideal values: (offsets per evaluated topic, values, 1-based ranks)."""
    return segments_for_run(data, ideal.offsets, ideal.value)


def segments_for_run(
    data: IntentRanking, offsets: IntArray, values: FloatArray
) -> tuple[IntArray, FloatArray, IntArray]:
    """Pick per-qrels-topic segments for the evaluated topics: (new offsets, values, 1-based ranks)."""
    q = data.qrels_topic
    safe = np.maximum(q, 0)
    lengths = np.where(q >= 0, np.diff(offsets)[safe], 0) if q.size else q
    new_offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    picked = expand_ranges(offsets[safe], offsets[safe] + lengths)
    ranks = np.arange(picked.size) - np.repeat(new_offsets[:-1], lengths) + 1
    return new_offsets, values[picked], ranks.astype(np.int64)
