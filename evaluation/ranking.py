"""Ranking policies: how a run's rows become an ordered list per topic (spec 1.2).

- ``trec`` (default): score descending, ties broken by docno descending byte-wise (C ``strcmp``), rank column
  ignored -- exactly trec_eval's and gdeval's order and ndeval's with ``-traditional``.
- ``rank``: the rank column ascending (ndeval's default); equal ranks keep file order.
- ``file``: the order of lines in the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

import numpy as np

from evaluation.enums import StrEnum
from evaluation.formats.keys import descending_within_groups, order_within_groups
from evaluation.formats.lexer import words_of
from evaluation.model import FloatArray, IntArray, Run
from evaluation.problems import OptionError
from evaluation.segments import expand_ranges


class TiePolicy(StrEnum):
    """How tied scores are ordered (the module's docstring says each); ``TiePolicy(text)`` validates a request."""

    TREC = "trec"
    RANK = "rank"
    FILE = "file"

    @classmethod
    def _missing_(cls, value: object) -> NoReturn:
        raise OptionError(f"unknown ties policy {value!r}; choose one of {', '.join(TIE_POLICIES)}")


#: the policies' names, as plain strings (argparse and marshmallow choices)
TIE_POLICIES: tuple[str, ...] = tuple(p.value for p in TiePolicy)


@dataclass(frozen=True, eq=False)
class Ranking:
    """A run ordered by a policy: ``order`` lists run rows topic by topic (topics in ``run.topics`` order),
    each topic's rows best first; ``offsets`` delimit the topics."""

    run: Run
    policy: str
    order: IntArray
    offsets: IntArray
    in_file_order: bool = False  # ``order`` is 0, 1, 2 ...: rows gathered by it are the rows as they are


def rank_run(run: Run, policy: str = "trec") -> Ranking:
    """Order a run's rows per topic by the given tie policy."""
    in_file_order = False
    if policy == "trec":
        order, in_file_order = _trec_order(run)
    elif policy == "rank":
        order = np.lexsort((run.rank, run.topic))
    elif policy == "file":
        order = np.argsort(run.topic, kind="stable")
    else:
        raise OptionError(f"unknown ranking policy {policy!r}; choose one of {', '.join(TIE_POLICIES)}")
    counts = np.bincount(run.topic, minlength=len(run.topics))
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return Ranking(run, policy, order.astype(np.int64, copy=False), offsets, in_file_order)


def _trec_order(run: Run) -> tuple[IntArray, bool]:
    """Score descending, then docno descending byte-wise; only rows with tied scores pay for docno sorting.

    Files written in ranked order (every topic in one block, scores not increasing) need no sort: ties are
    settled where they stand and the blocks taken in topic order, in one pass over the rows. Also says whether
    the order is the file's own (ranked, no ties, topics in order).
    """
    topic, score = run.topic, run.score
    n = topic.size
    if n < 2:
        return np.argsort(topic, kind="stable"), False
    ranked, blocks = _ranked_blocks(topic, score)
    if not ranked:
        order = _by_score(topic, score)
        topic, score = topic[order], score[order]
        _settle_ties(run, order, (score[1:] == score[:-1]) & (topic[1:] == topic[:-1]))
        return order, False
    tied = (score[1:] == score[:-1]) & (topic[1:] == topic[:-1])
    if blocks is None:
        order = np.arange(n, dtype=np.int64)
        return order, not _settle_ties(run, order, tied)
    order = blocks.order()
    if tied.any():  # settle them in file order, then move each settled row to where its place went
        at, settled = _settled(run, np.arange(n, dtype=np.int64), tied)
        order[blocks.positions(at)] = settled
    return order, False


_SIGN = np.uint64(63)
_LOW63 = np.uint64((1 << 63) - 1)


def _by_score(topic: IntArray, score: FloatArray) -> IntArray:
    """``np.lexsort((-score, topic))`` -- topic ascending, score descending, file order on equal scores -- as
    one sort of packed integer keys: each score's bits mapped so that ascending integers are descending
    scores (-0.0 counted as 0.0), refined only where the packed bits tie (several times faster)."""
    if np.isnan(score).any():
        return np.lexsort((-score, topic))
    bits = (score + 0.0).view(np.uint64)  # + 0.0 turns -0.0 into 0.0
    flip = bits >> _SIGN  # 1 for negative scores
    flip -= np.uint64(1)  # all ones for the others
    flip >>= np.uint64(1)
    flip ^= bits  # positive: low 63 bits inverted; negative: as they are
    return order_within_groups(topic, flip[:, None])


def _settle_ties(run: Run, order: IntArray, tied: np.ndarray) -> bool:
    """Reorder (in place) each run of ``order`` entries tied with their neighbours by docno descending; False
    when there was no tie."""
    if not tied.any():
        return False
    at, settled = _settled(run, order, tied)
    order[at] = settled
    return True


def _settled(run: Run, order: IntArray, tied: np.ndarray) -> tuple[IntArray, IntArray]:
    """The positions of ``order`` in a run of entries tied with their neighbours, and their rows reordered by docno
    descending within each run."""
    n = order.size
    after_tie = np.zeros(n, dtype=bool)  # tied to the previous row
    after_tie[1:] = tied
    in_tie = after_tie.copy()
    in_tie[:-1] |= tied
    at = np.flatnonzero(in_tie)
    group = np.cumsum(~after_tie[at]) - 1  # dense number of each tied row's group
    rows = order[at]
    return at, rows[descending_within_groups(group, words_of(run.docno[rows]))]


@dataclass(frozen=True)
class _Blocks:
    """A file's blocks of rows of one topic and where each goes when they are taken in topic order: the block
    starting at file row ``starts[i]`` (``lengths[i]`` rows) goes i-th, to position ``moved[i]``."""

    bounds: IntArray  # every block's first file row, then the number of rows
    pick: IntArray  # file blocks in topic order
    moved: IntArray

    def order(self) -> IntArray:
        """The file rows in topic order (each block's rows are consecutive)."""
        return expand_ranges(self.bounds[self.pick], self.bounds[self.pick + 1])

    def positions(self, rows: IntArray) -> IntArray:
        """Where the given file rows go in ``order()``."""
        block = np.searchsorted(self.bounds, rows, side="right") - 1
        rank = np.empty(self.pick.size, dtype=np.int64)
        rank[self.pick] = np.arange(self.pick.size, dtype=np.int64)
        placed: IntArray = self.moved[rank[block]] + (rows - self.bounds[block])
        return placed


def _ranked_blocks(topic: IntArray, score: FloatArray) -> tuple[bool, _Blocks | None]:
    """Whether the file is in ranked order up to ties -- each topic's rows contiguous, scores not increasing
    -- and, if so, how to take its blocks in topic order (None: they already are)."""
    change = topic[1:] != topic[:-1]
    ordered = score[1:] <= score[:-1]  # False for NaN: such files take the general path
    if not bool((ordered | change).all()):
        return False, None
    heads = np.flatnonzero(change) + 1
    if heads.size == 0:
        return True, None
    block_topic = topic[np.concatenate(([0], heads))]
    if bool((block_topic[1:] > block_topic[:-1]).all()):
        return True, None
    pick = np.argsort(block_topic, kind="stable")
    if bool((block_topic[pick][1:] == block_topic[pick][:-1]).any()):
        return False, None  # a topic split over several blocks
    bounds = np.concatenate(([0], heads, [topic.size])).astype(np.int64)
    lengths = np.diff(bounds)[pick]
    moved = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    return True, _Blocks(bounds, pick.astype(np.int64), moved)
