"""Pieces shared by the diversity measures: parameters, novelty-biased gains, the greedy ideal ranking and
ndeval's "ideal-ideal" normaliser (spec 3.4-3.5, Appendix B.4 and E.2).

Novelty discounts ``(1 - alpha)^c`` are built by repeated multiplication, exactly as ndeval accumulates them,
so our gains are the same doubles as ndeval's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.intent_ranking import IntentRanking, IntentSlots
from evaluation.measures.diversity._intents import pair_satisfaction, segments_for_run
from evaluation.model import FloatArray, IntArray
from evaluation.params import Param
from evaluation.segments import expand_ranges, segment_ids

FAMILY = "diversity"
NDEVAL = "ndeval 4.5 (TREC Web 2009-2014; pyndeval); Appendix E.2"

ALPHA = Param("alpha", "float", 0.5, "redundancy penalty: each earlier relevant document multiplies an intent's"
              " gain by (1 - alpha)", minimum=0.0, maximum=1.0, max_exclusive=True)
REL = Param("rel", "int", 1, "minimum per-intent grade that counts as relevant (ndeval binarises at 1)", minimum=1)

#: ndeval evaluates the cutoff measures on arrays of this depth; its value at rank 1 is not normalised.
NDEVAL_DEPTH = 20


def powers(base: float, n: int) -> FloatArray:
    """base^c for c = 0..n-1 by repeated multiplication, the way ndeval keeps its running gains and decays
    (``multiply.accumulate`` multiplies in sequence, so each entry is the previous one times ``base``)."""
    out = np.full(max(n, 1), base, dtype=np.float64)
    out[0] = 1.0
    return np.multiply.accumulate(out, out=out)


def discount_table(alpha: float, n: int) -> FloatArray:
    """(1 - alpha)^c for c = 0..n-1 (novelty discounts)."""
    return powers(1.0 - alpha, n)


def novelty_gain(data: IntentRanking, alpha: float, hit_gain: FloatArray | None = None) -> FloatArray:
    """NG(i) = sum_t J_t(d_i) (1 - alpha)^{c_t(i)} for every retrieved position (binary per-intent relevance);
    with ``hit_gain`` each hit's term is multiplied by it (graded gain r(d_i,t), spec 3.4). The binary gains
    are computed once per run and alpha (read-only: alpha-nDCG, ERR-IA and NRBP share them)."""
    if hit_gain is None:
        return data.memo(("novelty-gain", alpha), lambda: _novelty_gain(data, alpha, None))
    return _novelty_gain(data, alpha, hit_gain)


def _novelty_gain(data: IntentRanking, alpha: float, hit_gain: FloatArray | None) -> FloatArray:
    earlier = data.earlier_hits()
    table = discount_table(alpha, int(earlier.max()) + 1 if earlier.size else 1)
    weights = table[earlier] if hit_gain is None else hit_gain * table[earlier]
    gain = np.bincount(data.hit_pos, weights=weights, minlength=data.docs.rank.size).astype(np.float64)
    gain.flags.writeable = False
    return gain


@dataclass(frozen=True)
class IdealGains:
    """Greedy ideal novelty gains per qrels topic: topic ``q`` owns ``gain[offsets[q]:offsets[q+1]]``."""

    offsets: IntArray
    gain: FloatArray


def greedy_ideal(slots: IntentSlots, alpha: float, graded: bool = False, depth: int | None = None) -> IdealGains:
    """ndeval's greedy ideal ranking, computed for every topic at once and cached per qrels.

    At each rank every topic takes the unpicked judged document with the largest marginal novelty gain,
    ties going to the larger docno (byte-wise); documents with no relevant intent add nothing and are left out.
    ``graded`` weighs each intent's gain by the satisfaction r(d,t) = (2^g - 1)/2^{gmax_t} (spec 3.4).
    ``depth``: only the first ``depth`` ranks of each topic (None: all). Each pick depends only on the picks
    above it, so these are the full ranking's first ranks, the same doubles; measures cut at rank k need no
    more than k, and the greedy's cost grows with the depth.
    """
    if graded:
        made = slots.memo(("greedy-graded", alpha, depth),
                          lambda: _greedy(slots, alpha, pair_satisfaction(slots), depth))
    else:
        made = slots.memo(("greedy", alpha, depth), lambda: _greedy(slots, alpha, depth=depth))
    assert isinstance(made, IdealGains)
    return made


def _greedy(slots: IntentSlots, alpha: float, pair_gain: FloatArray | None = None,
            depth: int | None = None) -> IdealGains:
    n_topics = slots.slot_offsets.size - 1
    pair_topic = slots.slot_topic[slots.pair_slot]
    # candidates: distinct (topic, doc) among relevant pairs, sorted by topic then doc id (= docno byte order)
    cand_key = pair_topic * np.int64(max(1, int(slots.pair_doc.max(initial=0)) + 1)) + slots.pair_doc
    cand_keys, cand_of_pair = np.unique(cand_key, return_inverse=True)
    cand_of_pair = cand_of_pair.ravel()
    cand_topic = pair_topic[np.searchsorted(cand_key, cand_keys)] if cand_keys.size else cand_keys
    per_topic = np.bincount(cand_topic, minlength=n_topics)
    kept = per_topic if depth is None else np.minimum(per_topic, depth)  # ranks computed per topic
    offsets = np.concatenate(([0], np.cumsum(kept))).astype(np.int64)
    n_cand = cand_keys.size
    gain_out = np.zeros(int(offsets[-1]))
    if n_cand == 0:
        return IdealGains(offsets, gain_out)
    # pairs grouped by candidate (already: pairs are sorted by topic, doc, intent)
    pair_by_cand = np.argsort(cand_of_pair, kind="stable")
    cand_pair_offsets = np.concatenate(([0], np.cumsum(np.bincount(cand_of_pair, minlength=n_cand))))
    if pair_gain is None:
        local = slots.pair_slot - slots.slot_offsets[pair_topic]
        if int(local.max()) < _MASK_BITS:  # every topic has few intents (always so in TREC and NTCIR)
            cand = _Candidates(cand_topic, per_topic, offsets, pair_by_cand, cand_pair_offsets)
            return _greedy_by_signature(slots, alpha, cand, local, int(kept.max(initial=0)))
    factor = np.ones(slots.n_slots)
    picked = np.zeros(n_cand, dtype=bool)
    topics = np.flatnonzero(per_topic > 0)
    seg_start = np.concatenate(([0], np.cumsum(per_topic)[:-1]))[topics]  # each topic's first candidate
    index = np.arange(n_cand)
    for step in range(int(kept.max())):
        weights = factor[slots.pair_slot] if pair_gain is None else pair_gain * factor[slots.pair_slot]
        score = np.bincount(cand_of_pair, weights=weights, minlength=n_cand)
        score[picked] = -1.0
        live = per_topic[topics] > step
        best = np.maximum.reduceat(score, seg_start)
        is_best = score == np.repeat(best, per_topic[topics])
        chosen = np.maximum.reduceat(np.where(is_best, index, -1), seg_start)[live]
        picked[chosen] = True
        gain_out[offsets[topics[live]] + step] = score[chosen]
        span = expand_ranges(cand_pair_offsets[chosen], cand_pair_offsets[chosen + 1])
        factor[slots.pair_slot[pair_by_cand[span]]] *= 1.0 - alpha
    return IdealGains(offsets, gain_out)


#: topics with at most this many relevant intents take the greedy ideal by signature (one bit per intent)
_MASK_BITS = 63


@dataclass(frozen=True)
class _Candidates:
    """The greedy ideal's candidates -- distinct (topic, doc) with a relevant pair, sorted by topic then doc --
    and their pairs: candidate ``c`` owns ``pair_by_cand[pair_offsets[c]:pair_offsets[c+1]]`` (slots ascending)."""

    topic: IntArray
    per_topic: IntArray
    offsets: IntArray
    pair_by_cand: IntArray
    pair_offsets: IntArray


def _greedy_by_signature(slots: IntentSlots, alpha: float, cand: _Candidates, local: IntArray,
                         steps: int) -> IdealGains:
    """The binary greedy ideal, stepping over *signatures* instead of documents.

    Documents of a topic relevant to the same set of intents (same signature) always have the same marginal
    gain -- the same factors summed in the same order, so the same double -- and among them the greedy takes
    the larger docno first. So each step scores every signature once (not every document), takes per topic
    the best signature (ties: the one whose next document has the larger docno) and that signature's next
    document. Picks and gains are those of the document-by-document loop, bit for bit.
    """
    n_cand = cand.topic.size
    bits = np.left_shift(np.uint64(1), local.astype(np.uint64))
    mask = np.bitwise_or.reduceat(bits[cand.pair_by_cand], cand.pair_offsets[:-1])
    index = np.arange(n_cand, dtype=np.int64)
    # members of each signature, grouped by (topic, signature), larger docno (candidate index) first
    members = np.lexsort((-index, mask, cand.topic))
    sig_topic, sig_mask = cand.topic[members], mask[members]
    new = np.ones(n_cand, dtype=bool)
    new[1:] = (sig_topic[1:] != sig_topic[:-1]) | (sig_mask[1:] != sig_mask[:-1])
    sig_start = np.flatnonzero(new)
    n_sig = sig_start.size
    sig_end = np.append(sig_start[1:], n_cand)
    cand_sig = np.empty(n_cand, dtype=np.int64)
    cand_sig[members] = np.cumsum(new) - 1
    sig_topic = sig_topic[sig_start]
    # each signature's slots: those of its first member, in the members' pair order
    first = members[sig_start]
    lo, hi = cand.pair_offsets[first], cand.pair_offsets[first + 1]
    sig_slot = slots.pair_slot[cand.pair_by_cand[expand_ranges(lo, hi)]]
    sig_slot_offsets = np.concatenate(([0], np.cumsum(hi - lo))).astype(np.int64)
    sig_of_slot = segment_ids(sig_slot_offsets)
    topics = np.flatnonzero(cand.per_topic > 0)
    sigs_per_topic = np.bincount(sig_topic, minlength=cand.per_topic.size)[topics]
    topic_sig_start = np.concatenate(([0], np.cumsum(sigs_per_topic)[:-1])).astype(np.int64)
    sig_group = np.repeat(np.arange(topics.size), sigs_per_topic)  # position of each signature's topic in topics
    # each signature's slots as a padded row; the padding points at a spare factor entry nobody reads
    width = int(np.diff(sig_slot_offsets).max())
    padded = np.full((n_sig, width), slots.n_slots, dtype=np.int64)
    padded[sig_of_slot, np.arange(sig_slot.size) - sig_slot_offsets[sig_of_slot]] = sig_slot
    factor = np.ones(slots.n_slots + 1)
    ptr = sig_start.copy()  # next member of each signature
    upcoming = members[sig_start]  # candidate index of that member
    penalty = np.zeros(n_sig)  # -inf once a signature has no member left
    out_at = cand.offsets[topics]
    gain_out = np.zeros(int(cand.offsets[-1]))
    decay = 1.0 - alpha
    for step in range(steps):  # the first ``steps`` ranks of every topic (all of them, or the depth)
        score = np.bincount(sig_of_slot, weights=factor[sig_slot], minlength=n_sig)
        np.add(score, penalty, out=score)  # exhausted signatures drop out (x + 0.0 == x for the others)
        best = np.maximum.reduceat(score, topic_sig_start)
        is_best = score == best[sig_group]
        live = np.flatnonzero(cand.per_topic[topics] > step)
        chosen_sig = cand_sig[np.maximum.reduceat(np.where(is_best, upcoming, -1), topic_sig_start)[live]]
        gain_out[out_at[live] + step] = score[chosen_sig]
        factor[padded[chosen_sig]] *= decay
        ptr[chosen_sig] += 1
        more = ptr[chosen_sig] < sig_end[chosen_sig]
        upcoming[chosen_sig[more]] = members[ptr[chosen_sig[more]]]
        penalty[chosen_sig[~more]] = -np.inf
    return IdealGains(cand.offsets, gain_out)


def ideal_for_run(data: IntentRanking, ideal: IdealGains) -> tuple[IntArray, FloatArray, IntArray]:
    """The ideal gains of the evaluated topics: (offsets, gains, 1-based ranks) in evaluated-topic order."""
    return segments_for_run(data, ideal.offsets, ideal.gain)


@dataclass(frozen=True)
class RunIdeal:
    """The greedy ideal gains of a run's evaluated topics: per rank its gain, evaluated topic and 1-based rank."""

    gain: FloatArray
    topic: IntArray
    rank: IntArray


def greedy_for_run(data: IntentRanking, alpha: float, graded: bool = False, depth: int | None = None) -> RunIdeal:
    """``greedy_ideal`` (down to ``depth``) restricted to the run's evaluated topics (alpha-nDCG, nERR-IA and
    nNRBP read it), once for all runs evaluated on the same topics."""

    def make() -> RunIdeal:
        offsets, gain, rank = ideal_for_run(data, greedy_ideal(data.slots, alpha, graded, depth))
        topic = segment_ids(offsets)
        for array in (gain, topic, rank):
            array.flags.writeable = False
        return RunIdeal(gain, topic, rank)

    return data.shared(("greedy-for-run", alpha, graded, depth), make)


def cumulative_at(values: FloatArray, segment: IntArray, rank: IntArray, n_topics: int, k: int) -> FloatArray:
    """Per topic: sum of ``values`` over ranks <= k."""
    keep = rank <= k
    return np.bincount(segment[keep], weights=values[keep], minlength=n_topics).astype(np.float64)


def ideal_ideal(n_slots: FloatArray, alpha: float, k: int, discount: str) -> FloatArray:
    """ndeval's collection-independent normaliser: every document relevant to every intent, down to rank k:
    sum_{i<=k} |S| (1-alpha)^{i-1} * (1/log2(i+1) for 'log', 1/i for 'rr'); 1 at k = 1 (ndeval leaves rank 1
    unnormalised)."""
    if k == 1:
        return np.ones_like(n_slots)
    ranks = np.arange(1, k + 1, dtype=np.float64)
    disc = 1.0 / np.log2(ranks + 1.0) if discount == "log" else 1.0 / ranks
    decay = discount_table(alpha, k)
    return n_slots * float(np.sum(decay * disc))


def run_ideal_ideal(data: IntentRanking, alpha: float, k: int, discount: str) -> FloatArray:
    """``ideal_ideal`` of the evaluated topics, once for all runs evaluated on the same topics (read-only)."""

    def make() -> FloatArray:
        values = ideal_ideal(data.n_slots_per_topic(), alpha, k, discount)
        values.flags.writeable = False
        return values

    return data.shared(("ideal-ideal", alpha, k, discount), make)
