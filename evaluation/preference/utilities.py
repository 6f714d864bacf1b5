"""Utility estimates from preference judgments (spec 6.2) and the utility of a document at a rank (spec 6.3).

- ``U(d) = wins(d) / appearances(d)`` over the simple pairwise judgments in which ``d`` is a candidate;
- ``U(d | x) = wins(d | top x) / appearances(d | top x)`` over the conditional judgments whose top document is
  ``x`` and in which ``d`` is a candidate.

With fewer than ``min_app`` appearances (default 1, spec C-PRF-7) ``U(d) = 0`` (non-relevant, like an unjudged
document) and ``U(d | x)`` is *missing* (spec C-PRF-1). At rank ``i > 1`` a document's utility is
``F(U(d_i | d_1), ..., U(d_i | d_{i-1}))`` over the conditional utilities that are not missing, with
``F = avg`` or ``min``; ``U(d_i)`` when all of them are missing (and at rank 1).

A ``UtilityTable`` holds the estimates of every topic: the topic's documents (every document that appears in its
judgments, as a candidate or as a top) sorted by docno descending -- so that "first maximum" is the tie rule of
the greedy ideal, larger docno first (spec 6.5, 10) -- with ``U(d)`` per document and the conditional utilities
as a dense ``m x m`` block per topic (row = top document, column = candidate; NaN = missing). Documents that have
an estimate of their own utility (``U(d)`` or some ``U(d | x)``) form the pool of the greedy ideal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from evaluation.model import FloatArray, IntArray
from evaluation.preference.judgments import BoolArray, PreferenceJudgments
from evaluation.problems import OptionError
from evaluation.segments import expand_ranges

Aggregate = Literal["avg", "min"]
AGGREGATES: tuple[str, ...] = ("avg", "min")
#: which judgments estimate the utilities: all of them ("all", the pooled estimate of spec 6.6) or those of the
#: i-th user of each topic (1-based, order of first appearance: the per-profile estimate)
ProfileSelector = str | int


@dataclass(frozen=True, eq=False)
class UtilityTable:
    """Utility estimates of every topic (see the module docstring for the layout)."""

    topics: tuple[str, ...]
    doc_offsets: IntArray  # per topic, into docnos / unconditional / estimated
    docnos: np.ndarray  # S bytes; descending within each topic
    unconditional: FloatArray  # U(d); 0 when d has fewer than min_app pairwise appearances
    estimated: BoolArray  # d has U(d) or some U(d | x): the pool of the greedy ideal
    block_offsets: IntArray  # per topic, into conditional (topic t owns m_t * m_t entries)
    conditional: FloatArray  # block_t[x * m_t + d] = U(d | x); NaN = missing
    min_app: int = 1
    _memo: dict[object, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_topics(self) -> int:
        return len(self.topics)

    @cached_property
    def topic_index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.topics)}

    @cached_property
    def sizes(self) -> IntArray:
        """Documents per topic (m_t)."""
        return np.diff(self.doc_offsets)

    @cached_property
    def pool_sizes(self) -> IntArray:
        """Documents with a utility estimate per topic (the length of the greedy ideal ranking)."""
        running = np.concatenate(([0], np.cumsum(self.estimated, dtype=np.int64)))
        return running[self.doc_offsets[1:]] - running[self.doc_offsets[:-1]]

    def documents(self, topic: str) -> list[str]:
        """The documents of a topic (docno descending)."""
        t = self.topic_index.get(topic)
        if t is None:
            return []
        lo, hi = int(self.doc_offsets[t]), int(self.doc_offsets[t + 1])
        return [d.decode("utf-8", "replace") for d in self.docnos[lo:hi].tolist()]

    def locate(self, t: int, docnos: np.ndarray) -> IntArray:
        """Topic-local index of each docno (``S`` array) in topic ``t`` (-1: no estimate at all)."""
        lo, hi = int(self.doc_offsets[t]), int(self.doc_offsets[t + 1])
        ascending = self.docnos[lo:hi][::-1]
        if ascending.size == 0 or docnos.size == 0:
            return np.full(docnos.size, -1, dtype=np.int64)
        pos = np.searchsorted(ascending, docnos)
        clipped = np.minimum(pos, ascending.size - 1)
        found = ascending[clipped] == docnos
        return np.where(found, (hi - lo - 1) - clipped, -1).astype(np.int64)

    def utility(self, topic: str, docno: str) -> float:
        """U(d) (0 without an estimate)."""
        t = self.topic_index.get(topic)
        if t is None:
            return 0.0
        d = int(self.locate(t, np.array([docno.encode()]))[0])
        return 0.0 if d < 0 else float(self.unconditional[self.doc_offsets[t] + d])

    def conditional_utility(self, topic: str, docno: str, top: str) -> float | None:
        """U(d | top), or None when it is missing."""
        t = self.topic_index.get(topic)
        if t is None:
            return None
        d, x = self.locate(t, np.array([docno.encode(), top.encode()])).tolist()
        if d < 0 or x < 0:
            return None
        m = int(self.sizes[t])
        value = float(self.conditional[self.block_offsets[t] + x * m + d])
        return None if np.isnan(value) else value

    def memo(self, key: object, make: Any) -> Any:
        """Cache for values derived from this table (greedy ideals)."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]


def table_from_counts(
    topics: Sequence[str],
    doc_offsets: IntArray,
    docnos: np.ndarray,
    pair_wins: npt.ArrayLike,
    pair_apps: npt.ArrayLike,
    cond_wins: npt.ArrayLike,
    cond_apps: npt.ArrayLike,
    min_app: int = 1,
) -> UtilityTable:
    """A table from win and appearance counts laid out as ``UtilityTable`` lays out utilities (documents sorted
    by docno descending within each topic; conditional counts in dense per-topic blocks, row = top)."""
    if min_app < 1:
        raise OptionError("min_app must be at least 1")
    offsets = np.asarray(doc_offsets, dtype=np.int64)
    pw, pa = np.asarray(pair_wins, dtype=np.float64), np.asarray(pair_apps, dtype=np.float64)
    cw, ca = np.asarray(cond_wins, dtype=np.float64), np.asarray(cond_apps, dtype=np.float64)
    unconditional = np.zeros(pw.size)
    enough = pa >= min_app
    np.divide(pw, pa, out=unconditional, where=enough)
    conditional = np.full(cw.size, np.nan)
    present = ca >= min_app
    np.divide(cw, ca, out=conditional, where=present)
    sizes = np.diff(offsets)
    block_offsets = np.concatenate(([0], np.cumsum(sizes * sizes))).astype(np.int64)
    # a document has a conditional estimate if some entry of its column (as candidate) is present
    has_conditional = np.zeros(pw.size, dtype=bool)
    for t, m in enumerate(sizes.tolist()):
        if m:
            block = present[block_offsets[t] : block_offsets[t + 1]].reshape(m, m)
            has_conditional[offsets[t] : offsets[t + 1]] = block.any(axis=0)
    return UtilityTable(tuple(topics), offsets, docnos, unconditional, enough | has_conditional, block_offsets,
                        conditional, min_app)


def estimate_utilities(
    judgments: PreferenceJudgments,
    *,
    profile: ProfileSelector = "all",
    users: Sequence[str] | None = None,
    min_app: int = 1,
) -> UtilityTable:
    """Utility estimates from judgments: all of them (``profile="all"``, spec 6.6's pooled estimate), or those of
    the i-th user of each topic (``profile=i``), or of the named ``users``."""
    keep = np.ones(len(judgments), dtype=bool)
    if profile != "all":
        if isinstance(profile, bool) or not isinstance(profile, int) or profile < 1:
            raise OptionError(f"profile must be 'all' or a positive integer, not {profile!r}")
        keep &= judgments.user_rank() == profile
    if users is not None:
        chosen = set(users)
        wanted = np.array([u in chosen for u in judgments.users] + [False], dtype=bool)
        keep &= wanted[judgments.user]
    j = judgments.take(keep) if not keep.all() else judgments
    n_docs = max(1, judgments.docnos.size)
    # documents of each topic: every (topic, doc) met as a candidate or a top, docno descending within a topic
    cond = j.conditional
    topic_all = np.concatenate((j.topic, j.topic, j.topic[cond]))
    doc_all = np.concatenate((j.left, j.right, j.top[cond]))
    keys = np.unique(topic_all * n_docs + (n_docs - 1 - doc_all))
    doc_topic = keys // n_docs
    doc_offsets = np.searchsorted(doc_topic, np.arange(len(judgments.topics) + 1)).astype(np.int64)
    docnos = judgments.docnos[n_docs - 1 - keys % n_docs] if keys.size else np.zeros(0, dtype="S1")

    def global_index(doc: IntArray, topic: IntArray) -> IntArray:
        return np.searchsorted(keys, topic * n_docs + (n_docs - 1 - doc)).astype(np.int64)

    n = keys.size
    pair = ~cond
    win, lose = global_index(j.winner[pair], j.topic[pair]), global_index(j.loser[pair], j.topic[pair])
    pair_wins = np.bincount(win, minlength=n)
    pair_apps = pair_wins + np.bincount(lose, minlength=n)
    sizes = np.diff(doc_offsets)
    block_offsets = np.concatenate(([0], np.cumsum(sizes * sizes))).astype(np.int64)
    t = j.topic[cond]
    base, first, m = block_offsets[t], doc_offsets[t], sizes[t]
    x = global_index(j.top[cond], t) - first
    win_c = base + x * m + (global_index(j.winner[cond], t) - first)
    lose_c = base + x * m + (global_index(j.loser[cond], t) - first)
    total = int(block_offsets[-1])
    cond_wins = np.bincount(win_c, minlength=total)
    cond_apps = cond_wins + np.bincount(lose_c, minlength=total)
    return table_from_counts(judgments.topics, doc_offsets, docnos, pair_wins, pair_apps, cond_wins, cond_apps,
                             min_app)


def rank_utilities(
    table: UtilityTable,
    table_topic: IntArray,
    offsets: IntArray,
    local: IntArray,
    aggregate: str,
) -> FloatArray:
    """``U(d_i | d_1 .. d_{i-1})`` of every position of several rankings at once (spec 6.3).

    Rankings are segments of ``local`` (``offsets``); ranking ``r`` is scored with topic ``table_topic[r]`` of
    the table (-1: a topic without estimates, every utility 0); ``local`` holds each document's topic-local index
    in the table (-1: no estimate -- utility 0, and it conditions nothing). Every earlier estimated document of the
    same ranking is paired with each estimated document (pairs listed by position, earlier ones first, so sums run
    in rank order as the greedy ideal's do).
    """
    if aggregate not in AGGREGATES:
        raise OptionError(f"F must be one of {', '.join(AGGREGATES)}, not {aggregate!r}")
    out = np.zeros(local.size)
    seg = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    topic = table_topic[seg] if seg.size else seg
    known = np.flatnonzero((local >= 0) & (topic >= 0))
    if known.size == 0:
        return out
    k_topic = topic[known]
    k_local = local[known]
    out[known] = table.unconditional[table.doc_offsets[k_topic] + k_local]
    # pairs (later i, earlier j) among the known positions of the same ranking
    k_seg = seg[known]
    seg_start = np.searchsorted(k_seg, k_seg, side="left")  # first known position of each ranking
    idx = np.arange(known.size)
    n_earlier = idx - seg_start
    later = np.repeat(idx, n_earlier)
    earlier = expand_ranges(seg_start, idx)
    if later.size == 0:
        return out
    m = table.sizes[k_topic[later]]
    values = table.conditional[table.block_offsets[k_topic[later]] + k_local[earlier] * m + k_local[later]]
    present = ~np.isnan(values)
    counts = np.bincount(later[present], minlength=known.size)
    has = counts > 0
    if aggregate == "avg":
        sums = np.bincount(later[present], weights=values[present], minlength=known.size)
        conditional = np.zeros(known.size)
        np.divide(sums, counts, out=conditional, where=has)
    else:
        conditional = np.full(known.size, np.inf)
        np.minimum.at(conditional, later[present], values[present])
    out[known[has]] = conditional[has]
    return out


def table_from_estimates(
    estimates: Mapping[str, tuple[Sequence[str], npt.ArrayLike, npt.ArrayLike]],
    *,
    estimated: Mapping[str, Sequence[bool]] | None = None,
) -> UtilityTable:
    """A table from given utilities: ``{topic: (docnos, U, C)}`` with ``U[d]`` the utility of ``docnos[d]`` and
    ``C[x][d] = U(d | x)`` (NaN = missing). Every document is in the ideal's pool unless ``estimated`` says
    otherwise. (For utilities estimated elsewhere, and for tests.)"""
    topics = list(estimates)
    names: list[bytes] = []
    unconditional: list[float] = []
    pool: list[bool] = []
    blocks: list[FloatArray] = []
    sizes: list[int] = []
    for topic in topics:
        docs, u, c = estimates[topic]
        order = sorted(range(len(docs)), key=lambda i: docs[i].encode(), reverse=True)
        utilities = np.asarray(u, dtype=np.float64)
        matrix = np.asarray(c, dtype=np.float64).reshape(len(docs), len(docs))
        flags = list(estimated[topic]) if estimated is not None and topic in estimated else [True] * len(docs)
        names += [docs[i].encode() for i in order]
        unconditional += utilities[order].tolist()
        pool += [bool(flags[i]) for i in order]
        blocks.append(matrix[np.ix_(order, order)].ravel())
        sizes.append(len(docs))
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    block_offsets = np.concatenate(([0], np.cumsum(np.square(sizes)))).astype(np.int64)
    return UtilityTable(tuple(topics), offsets, np.array(names, dtype=bytes) if names else np.zeros(0, "S1"),
                        np.array(unconditional), np.array(pool, dtype=bool), block_offsets,
                        np.concatenate(blocks) if blocks else np.zeros(0))
