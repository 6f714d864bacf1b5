"""A ranking joined with ad hoc judgments over the evaluated topics: what every ad hoc measure reads.

Everything is flat: one element per retrieved document (all topics concatenated, best first within a topic)
plus each topic's judged grades sorted descending (the ideal list). Measures compute all topics at once with
segment sums over these arrays (spec 1.2-1.5).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from itertools import pairwise
from typing import NoReturn

import numpy as np

from evaluation.enums import StrEnum
from evaluation.formats.keys import GroupedHashIndex, hash_words, rows_equal
from evaluation.formats.lexer import words_of
from evaluation.model import DOCNO_HASHES, FloatArray, IndexArray, IntArray, Qrels, Run, derive
from evaluation.problems import OptionError
from evaluation.ranking import Ranking
from evaluation.segments import expand_ranges, segmented_cumsum
from evaluation.task_pool import TaskPool, in_order


class TopicPolicy(StrEnum):
    """Which topics count (see ``evaluated_topics``); ``TopicPolicy(text)`` validates a request."""

    COMMON = "common"
    COMPLETE = "complete"

    @classmethod
    def _missing_(cls, value: object) -> NoReturn:
        raise OptionError(f"unknown topics policy {value!r}; choose one of {', '.join(TOPIC_POLICIES)}")


#: the policies' names, as plain strings (argparse and marshmallow choices)
TOPIC_POLICIES: tuple[str, ...] = tuple(p.value for p in TopicPolicy)


def evaluated_topics(qrels: Qrels, run_topics: tuple[str, ...], policy: str) -> tuple[str, ...]:
    """Topics that count (spec 1.3): ``common`` = in both run and qrels; ``complete`` = every qrels topic."""
    if policy == "common":
        present = set(run_topics)
        return tuple(t for t in qrels.topics if t in present)
    if policy == "complete":
        return qrels.topics
    raise OptionError(f"unknown topic policy {policy!r}; choose one of {', '.join(TOPIC_POLICIES)}")


@dataclass(frozen=True, eq=False)
class JudgedRanking:
    """Retrieved documents with their grades, per evaluated topic, and each topic's ideal grades.

    ``grade`` is the raw judged grade (0 for unjudged documents; negative grades kept as judged), ``judged``
    says whether the document is in the topic's qrels at all. ``ideal`` holds each topic's judged grades
    sorted descending, delimited by ``ideal_offsets``.
    """

    topics: tuple[str, ...]
    offsets: IntArray
    topic_of: IndexArray
    rank: IntArray  # 1-based position within the topic
    grade: IntArray
    judged: np.ndarray
    ideal: IntArray
    ideal_offsets: IntArray
    max_grade: int  # largest grade in the whole qrels (the collection's scale maximum)
    entry: IndexArray  # each document's index into ``qrels.adhoc`` (-1: not judged), for per-intent lookups
    _memo: dict[object, np.ndarray] = field(default_factory=dict, repr=False)
    # values that depend only on the ideal lists, shared by every run evaluated on the same topics
    _ideal_memo: dict[object, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def n_topics(self) -> int:
        return len(self.topics)

    @property
    def ideal_topic_of(self) -> IndexArray:
        return self._cached("ideal_topic_of", lambda: _segment_ids(self.ideal_offsets), self._ideal_memo)

    @property
    def ideal_rank(self) -> IntArray:
        return self._cached("ideal_rank", lambda: _positions(self.ideal_offsets), self._ideal_memo)

    def segment_sum(self, values: np.ndarray, *, ideal: bool = False) -> FloatArray:
        """Per-topic sums of a per-document (or, with ``ideal``, per-ideal-entry) array."""
        if values.dtype.kind in "bui":  # counts: exact in any order, from running sums
            return _counts(values, self.ideal_offsets if ideal else self.offsets)
        seg = self.ideal_topic_of if ideal else self.topic_of
        return np.bincount(seg, weights=values, minlength=self.n_topics).astype(np.float64)

    def segment_sum_at(self, mask: np.ndarray, values: np.ndarray) -> FloatArray:
        """Per-topic sums of ``values`` given only at the documents selected by ``mask``."""
        return np.bincount(self.topic_of[mask], weights=values, minlength=self.n_topics).astype(np.float64)

    def segment_cumsum(self, values: np.ndarray, *, ideal: bool = False, exclusive: bool = False) -> FloatArray:
        """Running sums restarting at each topic (``exclusive``: of the documents above each one). Real values
        are summed topic by topic, so a topic's sums never carry rounding from other topics."""
        offsets = self.ideal_offsets if ideal else self.offsets
        if values.dtype.kind in "bui" and _covers(offsets, values):
            return _segment_counts(values, offsets, exclusive)
        if values.dtype.kind in "bui":  # counts: exact as integers, converted once
            running = np.zeros(values.size + 1, dtype=np.int64)
            np.cumsum(values, out=running[1:])
            counts = running[1:]
            counts -= np.repeat(running[offsets[:-1]], np.diff(offsets))
            if exclusive:
                counts -= np.asarray(values, dtype=np.int64)
            return counts.astype(np.float64)
        result: FloatArray = segmented_cumsum(values, offsets, exclusive=exclusive)
        return result

    def relevant(self, level: int = 1) -> np.ndarray:
        """Binary relevance of each retrieved document: grade >= level."""
        return self._cached(("relevant", level), lambda: self.grade >= level)

    def num_relevant(self, level: int = 1) -> FloatArray:
        """Per topic: judged documents with grade >= level (trec_eval's num_rel)."""
        return self._cached(
            ("num_rel", level), lambda: self.segment_sum(self.ideal >= level, ideal=True), self._ideal_memo
        )

    def count_within(self, marked: np.ndarray, cutoff: int | None) -> FloatArray:
        """Per topic: how many of the documents ranked at or above ``cutoff`` (all when None) ``marked`` marks --
        ``segment_sum(marked & within(cutoff))``, the same counts, read from the top ``cutoff`` documents only
        when they are few (P@10 on a 100-deep run reads a tenth of it)."""
        if cutoff is None or cutoff * self.n_topics * 2 > self.rank.size:
            return self.segment_sum(marked & self.within(cutoff))
        picked = marked[self.top(cutoff)]  # topic by topic, min(cutoff, documents) each
        return _counts(picked, np.concatenate(([0], np.cumsum(np.minimum(np.diff(self.offsets), cutoff)))))

    def top(self, depth: int) -> IntArray:
        """Indices of the documents ranked at or above ``depth``, topic by topic (found from the topic offsets,
        without scanning every document)."""
        return self._cached(("top", depth), lambda: _heads(self.offsets, depth))

    def within(self, cutoff: int | None) -> np.ndarray:
        """Mask of documents ranked at or above ``cutoff`` (all when None)."""
        if cutoff is None:
            return self._cached(("within", None), lambda: np.ones(self.rank.size, dtype=bool))
        return self._cached(("within", cutoff), lambda: self.rank <= cutoff)

    def _cached(self, key: object, make: object, memo: dict[object, np.ndarray] | None = None) -> np.ndarray:
        store = self._memo if memo is None else memo
        hit = store.get(key)
        if hit is None:
            hit = make()  # type: ignore[operator]
            if memo is not None:
                hit.flags.writeable = False  # shared between runs
            store[key] = hit
        return hit


def _counts(values: np.ndarray, offsets: IntArray) -> FloatArray:
    """Per-segment sums of integer (or boolean) ``values``, exact, as floats: one ``reduceat`` over the non-empty
    segments (no running sum as long as ``values``: wide runs have millions of rows)."""
    lengths = np.diff(offsets)
    counts: FloatArray = np.zeros(lengths.size, dtype=np.float64)
    if offsets.size < 2 or int(offsets[-1]) != values.size or int(offsets[0]) != 0:
        running = np.zeros(values.size + 1, dtype=np.int64)
        np.cumsum(values, out=running[1:])
        counts[:] = running[offsets[1:]] - running[offsets[:-1]]
        return counts
    which = np.flatnonzero(lengths > 0)
    starts = offsets[:-1][which]
    # in blocks of whole segments: ``reduceat`` casts its input to int64 first, a copy of the block only
    cuts = [*dict.fromkeys(np.searchsorted(starts, np.arange(0, values.size, _COUNT_BLOCK)).tolist()), starts.size]
    for a, b in pairwise(cuts):
        if b > a:
            lo, hi = int(starts[a]), int(starts[b]) if b < starts.size else values.size
            counts[which[a:b]] = np.add.reduceat(values[lo:hi], starts[a:b] - lo, dtype=np.int64)
    return counts


_COUNT_BLOCK = 1 << 18  # values summed per ``reduceat`` in ``_counts``


def _covers(offsets: IntArray, values: np.ndarray) -> bool:
    """Whether the segments ``offsets`` cut are the whole of ``values``."""
    return offsets.size >= 2 and int(offsets[0]) == 0 and int(offsets[-1]) == values.size


def _segment_counts(values: np.ndarray, offsets: IntArray, exclusive: bool) -> FloatArray:
    """Running counts of integer ``values`` restarting at each segment, as floats, in one array: each segment's
    first value is lowered by the previous segment's total, then one running sum (every partial sum is an
    integer below 2**53: exact, the same as summing integers)."""
    sums: FloatArray = values.astype(np.float64)
    which = np.flatnonzero(np.diff(offsets) > 0)
    if which.size > 1:
        totals = _counts(values, offsets)[which]
        sums[offsets[which[1:]]] -= totals[:-1]
    np.cumsum(sums, out=sums)
    if exclusive:
        sums -= values
    return sums


def judge_ranking(qrels: Qrels, ranking: Ranking, topics: tuple[str, ...],
                  pool: TaskPool | None = None, joined: Callable[[], IndexArray] | None = None) -> JudgedRanking:
    """Join a ranking with the qrels' single-aspect view, restricted to (and ordered by) ``topics``; with a
    ``pool``, blocks of the run are joined on its threads (the same result). ``joined``: the join of the
    ranking's run, started earlier (``start_join``)."""
    run = ranking.run
    index = _index_of(qrels)
    if topics == run.topics:  # the usual case: every topic of the run is evaluated, in the same order
        order, offsets = ranking.order, ranking.offsets
        topic_of, rank = index.layout(offsets)
    else:
        wanted = {t: i for i, t in enumerate(topics)}
        run_to_eval = np.array([wanted.get(t, -1) for t in run.topics], dtype=np.int32)
        row_topic = run.topic[ranking.order]
        eval_topic = run_to_eval[row_topic] if run_to_eval.size else row_topic
        keep = eval_topic >= 0
        order = ranking.order[keep]
        topic_of = eval_topic[keep]
        counts = np.bincount(topic_of, minlength=len(topics))
        offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        rank = _positions(offsets)
    found = (joined or start_join(qrels, run, pool))()
    entry = found if ranking.in_file_order and order is ranking.order else found[order]
    judged = entry >= 0
    grade = index.grade_or_zero[entry]  # entry -1 reads the appended 0
    ideal, ideal_offsets, ideal_memo = index.ideal_lists(qrels, topics)
    return JudgedRanking(
        topics, offsets, topic_of, rank, grade, judged, ideal, ideal_offsets, qrels.max_grade, entry,
        _ideal_memo=ideal_memo,
    )


class _QrelsIndex:
    """A hash index over a qrels' ad hoc judgments keyed by (topic, docno), built once per Qrels."""

    def __init__(self, qrels: Qrels) -> None:
        adhoc = qrels.adhoc
        vocab = max(1, qrels.docnos.size)
        self.doc = adhoc.key - adhoc.topic * np.int64(vocab)  # each judgment's docno (index into docnos)
        self.topic_index = qrels.topic_index
        self.words = words_of(qrels.docnos)
        self.index = GroupedHashIndex(adhoc.topic, hash_words(self.words)[self.doc], len(qrels.topics))
        self.grade_or_zero = np.append(adhoc.grade, 0).astype(np.int64)
        self._ideal: tuple[tuple[str, ...], IntArray, IntArray, dict[object, np.ndarray]] | None = None
        self._layout: tuple[IntArray, IndexArray, IntArray] | None = None

    def layout(self, offsets: IntArray) -> tuple[IndexArray, IntArray]:
        """Topic number and 1-based position of every document of rankings with these topic offsets (runs
        of one evaluation usually share them, so the last layout is kept, read-only)."""
        last = self._layout
        if last is None or not np.array_equal(last[0], offsets):
            topic_of, rank = _segment_ids(offsets), _positions(offsets)
            topic_of.flags.writeable = False
            rank.flags.writeable = False
            last = self._layout = (offsets.copy(), topic_of, rank)
        return last[1], last[2]

    def ideal_lists(
        self, qrels: Qrels, topics: tuple[str, ...]
    ) -> tuple[IntArray, IntArray, dict[object, np.ndarray]]:
        """The ideal grade lists of ``topics`` (and a memo for values derived from them), kept for reuse."""
        if self._ideal is None or self._ideal[0] != topics:
            eval_to_qrels = np.array([self.topic_index.get(t, -1) for t in topics], dtype=np.int64)
            adhoc = qrels.adhoc
            ideal, offsets = _select_segments(adhoc.ideal_grades, adhoc.offsets, eval_to_qrels)
            ideal.flags.writeable = False
            offsets.flags.writeable = False
            self._ideal = (topics, ideal, offsets, {})
        return self._ideal[1], self._ideal[2], self._ideal[3]


def _index_of(qrels: Qrels) -> _QrelsIndex:
    """The qrels' join index, built on first use and kept with the qrels."""
    index: _QrelsIndex = derive(qrels, "judgment_index", lambda: _QrelsIndex(qrels))
    return index


def _judgments_of(qrels: Qrels, run: Run, pool: TaskPool | None = None) -> IndexArray:
    """For every row of the run (file order), its entry in ``qrels.adhoc`` or -1 when not judged."""
    return start_join(qrels, run, pool)()


def start_join(qrels: Qrels, run: Run, pool: TaskPool | None = None) -> Callable[[], IndexArray]:
    """Start ``_judgments_of`` (the join needs the run, not its ranking): with a ``pool`` its blocks are handed
    to the pool's threads now, so the caller can rank the run meanwhile; the function returned waits for them
    (doing any nobody has started) and gives the entries. Without a pool it does the whole join when called."""
    index = _index_of(qrels)
    n = len(run)
    if n == 0:
        return lambda: np.full(n, -1, dtype=_ENTRY)
    run_to_qrels = np.array([index.topic_index.get(t, -1) for t in run.topics], dtype=np.int64)
    hashes = run.derived.get(DOCNO_HASHES)  # kept by the reader; valid while the docnos stay read-only
    if hashes is None or run.docno.flags.writeable:
        hashes = hash_words(words_of(run.docno))
    found = np.empty(n, dtype=_ENTRY)

    def join(lo: int) -> None:
        """Rows ``lo`` to ``lo + _JOIN_BLOCK``: the probes' temporaries stay in cache."""
        hi = min(lo + _JOIN_BLOCK, n)

        def same(rows: IntArray, entries: IntArray) -> np.ndarray:
            return rows_equal(words_of(run.docno[rows + lo]), np.take(index.words, index.doc[entries], axis=0))

        found[lo:hi] = index.index.find(run_to_qrels[run.topic[lo:hi]], hashes[lo:hi], same)

    blocks = in_order(pool, [partial(join, lo) for lo in range(0, n, _JOIN_BLOCK)])  # submitted now, with a pool

    def wait() -> IndexArray:
        for _ in blocks:
            pass
        return found

    return wait


_JOIN_BLOCK = 1 << 16  # run rows probed at once in the join: the probes' temporaries stay in cache
#: each run row's entry in the qrels (an index: judgments number fewer than 2**31); half of int64's memory on runs
#: of millions of rows
_ENTRY = np.int32


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


def _heads(offsets: IntArray, depth: int) -> IntArray:
    """Indices of the first ``depth`` elements of every segment."""
    starts = offsets[:-1]
    return expand_ranges(starts, starts + np.minimum(np.diff(offsets), depth))


def _segment_ids(offsets: IntArray) -> IndexArray:
    """Each element's segment number (int32 where segments number fewer than 2**31: an index, half the memory)."""
    kind = np.int32 if offsets.size < 2**31 else np.int64
    return np.repeat(np.arange(offsets.size - 1, dtype=kind), np.diff(offsets))


def _positions(offsets: IntArray) -> IntArray:
    """1-based position of each element within its segment: running sums of ones, each segment's first one
    lowered by the length of the segment before it (one array, filled in place)."""
    total = int(offsets[-1]) if offsets.size else 0
    out = np.ones(total, dtype=np.int64)
    counts = np.diff(offsets)
    filled = counts > 0
    out[offsets[:-1][filled][1:]] -= counts[filled][:-1]
    np.cumsum(out, out=out)
    return out

